package dev.forkset.it.memstore;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.forkset.hbase.memstore.MemstoreFixConfig;
import dev.forkset.it.harness.MiniHBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.metrics.BaseSourceImpl;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.regionserver.MetricsRegionServer;
import org.apache.hadoop.hbase.regionserver.MetricsRegionServerSource;
import org.apache.hadoop.hbase.DoNotRetryIOException;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.JVMClusterUtil;
import org.junit.Test;

/**
 * The flush updates-lock metrics and their WARN threshold on a real minicluster (custom 2.6.4
 * jars: hbase-server, hbase-hadoop-compat, hbase-hadoop2-compat): the master refuses to alter a
 * table to a threshold that is not valid (TableDescriptorChecker, as for HBase's other
 * ConfigKeys) and the table stays as it was; every flush, empty or not, adds a wait and a hold to
 * the RegionServer histograms, which the RegionServer source exports beside FlushTime.
 */
public class FlushUpdatesLockIT {
  private static final byte[] CF = Bytes.toBytes("f");
  private static final byte[] Q = Bytes.toBytes("q");
  private static final String KEY = MemstoreFixConfig.FLUSH_UPDATES_LOCK_WARN_MS.name;
  private static final String WAIT =
      MetricsRegionServerSource.FLUSH_UPDATES_LOCK_WAIT_TIME_MICROS;
  private static final String HOLD =
      MetricsRegionServerSource.FLUSH_UPDATES_LOCK_HOLD_TIME_MICROS;

  @Test
  public void badTableValueIsRefusedByTheMasterAndEveryFlushIsMeasured() throws Exception {
    try (MiniHBase hbase = MiniHBase.start(HBaseConfiguration.create())) {
      TableName name = TableName.valueOf("bad_threshold");
      hbase.util().createTable(name, CF).close();
      try (Admin admin = hbase.util().getConnection().getAdmin();
          Table table = hbase.util().getConnection().getTable(name)) {
        table.put(new Put(Bytes.toBytes("before")).addColumn(CF, Q, Bytes.toBytes(1)));

        for (String bad : new String[] {"0", "abc"}) {
          TableDescriptor altered = TableDescriptorBuilder.newBuilder(admin.getDescriptor(name))
              .setValue(KEY, bad).build();
          try {
            admin.modifyTable(altered);
            fail("the master accepted " + KEY + "=" + bad);
          } catch (DoNotRetryIOException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(KEY));
          }
          assertEquals(null, admin.getDescriptor(name).getValue(KEY));
        }
        admin.modifyTable(TableDescriptorBuilder.newBuilder(admin.getDescriptor(name))
            .setValue(KEY, "50").build());
        hbase.util().waitTableAvailable(name, 60_000);
        assertEquals("50", admin.getDescriptor(name).getValue(KEY));
        assertTrue(table.exists(new Get(Bytes.toBytes("before"))));

        // Every flush adds one wait and one hold: one with cells, one of an empty memstore (it
        // takes the lock too, and writes its marker under it).
        HRegionServer rs = hostOf(hbase, admin.getRegions(name).get(0));
        MetricsRegionServer metrics = rs.getMetrics();
        long waits = count(metrics, WAIT);
        long holds = count(metrics, HOLD);
        table.put(new Put(Bytes.toBytes("after")).addColumn(CF, Q, Bytes.toBytes(2)));
        HRegion hosted = rs.getRegions(name).get(0);
        assertEquals(50, hosted.getReadOnlyConfiguration().getLong(KEY, 0));
        assertTrue(hosted.flush(true).isFlushSucceeded());
        assertEquals(HRegion.FlushResult.Result.CANNOT_FLUSH_MEMSTORE_EMPTY,
            hosted.flush(true).getResult());
        assertEquals(waits + 2, count(metrics, WAIT));
        assertEquals(holds + 2, count(metrics, HOLD));
        assertTrue(table.exists(new Get(Bytes.toBytes("after"))));

        // JMX shows a snapshot the metrics system takes every period: keep flushing until one
        // with the histograms is exported, whenever that comes.
        Map<String, Object> server = null;
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(90);
        while (!(server != null && server.containsKey("FlushUpdatesLockHoldTimeMicros_num_ops"))
            && System.nanoTime() < deadline) {
          hosted.flush(true);
          Thread.sleep(500);
          server = hbase.regionServerMetrics("Server*");
        }
        for (String histogram : new String[] {"FlushTime", "FlushUpdatesLockWaitTimeMicros",
            "FlushUpdatesLockHoldTimeMicros"}) {
          assertTrue(histogram + " not exported: " + server.keySet(),
              server.containsKey(histogram + "_num_ops")
                  && server.containsKey(histogram + "_99th_percentile"));
        }
      }
    }
  }

  private static long count(MetricsRegionServer metrics, String histogram) {
    return ((BaseSourceImpl) metrics.getMetricsSource()).getMetricsRegistry()
        .getHistogram(histogram).getCount();
  }

  private static List<HRegionServer> liveServers(MiniHBase hbase) {
    List<HRegionServer> out = new ArrayList<>();
    for (JVMClusterUtil.RegionServerThread t : hbase.cluster().getLiveRegionServerThreads()) {
      out.add(t.getRegionServer());
    }
    return out;
  }

  private static HRegionServer hostOf(MiniHBase hbase, RegionInfo region) {
    for (HRegionServer rs : liveServers(hbase)) {
      if (rs.getRegion(region.getEncodedName()) != null) {
        return rs;
      }
    }
    throw new AssertionError(region.getEncodedName() + " is on no RegionServer");
  }
}
