package dev.forkset.it.harness;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.StartMiniClusterOption;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.util.JVMClusterUtil;

/**
 * A real HBase minicluster in the test JVM: HDFS with one DataNode, ZooKeeper, one master and
 * one RegionServer, running the classes of the custom hbase-server jar (it is first on the test
 * class path; {@link #start} checks that). RegionServers can be stopped, killed and restarted.
 */
public final class MiniHBase implements AutoCloseable {
  private final HBaseTestingUtility util;

  private MiniHBase(HBaseTestingUtility util) {
    this.util = util;
  }

  /** Starts a cluster with {@code conf} layered over the test defaults. */
  public static MiniHBase start(Configuration conf) throws Exception {
    assertCustomServerJar();
    HBaseTestingUtility util = new HBaseTestingUtility(conf);
    util.getConfiguration().setBoolean("hbase.unsafe.stream.capability.enforce", false);
    util.startMiniCluster(StartMiniClusterOption.builder().numMasters(1).numRegionServers(1)
        .numDataNodes(1).build());
    return new MiniHBase(util);
  }

  /** Fails unless HRegion comes from a jar built by the patch pipeline. */
  public static String assertCustomServerJar() {
    java.nio.file.Path jar =
        ForksetJars.codeSource(org.apache.hadoop.hbase.regionserver.HRegion.class);
    String patches = ForksetJars.manifestAttribute(jar, ForksetJars.PATCHES);
    if (patches == null) {
      throw new AssertionError("HRegion was loaded from " + jar + ", which is not a custom"
          + " hbase-server jar (no " + ForksetJars.PATCHES + " in its manifest). The custom jar"
          + " must come before the stock one on the class path.");
    }
    return patches;
  }

  public HBaseTestingUtility util() {
    return util;
  }

  public Configuration conf() {
    return util.getConfiguration();
  }

  public MiniHBaseCluster cluster() {
    return util.getMiniHBaseCluster();
  }

  /** The first live RegionServer. */
  public HRegionServer regionServer() {
    for (JVMClusterUtil.RegionServerThread t : cluster().getLiveRegionServerThreads()) {
      return t.getRegionServer();
    }
    throw new IllegalStateException("No live RegionServer");
  }

  private int liveIndex() {
    java.util.List<JVMClusterUtil.RegionServerThread> all = cluster().getRegionServerThreads();
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).isAlive() && !all.get(i).getRegionServer().isStopped()) {
        return i;
      }
    }
    throw new IllegalStateException("No live RegionServer");
  }

  /** Stops the RegionServer cleanly (regions closed, caches shut down) and waits for it. */
  public void stopRegionServer() {
    int i = liveIndex();
    cluster().stopRegionServer(i);
    cluster().waitOnRegionServer(i);
  }

  /** Aborts the RegionServer as a crash would: no clean region close, no cache shutdown. */
  public void killRegionServer() throws Exception {
    int i = liveIndex();
    HRegionServer rs = cluster().getRegionServer(i);
    rs.abort("forkset IT: simulated crash");
    cluster().waitOnRegionServer(i);
  }

  /** Starts a new RegionServer with the cluster's configuration and waits until it is online. */
  public HRegionServer startRegionServer() throws Exception {
    JVMClusterUtil.RegionServerThread t = cluster().startRegionServer();
    t.waitForServerOnline();
    util.waitUntilNoRegionsInTransition(120_000);
    return t.getRegionServer();
  }

  /** Attributes of the RegionServer metrics bean Hadoop:service=HBase,name=RegionServer,sub=... */
  public Map<String, Object> regionServerMetrics(String sub) throws Exception {
    String name = "Hadoop:service=HBase,name=RegionServer,sub=" + sub;
    long deadline = System.currentTimeMillis() + 30_000;
    Map<String, Object> attrs = jmxAttributes(name);
    // A metrics source registers its bean first with only its tag.* attributes; the metrics
    // appear with the first snapshot, shortly after the server starts.
    while (!hasMetrics(attrs) && System.currentTimeMillis() < deadline) {
      Thread.sleep(250);
      attrs = jmxAttributes(name);
    }
    if (!hasMetrics(attrs)) {
      throw new AssertionError("No metrics in MBean " + name + " (" + attrs.keySet()
          + "). Registered HBase beans: "
          + ManagementFactory.getPlatformMBeanServer().queryNames(new ObjectName("Hadoop:*"), null));
    }
    return attrs;
  }

  private static boolean hasMetrics(Map<String, Object> attrs) {
    for (String key : attrs.keySet()) {
      if (!key.startsWith("tag.")) {
        return true;
      }
    }
    return false;
  }

  /** All attributes of the platform MBeans matching {@code pattern}, keyed "attribute". */
  public static Map<String, Object> jmxAttributes(String pattern) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    Map<String, Object> out = new TreeMap<>();
    Set<ObjectName> names = server.queryNames(new ObjectName(pattern), null);
    for (ObjectName name : names) {
      for (MBeanAttributeInfo info : server.getMBeanInfo(name).getAttributes()) {
        try {
          out.put(info.getName(), server.getAttribute(name, info.getName()));
        } catch (Exception | LinkageError e) {
          // attributes that cannot be read (unsupported operations) are left out
        }
      }
    }
    return out;
  }

  @Override
  public void close() throws Exception {
    util.shutdownMiniCluster();
  }
}
