package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.HazelcastLine;
import dev.forkset.it.harness.MemberProcess;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import org.junit.Test;

/**
 * Chunked stored copies (issue 21) on a member JVM: seed scenario 1 (one member, -Xmx256m, G1
 * with 4 MB regions, USED_HEAP_SIZE 150 MB, 5 MB values) and values just over half a region
 * (2 MB + 1 KB). Same run, same flags, the custom member twice: first with
 * {@code hazelcast.map.eviction.chunked.values: off} (each value one humongous array, counted as
 * the whole regions it takes: 8 MB and 4 MB), then with the default (stored in 512 KB pieces,
 * counted at about their size). The chunking member holds at least 1.5 times the entries and
 * neither dies of OutOfMemoryError. The 5 MB case runs again on the oldest line (5.3.8, the same
 * module jar) on JDK 11. Both sizes run again on the generational ZGC of JDK 25, where a value
 * is stored in 64 KB pieces: values just over one 2 MB granule held at least 1.5 times as many;
 * 5 MB values, which one array rounds to 6 MB (not 8 as on G1), at least 1.1 times.
 */
public class ChunkedLargeValuesIT {
  static final int LIMIT_MB = 150;
  static final int PUTS = 100;
  static final String[] G1_4M = {"-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m"};
  /** On JDK 21 and later ZGC is generational; on JDK 25 it is the only ZGC. */
  static final String[] ZGC = {"-XX:+UseZGC"};

  @Test
  public void fiveMegabyteValues_onFourMegabyteRegions_chunkedHoldsAtLeastHalfAgainAsMany()
      throws Exception {
    compare("chunked-5m-g1-4m", HazelcastLine.DEFAULT, null, G1_4M, 5 << 20, 1.5);
  }

  @Test
  public void fiveMegabyteValues_oldestLineOnJdk11() throws Exception {
    compare("chunked-5m-g1-4m-oldest-jdk11", HazelcastLine.OLDEST, Jdks.jdk11(), G1_4M,
        5 << 20, 1.5);
  }

  @Test
  public void valuesJustOverHalfARegion_chunkedHoldsAtLeastHalfAgainAsMany() throws Exception {
    compare("chunked-2m1k-g1-4m", HazelcastLine.DEFAULT, null, G1_4M, (2 << 20) + 1024, 1.5);
  }

  /**
   * Generational ZGC (Temurin 25), values just over one 2 MB granule: as one array each takes
   * a large page of two granules (4 MB), in 64 KB pieces about its size.
   */
  @Test
  public void generationalZgcJdk25_valuesJustOverOneGranule_chunkedHoldsAtLeastHalfAgainAsMany()
      throws Exception {
    compare("chunked-2m1k-zgc-gen-25", HazelcastLine.DEFAULT, Jdks.jdk25(), ZGC,
        (2 << 20) + 1024, 1.5);
  }

  /**
   * Generational ZGC (Temurin 25), 5 MB values: as one array each takes three granules (6 MB),
   * in pieces about 5.2 MB, so the gain is smaller than on G1's 4 MB regions (8 MB per value).
   */
  @Test
  public void generationalZgcJdk25_fiveMegabyteValues_chunkedHoldsMore() throws Exception {
    compare("chunked-5m-zgc-gen-25", HazelcastLine.DEFAULT, Jdks.jdk25(), ZGC, 5 << 20, 1.1);
  }

  private void compare(String name, HazelcastLine line, Jdk jdk, String[] gc, int valueBytes,
      double minRatio) throws Exception {
    int whole = held(name + "-off", line, jdk, gc, valueBytes, "off");
    int chunked = held(name + "-auto", line, jdk, gc, valueBytes, "auto");
    System.out.println("[" + name + "] entries held: one array " + whole + ", chunked " + chunked
        + " (" + String.format("%.2f", chunked / (double) whole) + " x)");
    assertTrue("[" + name + "] the chunking member holds " + chunked + " entries, the one-array"
        + " member " + whole + ": expected at least " + minRatio + " x",
        chunked >= whole * minRatio);
  }

  /** Puts {@link #PUTS} values into a fresh member and returns the entries it holds after them. */
  static int held(String name, HazelcastLine line, Jdk jdk, String[] gc, int valueBytes,
      String chunkedValues) throws Exception {
    byte[] value = new byte[valueBytes];
    try (HazelcastCluster cluster = HazelcastCluster.builder(name).members(1)
        .flavor(Flavor.CUSTOM).line(line).jdk(jdk).heap("256m").jvmArgs(gc)
        .config(EvictionMaps.usedHeapMap("large-values", LIMIT_MB, 0,
            "  hazelcast.map.eviction.chunked.values: " + chunkedValues + "\n"))
        .start()) {
      MemberProcess m = cluster.member(0);
      m.assertRuns(line, jdk);
      EvictionProbe probe = new EvictionProbe(m);
      long baseline = m.heapUsedAfterFullGc();
      IMap<Integer, byte[]> map = cluster.client().getMap("large-values");
      for (int i = 0; i < PUTS; i++) {
        map.put(i, value);
      }
      cluster.assertAllAlive();
      assertFalse(name + ": OutOfMemoryError", m.sawOutOfMemoryError());
      // The last put's pass runs after its response: wait for it, then for the map within its
      // limit, before counting.
      EvictionWaits.drain(cluster.client(), map);
      long cost = EvictionWaits.until("reported cost within the limit", () ->
          probe.mapCost("large-values"), c -> c <= (LIMIT_MB << 20));
      int size = map.size();
      long heap = m.heapUsedAfterFullGc();
      // Every value read back whole, chunked or not: the first still held and the last.
      byte[] last = map.get(PUTS - 1);
      assertTrue(name + ": the last value is held", last != null && last.length == valueBytes);
      assertFalse(name + ": OutOfMemoryError", m.sawOutOfMemoryError());
      System.out.println("[" + name + "] chunked.values=" + chunkedValues + ": " + size
          + " entries, reported cost " + EvictionMaps.mb(cost) + " MB, heap after full GC "
          + EvictionMaps.mb(heap) + " MB (empty member " + EvictionMaps.mb(baseline)
          + " MB), evictions " + probe.evictions() + ", model: " + probe.model());
      return size;
    }
  }
}
