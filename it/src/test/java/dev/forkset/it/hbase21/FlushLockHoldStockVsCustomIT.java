package dev.forkset.it.hbase21;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.hbase21.Hbase21Cluster;
import dev.forkset.hbase21.ServerJar;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The seed's defect and its fix on a real HBase 2.1.2 minicluster on JDK 8, stock and custom jar
 * in the same run: how long a flush holds the region's update lock (every write to the region
 * waits that long) at 10^4 and at 5 x 10^5 cells in the memstore. On the stock jar the snapshot walks
 * the memstore's skip list under the lock ({@code ConcurrentSkipListMap.size()} is O(cells) on
 * JDK 8), so the hold grows with the cells; on the custom jar it does not.
 *
 * <p>Each jar runs in its own JDK 8 JVM (HDFS, ZooKeeper, master, RegionServer), one after the
 * other. The hold is timed the same way on both, by a probe in the cluster JVM around the write
 * lock of the region's update lock (stock 2.1.2 has no metric for it). The cells go straight
 * into the region (batches of 10,000, SKIP_WAL, random key order) and each measured flush is
 * preceded by a full GC, so neither the load nor a collection of its garbage lands in the hold.
 * The figure per size is the smallest hold of a few flushes: noise (a descheduled thread, a GC)
 * only adds to a hold, while an O(cells) walk is in every one of them.
 */
public class FlushLockHoldStockVsCustomIT {
  private static final int SMALL = 10_000;
  private static final int LARGE = 500_000;
  private static final int SMALL_FLUSHES = 5;
  private static final int LARGE_FLUSHES = 4;
  private static final int WARMUP_FLUSHES = 3;

  private static Run stock;
  private static Run custom;

  /** What one cluster JVM measured. */
  static final class Run {
    final ServerJar jar;
    Map<String, String> info;
    String memstore;
    /** The RegionServer's flushUpdatesLock* histograms (custom jar only), "sub:attribute". */
    Map<String, String> metrics;
    final List<Long> small = new ArrayList<>();
    final List<Long> large = new ArrayList<>();

    Run(ServerJar jar) {
      this.jar = jar;
    }

    long smallHold() {
      return median(small);
    }

    long largeHold() {
      return median(large);
    }

    /**
     * The median, not the lowest: the stock walk's cost per cell varies 70-fold with where the
     * skip list's nodes lie in the heap (a 5x10^5-cell flush held the lock 3 ms once, 220 ms in
     * the same run), so the lowest large flush can be the one whose nodes lay in order.
     */
    private static long median(List<Long> holds) {
      List<Long> sorted = new ArrayList<>(holds);
      Collections.sort(sorted);
      int n = sorted.size();
      return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    double ratio() {
      return (double) largeHold() / smallHold();
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%s (java %s, %s, patches %s): hold at 10^4 cells %s us"
          + " (median %d), at 5x10^5 cells %s us (median %d), ratio %.2f", jar,
          info.get("java.version"), memstore, info.get("patches"), micros(small),
          smallHold() / 1000, micros(large), largeHold() / 1000, ratio());
    }

    private static List<Long> micros(List<Long> nanos) {
      List<Long> us = new ArrayList<>();
      for (long n : nanos) {
        us.add(n / 1000);
      }
      return us;
    }
  }

  @BeforeClass
  public static void measureBothJars() throws Exception {
    Jdk jdk8 = Jdks.jdk8();
    stock = measure(jdk8, ServerJar.STOCK);
    custom = measure(jdk8, ServerJar.CUSTOM);
    System.out.println(stock);
    System.out.println(custom);
  }

