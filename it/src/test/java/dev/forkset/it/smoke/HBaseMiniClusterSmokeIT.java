package dev.forkset.it.smoke;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.it.harness.ForksetJars;
import dev.forkset.it.harness.MiniHBase;
import java.util.Map;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.Test;

/** The minicluster runs on the custom hbase-server jar and its RegionServer can be cycled. */
public class HBaseMiniClusterSmokeIT {
  private static final TableName TABLE = TableName.valueOf("smoke");
  private static final byte[] CF = Bytes.toBytes("f");
  private static final byte[] Q = Bytes.toBytes("q");

  @Test
  public void minicluster_runsCustomJar_andSurvivesStopKillRestart() throws Exception {
    String patches = MiniHBase.assertCustomServerJar();
    System.out.println("hbase-server jar: " + ForksetJars.codeSource(HRegion.class));
    System.out.println("applied patches: " + patches);
    assertEquals(ForksetJars.jar("forkset.hbase.custom.jar").toRealPath(),
        ForksetJars.codeSource(HRegion.class).toRealPath());
    assertTrue("manifest names the upstream release", ForksetJars.manifestAttribute(
        ForksetJars.codeSource(HRegion.class), ForksetJars.UPSTREAM)
        .endsWith(":" + System.getProperty("forkset.hbase.version")));

    try (MiniHBase hbase = MiniHBase.start(HBaseConfiguration.create())) {
      try (Table t = hbase.util().createTable(TABLE, CF)) {
        for (int i = 0; i < 100; i++) {
          t.put(new Put(Bytes.toBytes("row" + i)).addColumn(CF, Q, Bytes.toBytes("v" + i)));
        }
      }
      hbase.util().flush(TABLE);
      Map<String, Object> server = hbase.regionServerMetrics("Server");
      assertTrue("RegionServer metrics readable over JMX: " + server.keySet(),
          server.containsKey("regionCount"));

      HRegionServer first = hbase.regionServer();
      hbase.stopRegionServer();
      HRegionServer second = hbase.startRegionServer();
      assertNotEquals(first.getServerName(), second.getServerName());
      assertRows(hbase);

      hbase.killRegionServer();
      assertTrue(second.isAborted());
      hbase.startRegionServer();
      assertRows(hbase);
    }
  }

  private static void assertRows(MiniHBase hbase) throws Exception {
    try (Table t = hbase.util().getConnection().getTable(TABLE)) {
      for (int i = 0; i < 100; i += 7) {
        assertArrayEquals(Bytes.toBytes("v" + i),
            t.get(new Get(Bytes.toBytes("row" + i))).getValue(CF, Q));
      }
    }
  }
}
