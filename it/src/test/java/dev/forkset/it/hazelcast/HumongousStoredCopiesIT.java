package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.MemberProcess;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import org.junit.Test;

/**
 * Seed scenario 3 with chunked stored copies (issue 21): one 100 MB value after a map full of
 * 10 KB values, then 16 MB values after 1 MB ones, on one member with G1 4 MB regions and a
 * USED_HEAP_SIZE limit of 150 MB (scenario 1's settings). The custom member runs twice in the
 * same test, {@code hazelcast.map.eviction.chunked.values: off} (each stored value one array, as
 * stock stores it) and then the default. Each time the member survives and holds the large
 * values, and the number of humongous regions G1 reports after a full GC (the member's GC log,
 * {@code gc+heap}, "Humongous regions: before->after", in the test's member folder) counts the
 * stored copies: with chunking 0, without at least the regions of the large values it holds.
 * The large values are read back whole: the 100 MB one and the newest 16 MB one.
 *
 * <p>The heap is 448 MB, not scenario 1's 256 MB: the 100 MB value arrives as one array (a
 * client frame, {@code ClientMessageReader}) and the stored copy is made from it before the
 * put's eviction pass frees room, so while it is made the chunking member holds the full map
 * (150 MB), the stored copy (100 MB in pieces) and the frame (100 MB, 26 humongous regions),
 * besides the empty member (about 13 MB). Measured on 2026-11-27 in 64 MB steps: at 256 MB the one-array
 * member already dies of OutOfMemoryError at the 100 MB put (164 MB live, no room for the
 * frame); at 384 MB the one-array member passes and the chunking member dies of it (365 MB live
 * after the last full GC, 26 humongous regions: the frame); 448 MB is the smallest step at
 * which both pass. Since revision 9 (patch 0011) the chunking member reads the client's frame
 * into the pieces it stores, so it no longer holds the frame beside them: measured on 2026-11-28
 * with the chunking member alone, it dies at 256 MB and passes at 320 and 384 MB. The heap stays
 * at the step both members pass.
 */
public class HumongousStoredCopiesIT {
  static final int LIMIT_MB = 150;
  static final long LIMIT = (long) LIMIT_MB << 20;
  static final String HEAP = "448m";
  static final int REGION = 4 << 20;
  static final int SMALL = 10 * 1024;
  static final int HUNDRED_MB = 100 << 20;
  static final int ONE_MB = 1 << 20;
  static final int SIXTEEN_MB = 16 << 20;
  /** Puts of 10 KB: about 160 MB, more than the limit, so the map is full and evicting. */
  static final int SMALL_PUTS = 16_000;
  /** Puts of 1 MB: 160 MB. */
  static final int ONE_MB_PUTS = 160;
  /** Puts of 16 MB after them, with keys of their own. */
  static final int SIXTEEN_MB_PUTS = 12;
  static final int BIG_KEY = -1;
  static final int SIXTEEN_FROM = 1_000_000;

  @Test
  public void largeValuesAfterSmallOnes_chunkedStoredCopiesHoldNoHumongousRegion()
      throws Exception {
    Result off = run("humongous-off", "off");
    Result on = run("humongous-auto", "auto");
    System.out.println("[humongous-stored-copies] 100 MB after 10 KB: humongous regions after"
        + " full GC off " + off.humongousAfterHundred + ", chunked " + on.humongousAfterHundred
        + "; 16 MB after 1 MB: 16 MB values held off " + off.sixteenHeld + ", chunked "
        + on.sixteenHeld + ", humongous regions after full GC off " + off.humongousAfterSixteen
        + ", chunked " + on.humongousAfterSixteen);
    // One array per stored value: the 100 MB value (and its 16-byte array header and 8-byte
    // Data header) takes 26 whole regions; each 16 MB value 5.
    int hundredRegions = (HUNDRED_MB + 24 + REGION - 1) / REGION;
    int sixteenRegions = (SIXTEEN_MB + 24 + REGION - 1) / REGION;
    assertTrue("one array: the 100 MB value held as " + hundredRegions + " humongous regions, G1"
        + " reports " + off.humongousAfterHundred, off.humongousAfterHundred >= hundredRegions);
    assertTrue("one array: " + off.sixteenHeld + " 16 MB values held as " + sixteenRegions
        + " humongous regions each, G1 reports " + off.humongousAfterSixteen,
        off.humongousAfterSixteen >= off.sixteenHeld * sixteenRegions);
    assertEquals("chunked: no humongous region after a full GC with the 100 MB value held", 0,
        on.humongousAfterHundred);
    assertEquals("chunked: no humongous region after a full GC with " + on.sixteenHeld
        + " 16 MB values held", 0, on.humongousAfterSixteen);
    // Not asserted: that chunking holds more of the 16 MB values. They cost 20 MB each as one
    // array and 16 MB in pieces (7 and 9 fit in 150 MB), but the LRU pool keeps a varying number
    // of the 1 MB entries put in the same second (access times are whole seconds): 6-7 against
    // 7-8 were held in the runs here, 7 against 7 once. ChunkedLargeValuesIT compares capacity.
  }

  static final class Result {
    int humongousAfterHundred;
    int sixteenHeld;
    int humongousAfterSixteen;
  }