  private static Run measure(Jdk jdk8, ServerJar jar) throws Exception {
    Path dir = Paths.get(System.getProperty("forkset.hbase21.dir", "target/hbase21"),
        FlushLockHoldStockVsCustomIT.class.getSimpleName(), jar.name().toLowerCase(Locale.ROOT));
    Hbase21Cluster.Builder b = Hbase21Cluster.builder(jdk8, dir).heap("2g")
        // The large memstores must stay whole until the test flushes them.
        .site("hbase.hregion.memstore.flush.size", Long.toString(1L << 30))
        .site("hbase.hregion.memstore.block.multiplier", "8");
    if (jar == ServerJar.CUSTOM) {
      // No memstore setting: the custom jar counts cells for every memstore type by default.
      b.custom();
    }
    Run run = new Run(jar);
    try (Hbase21Cluster cluster = b.start()) {
      run.info = cluster.info();
      cluster.createTable("warmup", "default");
      long row = 0;
      for (int i = 0; i < WARMUP_FLUSHES; i++) {
        cluster.load("warmup", SMALL, row);
        row += SMALL;
        cluster.flush("warmup");
      }
      run.memstore = cluster.createTable("cells_1e4", "default").get("memstore");
      cluster.createTable("cells_5e5", "default");
      // Small and large flushes alternate, so whatever else runs on the machine slows both
      // sizes alike and the medians compare the flushes themselves. (The small ones all before
      // the large ones once measured holds tripled by a busy machine on the small side only.)
      for (int i = 0; i < Math.max(SMALL_FLUSHES, LARGE_FLUSHES); i++) {
        if (i < SMALL_FLUSHES) {
          run.small.add(loadAndFlush(cluster, "cells_1e4", SMALL, row, (i + 1L) * SMALL));
          row += SMALL;
        }
        if (i < LARGE_FLUSHES) {
          run.large.add(loadAndFlush(cluster, "cells_5e5", LARGE, row, (i + 1L) * LARGE));
          row += LARGE;
        }
      }
      // JMX serves the metrics system's last snapshot, refreshed once a period: wait for one
      // taken after the last flush (stock has no such histogram, one read tells).
      int flushes = WARMUP_FLUSHES + SMALL_FLUSHES + LARGE_FLUSHES;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      run.metrics = cluster.jmx("Hadoop:service=HBase,name=RegionServer,sub=Server");
      while (jar == ServerJar.CUSTOM
          && ops(run.metrics, "flushUpdatesLockHoldTimeMicros") < flushes
          && System.nanoTime() < deadline) {
        Thread.sleep(500);
        run.metrics = cluster.jmx("Hadoop:service=HBase,name=RegionServer,sub=Server");
      }
    }
    return run;
  }

  /** Loads, collects garbage, flushes; checks every cell reached a store file; the hold in ns. */
  private static long loadAndFlush(Hbase21Cluster cluster, String table, int cells, long first,
      long expectedEntries) throws Exception {
    cluster.load(table, cells, first);
    cluster.gc();
    Hbase21Cluster.Flush f = cluster.flush(table);
    assertEquals("FLUSHED_NO_COMPACTION_NEEDED", f.result.replace("FLUSHED_COMPACTION_NEEDED",
        "FLUSHED_NO_COMPACTION_NEEDED"));
    assertEquals(table + ": cells in store files after the flush", expectedEntries,
        f.storeFileEntries);
    return f.holdNanos;
  }

  @Test
  public void clusterJvmsRunOnJdk8WithTheirJar() {
    for (Run r : new Run[] {stock, custom}) {
      assertTrue(r.toString(), r.info.get("java.version").startsWith("1.8."));
    }
    assertEquals("none", stock.info.get("patches"));
    assertTrue(stock.info.get("hregion.jar"), stock.info.get("hregion.jar")
        .endsWith("hbase-server-2.1.2.jar"));
    assertTrue(custom.info.get("patches"), !custom.info.get("patches").equals("none"));
    assertTrue(custom.info.get("hregion.jar"), custom.info.get("hregion.jar")
        .matches(".*hbase-server-2\\.1\\.2-fork\\.\\d+\\.jar"));
  }

  /** The custom jar's own metric counted the flushes (one wait and one hold each). */
  @Test
  public void customJarReportsEveryFlushInItsRegionServerMetrics() {
    int flushes = WARMUP_FLUSHES + SMALL_FLUSHES + LARGE_FLUSHES;
    for (String h : new String[] {"flushUpdatesLockHoldTimeMicros",
        "flushUpdatesLockWaitTimeMicros"}) {
      assertTrue(h + " in " + custom.metrics, ops(custom.metrics, h) >= flushes);
      assertEquals(h + " on the stock jar", -1, ops(stock.metrics, h));
    }
  }

  /** _num_ops of a histogram (attribute names are matched ignoring case), -1 when absent. */
  private static long ops(Map<String, String> metrics, String histogram) {
    for (Map.Entry<String, String> e : metrics.entrySet()) {
      if (e.getKey().equalsIgnoreCase("Server:" + histogram + "_num_ops")) {
        return (long) Double.parseDouble(e.getValue());
      }
    }
    return -1;
  }

  @Test
  public void stockFlushHoldsTheUpdateLockLongerWithMoreCells() {
    // Medians measured at 5x10^5 cells on 2026-11-26, beside other cluster tests: 16x to 80x
    // (1.3-7.2 ms at 10^4 cells, 92-114 ms at 5x10^5; single flushes 3 to 228 ms: the walk's
    // speed depends on where the skip list's nodes lie in the heap). The bound only has to be
    // clearly above what the custom jar must stay under (3x), to show the probe sees the walk.
    assertTrue(stock.toString(), stock.ratio() >= 4);
  }

  @Test
  public void customFlushHoldIsFlatFrom10kTo500kCells() {
    // Measured here: 0.8x to 1.1x (0.3-0.5 ms at both sizes, also beside other tests).
    assertTrue(custom.toString(), custom.ratio() <= 3);
  }
}
