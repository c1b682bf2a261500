package dev.forkset.memstore;

import static org.junit.Assert.assertTrue;

import dev.forkset.hbase21.ServerJar;
import java.util.List;
import java.util.Locale;
import org.junit.Test;

/**
 * {@code MemStore.snapshot()} time at 10^4 and 5 x 10^5 cells, stock 2.1.2 and the custom jar in
 * one JVM (each in its own class loader), on the JDK 8 this line runs on: with the custom jar the
 * time stays flat (at most 3 times the 10^4 time) for DefaultMemStore and CompactingMemStore
 * BASIC and EAGER; stock DefaultMemStore grows with the cells (JDK 8's
 * ConcurrentSkipListMap.size() walks them), which shows the bound can fail. The JMH benchmark
 * ({@code -Pbench}, hbase-memstore-fix) measures 10^4 to 10^6. Each time is the
 * lowest of a few single shots (a GC or a descheduled thread only ever adds time), taken after
 * warm-up rounds in the same class loader.
 */
public class TestSnapshotTimeFlat {
  private static final String PROBE = "org.apache.hadoop.hbase.regionserver.SnapshotTimeProbe";
  private static final int SMALL = 10_000;
  private static final int LARGE = 500_000;
  private static final double BOUND = 3.0;

  /** Warm-up rounds (not counted), then the two sizes interleaved. */
  private static final int[] ROUNDS =
      {SMALL, SMALL, SMALL, SMALL, LARGE, SMALL, LARGE, SMALL, LARGE, SMALL};
  private static final int WARMUP = 3;

  /** Returns the lowest time at the larger size over the lowest 10^4 time; prints both for the docs. */
  @SuppressWarnings("unchecked")
  private static double ratio(ServerJar jar, String policy) throws Exception {
    List<Long> nanos = (List<Long>) InEachJar.call(jar, PROBE, "time",
        new Class<?>[] {String.class, int[].class}, policy, ROUNDS);
    long small = Long.MAX_VALUE;
    long large = Long.MAX_VALUE;
    for (int i = WARMUP; i < ROUNDS.length; i++) {
      if (ROUNDS[i] == SMALL) {
        small = Math.min(small, nanos.get(i));
      } else {
        large = Math.min(large, nanos.get(i));
      }
    }
    double ratio = large / (double) small;
    System.out.println(String.format(Locale.ROOT,
        "snapshot() %s %s on Java %s: 10^4 cells %.3f ms, 5x10^5 cells %.3f ms, ratio %.2f"
            + " (all rounds, ns: %s)", jar, policy, System.getProperty("java.version"),
        small / 1e6, large / 1e6, ratio, nanos));
    return ratio;
  }

  private static void assertFlat(String policy) throws Exception {
    double ratio = ratio(ServerJar.CUSTOM, policy);
    assertTrue(policy + ": snapshot() at 5x10^5 cells took " + ratio + "x the time at 10^4",
        ratio <= BOUND);
  }

  @Test
  public void customDefaultMemStoreSnapshotTimeIsFlat() throws Exception {
    assertFlat("NONE");
  }

  @Test
  public void customBasicCompactingMemStoreSnapshotTimeIsFlat() throws Exception {
    assertFlat("BASIC");
  }

  @Test
  public void customEagerCompactingMemStoreSnapshotTimeIsFlat() throws Exception {
    assertFlat("EAGER");
  }

  @Test
  public void stockDefaultMemStoreSnapshotTimeGrowsWithTheCellsOnJdk8() throws Exception {
    double ratio = ratio(ServerJar.STOCK, "NONE");
    if ("1.8".equals(System.getProperty("java.specification.version"))) {
      assertTrue("stock snapshot() at 5x10^5 cells took only " + ratio + "x the time at 10^4",
          ratio > BOUND);
    }
  }
}
