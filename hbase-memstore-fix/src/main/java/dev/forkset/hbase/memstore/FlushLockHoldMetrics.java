package dev.forkset.hbase.memstore;

import java.util.concurrent.TimeUnit;
import org.apache.hadoop.hbase.metrics.Counter;
import org.apache.hadoop.hbase.metrics.Histogram;
import org.apache.hadoop.hbase.metrics.MetricRegistries;
import org.apache.hadoop.hbase.metrics.MetricRegistry;
import org.apache.hadoop.hbase.metrics.MetricRegistryInfo;

/**
 * The RegionServer metrics of flush update-lock holds, in one registry that HBase exports over
 * JMX as {@code Hadoop:service=HBase,name=RegionServer,sub=FlushUpdateLock} (and to every
 * metrics2 sink). Histograms appear as {@code <name>_num_ops}, {@code _min}, {@code _max},
 * {@code _mean}, {@code _median} and {@code _NNth_percentile}; HBase resets their percentiles
 * at each metrics period, the counters only grow.
 */
public final class FlushLockHoldMetrics {
  /** JMX {@code sub=} of the bean. */
  public static final String JMX_SUB = "FlushUpdateLock";
  /** Histogram: how long each flush held the region update lock, in microseconds. */
  public static final String HELD_US = "flushUpdatesLockHeldUs";
  /** Histogram: cells snapshotted under the lock by each flush. */
  public static final String CELLS = "flushSnapshotCells";
  /** Counter: sum of all hold times, in microseconds (exact; the histogram's mean is not). */
  public static final String HELD_TOTAL_US = "flushUpdatesLockHeldTotalUs";
  /** Counter: sum of all cells snapshotted under the lock. */
  public static final String CELLS_TOTAL = "flushSnapshotCellsTotal";
  /** Counter: flushes that held the lock longer than the WARN threshold. */
  public static final String OVER_THRESHOLD = "flushUpdatesLockHeldOverThreshold";

  /** The registry's identity; equal infos share one registry in the JVM. */
  static final MetricRegistryInfo INFO = new MetricRegistryInfo(JMX_SUB,
      "How long flushes hold the region update lock (hbase-memstore-fix)",
      "RegionServer,sub=" + JMX_SUB, "regionserver", false);

  private final Histogram heldUs;
  private final Histogram cells;
  private final Counter heldTotalUs;
  private final Counter cellsTotal;
  private final Counter overThreshold;

  private FlushLockHoldMetrics(MetricRegistry registry) {
    this.heldUs = registry.histogram(HELD_US);
    this.cells = registry.histogram(CELLS);
    this.heldTotalUs = registry.counter(HELD_TOTAL_US);
    this.cellsTotal = registry.counter(CELLS_TOTAL);
    this.overThreshold = registry.counter(OVER_THRESHOLD);
  }

  /** The metrics of this JVM's RegionServer, created on first use. */
  public static FlushLockHoldMetrics get() {
    return new FlushLockHoldMetrics(MetricRegistries.global().create(INFO));
  }

  /** Records one hold. */
  void record(long heldNanos, long cellsSnapshotted, boolean overThreshold) {
    long us = TimeUnit.NANOSECONDS.toMicros(heldNanos);
    heldUs.update(us);
    cells.update(cellsSnapshotted);
    heldTotalUs.increment(us);
    cellsTotal.increment(cellsSnapshotted);
    if (overThreshold) {
      this.overThreshold.increment();
    }
  }

  /** Flushes recorded so far. */
  public long holds() {
    return heldUs.getCount();
  }

  /** Sum of the recorded hold times, in microseconds. */
  public long heldTotalMicros() {
    return heldTotalUs.getCount();
  }

  /** Flushes recorded over the threshold. */
  public long overThreshold() {
    return overThreshold.getCount();
  }
}
