package dev.forkset.hbase.memstore;

import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.CoprocessorEnvironment;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;
import org.apache.hadoop.hbase.coprocessor.RegionServerCoprocessor;
import org.apache.hadoop.hbase.regionserver.FlushLockHoldListener;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.Region;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exports how long flushes hold the region update lock, and WARNs naming the region when a hold
 * passes {@link MemstoreFixConfig#WARN_THRESHOLD_KEY}. Needs a server jar with the
 * FlushLockHoldListener patch (hbase 2.6.4 fork). List this class in both
 * {@code hbase.coprocessor.regionserver.classes} (checks the configuration when the RegionServer
 * starts: a bad threshold aborts the start with a message naming the key) and
 * {@code hbase.coprocessor.region.classes} (listens on every region it is loaded for).
 */
public class FlushLockHoldCoprocessor
    implements RegionServerCoprocessor, RegionCoprocessor, FlushLockHoldListener {
  private static final Logger LOG = LoggerFactory.getLogger(FlushLockHoldCoprocessor.class);

  private long warnThresholdNanos;
  private FlushLockHoldMetrics metrics;
  private HRegion region;

  @Override
  public void start(CoprocessorEnvironment env) {
    Configuration conf = env.getConfiguration();
    warnThresholdNanos = MemstoreFixConfig.warnThresholdNanos(conf);
    metrics = FlushLockHoldMetrics.get();
    if (env instanceof RegionCoprocessorEnvironment) {
      Region r = ((RegionCoprocessorEnvironment) env).getRegion();
      if (!(r instanceof HRegion)) {
        throw new IllegalStateException("Region " + r + " is a " + r.getClass().getName()
            + ", not an HRegion; " + getClass().getName() + " cannot listen on it");
      }
      region = (HRegion) r;
      region.addFlushLockHoldListener(this);
    } else {
      LOG.info("Flush update-lock hold metrics on, WARN above {} ms ({})",
          nanosToMillis(warnThresholdNanos), MemstoreFixConfig.WARN_THRESHOLD_KEY);
    }
  }

  @Override
  public void stop(CoprocessorEnvironment env) {
    if (region != null) {
      region.removeFlushLockHoldListener(this);
      region = null;
    }
  }

  @Override
  public void updatesLockReleased(RegionInfo regionInfo, long heldNanos, long cellsSnapshotted,
      long dataSizeSnapshotted) {
    boolean over = heldNanos > warnThresholdNanos;
    metrics.record(heldNanos, cellsSnapshotted, over);
    if (over) {
      LOG.warn("Flush of region {} held the update lock for {} ms while snapshotting {} cells"
          + " ({} bytes); writes to the region waited meanwhile. Threshold {} ms ({}).",
          regionInfo.getRegionNameAsString(), nanosToMillis(heldNanos), cellsSnapshotted,
          dataSizeSnapshotted, nanosToMillis(warnThresholdNanos),
          MemstoreFixConfig.WARN_THRESHOLD_KEY);
    }
  }

  private static String nanosToMillis(long nanos) {
    return String.format(java.util.Locale.ROOT, "%.3f", nanos / (double) TimeUnit.MILLISECONDS.toNanos(1));
  }
}
