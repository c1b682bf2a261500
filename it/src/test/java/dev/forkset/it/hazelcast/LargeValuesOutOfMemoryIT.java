package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.HazelcastLine;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import dev.forkset.it.harness.MemberProcess;
import org.junit.Test;

/**
 * Values larger than half a G1 region, or than a ZGC small page, under a USED_HEAP_SIZE limit:
 * one member, -Xmx256m, map limit 150 MB, 5 MB values (2 MB + 1 KB on ZGC). On G1 with 4 MB
 * regions every value is humongous and takes 8 MB: the stock member dies of OutOfMemoryError at
 * about the 29th put while it believes it holds about 145 MB. The custom member (custom jar +
 * module) counts 8 MB per value, evicts, and lives. Same run, same flags, stock first and custom
 * second. The ZGC variants run JDK 17 ZGC and the generational ZGC of the Temurin 25 JDK. The G1
 * case runs again on the oldest Hazelcast line (5.3.8) on JDK 11 and on JDK 8, the JVMs that line
 * runs on in the field, with the same module jar.
 */
public class LargeValuesOutOfMemoryIT {
  static final int LIMIT_MB = 150;
  static final int VALUE_BYTES = 5 << 20;
  /**
   * On ZGC a 5 MB value takes 6 MB (rounded to the 2 MB granule), which 256 MB survive; the ZGC
   * variant of the scenario uses values just over one granule, which take two (4 MB).
   */
  static final int ZGC_VALUE_BYTES = (2 << 20) + 1024;
  /** Just over one 4 MB G1 region: the value occupies two. */
  static final int JDK8_VALUE_BYTES = (4 << 20) + 1024;
  static final int PUTS = 100;
  /**
   * Headroom the docs state (docs/hazelcast-eviction.md, "The headroom rule"): beyond the limit
   * and the empty member's heap, eight times the largest entry's footprint, for the copies of
   * in-flight values in network, operation and pooled serialization buffers.
   */
  static final long HEADROOM_ENTRIES = 8;

  @Test
  public void g1FourMegabyteRegions_customEvictsWhereStockRunsOutOfMemory() throws Exception {
    scenario("large-values-g1-4m", HazelcastLine.DEFAULT, null, VALUE_BYTES, 8L << 20,
        "-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m");
  }

  @Test
  public void zgcJdk17_customEvictsWhereStockRunsOutOfMemory() throws Exception {
    scenario("large-values-zgc-17", HazelcastLine.DEFAULT, null, ZGC_VALUE_BYTES, 4L << 20,
        "-XX:+UseZGC");
  }

  @Test
  public void generationalZgcJdk25_customEvictsWhereStockRunsOutOfMemory() throws Exception {
    scenario("large-values-zgc-gen-25", HazelcastLine.DEFAULT, Jdks.jdk25(), ZGC_VALUE_BYTES,
        4L << 20, "-XX:+UseZGC");
  }

  /**
   * The oldest line (5.3.8, its stock jar vs its custom jar with the same module jar the default
   * line uses) on JDK 11, G1 with 4 MB regions.
   */
  @Test
  public void g1FourMegabyteRegions_oldestLineOnJdk11() throws Exception {
    scenario("large-values-g1-4m-oldest-jdk11", HazelcastLine.OLDEST, Jdks.jdk11(), VALUE_BYTES,
        8L << 20, "-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m");
  }

  /**
   * The same on JDK 8, the oldest JVM 5.3.8 runs on: the custom 5.3.8 jar and the module jar must
   * both be Java 8 bytecode (a class of either at a newer level stops the member with
   * UnsupportedClassVersionError when it loads). Values of 4 MB + 1 KB, just over one region, so
   * each occupies two (8 MB) where stock counts 4 MB: with 5 MB values (29 live, 232 MB of regions)
   * the stock JDK 8 member only thrashes in full GCs (measured here: 72 full GCs in 100 puts)
   * instead of running out of memory, as JDK 8's smaller empty member leaves room for them.
   */
  @Test
  public void g1FourMegabyteRegions_oldestLineOnJdk8() throws Exception {
    scenario("large-values-g1-4m-oldest-jdk8", HazelcastLine.OLDEST, Jdks.jdk8(),
        JDK8_VALUE_BYTES, 8L << 20, "-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m");
  }

