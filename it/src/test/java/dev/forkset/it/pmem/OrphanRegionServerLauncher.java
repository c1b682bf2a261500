package dev.forkset.it.pmem;

import dev.forkset.it.harness.RegionServerProcess;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;

/**
 * Stands in for a test JVM that dies mid-test: launches one RegionServer process (pointed at a
 * ZooKeeper port nobody listens on, so it keeps trying to join), prints its pid once HBase's main runs, then waits to be
 * killed. Run by {@link RegionServerReapingIT}.
 */
public final class OrphanRegionServerLauncher {
  private OrphanRegionServerLauncher() {}

  public static void main(String[] args) throws Exception {
    int deadPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      deadPort = s.getLocalPort();
    }
    Configuration cluster = HBaseConfiguration.create();
    cluster.set("hbase.zookeeper.quorum", "127.0.0.1");
    cluster.setInt("hbase.zookeeper.property.clientPort", deadPort);
    RegionServerProcess rs =
        RegionServerProcess.builder("orphan-regionserver", cluster).heap("128m").launch();
    // Wait until the RegionServer JVM runs HBase's main (it then keeps retrying ZooKeeper).
    long deadline = System.currentTimeMillis() + 60_000;
    while (!rs.logText().contains("forkset-harness: hbase-server from")) {
      rs.assertAlive();
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("RegionServer JVM did not start\n" + rs.logTail(40));
      }
      Thread.sleep(100);
    }
    System.out.println("REGIONSERVER_PID=" + rs.pid());
    System.out.flush();
    Thread.sleep(600_000);
  }
}