  static Result run(String name, String chunkedValues) throws Exception {
    Result r = new Result();
    try (HazelcastCluster cluster = HazelcastCluster.builder(name).members(1)
        .flavor(Flavor.CUSTOM).heap(HEAP)
        .jvmArgs("-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m", "-Xlog:gc+humongous=debug:file="
            + humongousLog(name).toAbsolutePath())
        .config(config(chunkedValues))
        .start()) {
      MemberProcess m = cluster.member(0);
      EvictionProbe probe = new EvictionProbe(m);
      GcLog gc = new GcLog(m);
      assertEquals(name + ": the empty member holds no humongous region", 0,
          gc.humongousAfterFullGc());

      // 100 MB after a map full of 10 KB values.
      IMap<Integer, byte[]> small = cluster.client().getMap("s3-small");
      byte[] tenKb = new byte[SMALL];
      Map<Integer, byte[]> batch = new HashMap<>();
      for (int i = 0; i < SMALL_PUTS; i++) {
        batch.put(i, tenKb);
        if (batch.size() == 500) {
          small.putAll(batch);
          batch.clear();
        }
      }
      small.putAll(batch);
      EvictionWaits.drain(cluster.client(), small);
      assertTrue(name + ": the map is full and evicting", probe.evictions() > 0);
      byte[] hundred = pattern(HUNDRED_MB, 7);
      small.set(BIG_KEY, hundred);
      EvictionWaits.drain(cluster.client(), small);
      long cost = EvictionWaits.until(name + ": the map within its limit after the 100 MB put",
          () -> probe.mapCost("s3-small"), c -> c <= LIMIT);
      cluster.assertAllAlive();
      assertTrue(name + ": the 100 MB value is held", small.containsKey(BIG_KEY));
      r.humongousAfterHundred = gc.humongousAfterFullGc();
      long entries = probe.mapEntries("s3-small");
      assertArrayEquals(name + ": the 100 MB value reads back whole", hundred,
          small.get(BIG_KEY));
      hundred = null;
      System.out.println("[" + name + "] 100 MB after " + SMALL_PUTS + " x 10 KB: "
          + entries + " entries, reported cost " + EvictionMaps.mb(cost)
          + " MB, humongous regions after full GC " + r.humongousAfterHundred);
      small.destroy();

      // 16 MB values after 1 MB ones.
      IMap<Integer, byte[]> large = cluster.client().getMap("s3-large");
      byte[] oneMb = new byte[ONE_MB];
      for (int i = 0; i < ONE_MB_PUTS; i++) {
        large.set(i, oneMb);
      }
      byte[][] sixteen = new byte[SIXTEEN_MB_PUTS][];
      for (int i = 0; i < SIXTEEN_MB_PUTS; i++) {
        sixteen[i] = pattern(SIXTEEN_MB, i);
        large.set(SIXTEEN_FROM + i, sixteen[i]);
      }
      EvictionWaits.drain(cluster.client(), large);
      long largeCost = EvictionWaits.until(name + ": the map within its limit after the 16 MB"
          + " puts", () -> probe.mapCost("s3-large"), c -> c <= LIMIT);
      cluster.assertAllAlive();
      r.humongousAfterSixteen = gc.humongousAfterFullGc();
      for (int i = 0; i < SIXTEEN_MB_PUTS; i++) {
        if (large.containsKey(SIXTEEN_FROM + i)) {
          r.sixteenHeld++;
        }
      }
      byte[] last = large.get(SIXTEEN_FROM + SIXTEEN_MB_PUTS - 1);
      assertNotNull(name + ": the last 16 MB value is held", last);
      assertArrayEquals(name + ": the last 16 MB value reads back whole",
          sixteen[SIXTEEN_MB_PUTS - 1], last);
      System.out.println("[" + name + "] " + SIXTEEN_MB_PUTS + " x 16 MB after " + ONE_MB_PUTS
          + " x 1 MB: " + r.sixteenHeld + " 16 MB values held, " + large.size()
          + " entries, reported cost " + EvictionMaps.mb(largeCost)
          + " MB, humongous regions after full GC " + r.humongousAfterSixteen + ", evictions "
          + probe.evictions() + ", model: " + probe.model());
      assertFalse(name + ": OutOfMemoryError", m.sawOutOfMemoryError());
      cluster.assertAllAlive();
    }
    return r;
  }

  /**
   * Two BINARY maps, LRU under USED_HEAP_SIZE {@value #LIMIT_MB} MB, no backups (one member):
   * one for each part, the first destroyed before the second is filled. Eviction passes run to
   * their end, so each part reads the map back within its limit with no write after it.
   */
  private static String config(String chunkedValues) {
    StringBuilder yaml = new StringBuilder("map:\n");
    for (String map : new String[] {"s3-small", "s3-large"}) {
      yaml.append("  ").append(map).append(":\n")
          .append("    in-memory-format: BINARY\n")
          .append("    backup-count: 0\n")
          .append("    eviction:\n")
          .append("      eviction-policy: LRU\n")
          .append("      max-size-policy: USED_HEAP_SIZE\n")
          .append("      size: ").append(LIMIT_MB).append("\n");
    }
    return yaml.append("properties:\n")
        .append("  hazelcast.partition.count: 271\n")
        .append("  hazelcast.map.eviction.chunked.values: ").append(chunkedValues).append("\n")
        // The in-flight refusal's static rule counts a value 3 x with no backups (arrival, a
        // forwarded packet's copy, the stored copy) and refuses above 50% of -Xmx: 100 MB needs
        // 600 MB by it. This scenario is about where the stored copies live, at the smallest heap
        // that takes the value in flight from a smart client (one frame, one stored copy).
        .append("  hazelcast.map.eviction.inflight.heap.percent: off\n")
        .append(EvictionWaits.UNCAPPED_PASSES).toString();
  }

  /** The file of the member's {@code gc+humongous=debug} log, beside its GC log. */
  private static Path humongousLog(String name) {
    return Paths.get(System.getProperty("forkset.members.dir", "target/members"), name,
        "member-1-custom-gc-humongous.log");
  }

  /** {@code size} bytes that differ by position and {@code seed}, so a wrong chunk shows. */
  private static byte[] pattern(int size, int seed) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (i * 31 + (i >>> 16) + seed);
    }
    return b;
  }
}