  private void scenario(String name, HazelcastLine line, Jdk jdk, int valueBytes,
      long valueFootprint, String... gc) throws Exception {
    byte[] value = new byte[valueBytes];
    // Stock.
    int stockPuts = 0;
    boolean stockDied;
    try (HazelcastCluster stock = builder(name + "-stock", Flavor.STOCK, line, jdk, gc).start()) {
      IMap<Integer, byte[]> map = stock.client().getMap("large-values");
      MemberProcess m = stock.member(0);
      m.assertRuns(line, jdk);
      try {
        for (int i = 0; i < PUTS && m.isAlive(); i++) {
          map.put(i, value);
          stockPuts++;
        }
      } catch (RuntimeException memberGone) {
        // the member died under the client
      }
      // A member that runs out of memory exits (-XX:+ExitOnOutOfMemoryError), possibly after
      // the client saw its last put or lost its connection.
      stockDied = EvictionWaits.awaitExit(m);
      System.out.println("[" + name + "] stock: " + (stockDied ? "died" + (m.sawOutOfMemoryError()
          ? " of OutOfMemoryError" : "") + " after " + stockPuts + " completed puts"
          : "alive after " + stockPuts + " puts"));
    }
    // Custom.
    try (HazelcastCluster custom =
        builder(name + "-custom", Flavor.CUSTOM, line, jdk, gc).start()) {
      MemberProcess m = custom.member(0);
      m.assertRuns(line, jdk);
      EvictionProbe probe = new EvictionProbe(m);
      long baseline = m.heapUsedAfterFullGc();
      IMap<Integer, byte[]> map = custom.client().getMap("large-values");
      for (int i = 0; i < PUTS; i++) {
        map.put(i, value);
      }
      custom.assertAllAlive();
      assertFalse(m.sawOutOfMemoryError());
      // The last put's pass runs after its response. Every value has the same footprint and a
      // pass evicts at least one entry before its time cap applies, so the map, within its
      // limit before each put, is within it again once the passes have run.
      EvictionWaits.drain(custom.client(), map);
      long cost = EvictionWaits.until("reported cost within the limit", () ->
          probe.mapCost("large-values"), c -> c <= (LIMIT_MB << 20));
      long heap = m.heapUsedAfterFullGc();
      long evictions = probe.evictions();
      long allowed = (LIMIT_MB << 20) + HEADROOM_ENTRIES * valueFootprint;
      System.out.println("[" + name + "] custom: alive after " + PUTS + " puts, " + map.size()
          + " entries, reported cost " + EvictionMaps.mb(cost) + " MB, heap after full GC "
          + EvictionMaps.mb(heap) + " MB (empty member " + EvictionMaps.mb(baseline)
          + " MB), evictions " + evictions + ", model: " + probe.model());
      assertTrue("evictions happen", evictions > 0);
      assertTrue("heap after GC minus the empty member's (" + EvictionMaps.mb(heap - baseline)
          + " MB) stays under limit + headroom (" + EvictionMaps.mb(allowed) + " MB)",
          heap - baseline <= allowed);
    }
    assertTrue("[" + name + "] the stock member must die of OutOfMemoryError (it held " + stockPuts
        + " puts)", stockDied);
  }

  private static HazelcastCluster.Builder builder(String name, Flavor flavor, HazelcastLine line,
      Jdk jdk, String... gc) {
    return HazelcastCluster.builder(name).members(1).flavor(flavor).line(line).jdk(jdk)
        .heap("256m").jvmArgs(gc).config(EvictionMaps.usedHeapMap("large-values", LIMIT_MB, 0, ""));
  }
}
