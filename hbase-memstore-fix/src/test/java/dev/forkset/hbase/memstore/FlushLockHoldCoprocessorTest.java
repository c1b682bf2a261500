package dev.forkset.hbase.memstore;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionInfoBuilder;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.RegionCoprocessorHost;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.After;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TestName;

/**
 * The coprocessor on a real local HRegion of the custom 2.6.4 jar, loaded the way a RegionServer
 * loads it (hbase.coprocessor.region.classes).
 */
public class FlushLockHoldCoprocessorTest {
  private static final byte[] FAMILY = Bytes.toBytes("f");

  @Rule
  public TestName name = new TestName();

  private final HBaseTestingUtility util = new HBaseTestingUtility();
  private HRegion region;
  private Configuration conf;

  private RegionCoprocessorEnvironment environment() {
    RegionCoprocessorEnvironment env =
        region.getCoprocessorHost().findCoprocessorEnvironment(MemstoreFixConfig.COPROCESSOR);
    assertNotNull("coprocessor not loaded", env);
    return env;
  }

  private HRegion open(String threshold) throws IOException {
    Configuration conf = new Configuration(util.getConfiguration());
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    conf.set(MemstoreFixConfig.REGION_COPROCESSORS_KEY, MemstoreFixConfig.COPROCESSOR);
    if (threshold != null) {
      conf.set(MemstoreFixConfig.WARN_THRESHOLD_KEY, threshold);
    }
    TableDescriptor td = TableDescriptorBuilder.newBuilder(TableName.valueOf(name.getMethodName()))
        .setColumnFamily(ColumnFamilyDescriptorBuilder.of(FAMILY)).build();
    RegionInfo ri = RegionInfoBuilder.newBuilder(td.getTableName()).build();
    region = HBaseTestingUtility.createRegionAndWAL(ri,
        util.getDataTestDir(name.getMethodName()), conf, td);
    // A region outside a RegionServer loads no coprocessors; load them as a RegionServer would.
    region.setCoprocessorHost(new RegionCoprocessorHost(region, null, conf));
    this.conf = conf;
    return region;
  }

  private void putAndFlush(int rows) throws IOException {
    for (int i = 0; i < rows; i++) {
      region.put(new Put(Bytes.toBytes(i)).addColumn(FAMILY, Bytes.toBytes("q"), Bytes.toBytes(i)));
    }
    assertTrue(region.flush(true).isFlushSucceeded());
  }

  @After
  public void tearDown() throws IOException {
    if (region != null) {
      HBaseTestingUtility.closeRegionAndWAL(region);
    }
    util.cleanupTestDir();
  }

  @Test
  public void eachFlushAddsOneHoldToTheRegionServerMetrics() throws IOException {
    FlushLockHoldMetrics metrics = FlushLockHoldMetrics.get();
    long before = metrics.holds();
    long overBefore = metrics.overThreshold();
    open(null);

    putAndFlush(1000);
    putAndFlush(10);

    assertEquals(before + 2, metrics.holds());
    assertEquals("default threshold 100 ms not passed", overBefore, metrics.overThreshold());
  }

  @Test
  public void holdOverTheThresholdIsCounted() throws IOException {
    FlushLockHoldMetrics metrics = FlushLockHoldMetrics.get();
    long overBefore = metrics.overThreshold();
    open("1ns");

    putAndFlush(100);

    assertEquals(overBefore + 1, metrics.overThreshold());
  }

  @Test
  public void stoppedCoprocessorNoLongerReports() throws IOException {
    FlushLockHoldMetrics metrics = FlushLockHoldMetrics.get();
    open(null);
    putAndFlush(10);
    long afterFirst = metrics.holds();

    region.getCoprocessorHost().shutdown(environment());
    putAndFlush(10);

    assertEquals(afterFirst, metrics.holds());
  }

  @Test
  public void badThresholdFailsTheCoprocessorStartNamingTheKey() throws IOException {
    open(null);
    RegionCoprocessorEnvironment env = environment();
    conf.set(MemstoreFixConfig.WARN_THRESHOLD_KEY, "-1s");
    try {
      new FlushLockHoldCoprocessor().start(env);
      fail("coprocessor started with a negative threshold");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(MemstoreFixConfig.WARN_THRESHOLD_KEY));
    }
  }
}
