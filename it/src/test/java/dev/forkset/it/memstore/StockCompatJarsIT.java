package dev.forkset.it.memstore;

import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.it.harness.MiniHBase;
import dev.forkset.it.harness.RegionServerProcess;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.master.ServerListener;
import org.apache.hadoop.hbase.master.ServerManager;
import org.junit.Test;

/**
 * An operator who replaces only hbase-server with the custom 2.6.4 jar and keeps the stock
 * hbase-hadoop-compat and hbase-hadoop2-compat jars gets a RegionServer that refuses to start,
 * saying which jars to deploy, before it reports for duty to the master: it never registers, so
 * the master never counts it, assigns nothing to it and has nothing to expire. (The refusal that
 * came when the RegionServer built its metrics, after registering, let the master add it and then
 * lose it.) A real RegionServer process, started as {@code hbase regionserver start}, joins a
 * minicluster in the test JVM.
 */
public class StockCompatJarsIT {
  private static final long EXIT_TIMEOUT_MS = 180_000;

  @Test
  public void customServerJarWithStockCompatJarsRefusesToStartBeforeRegistering()
      throws Exception {
    try (MiniHBase hbase = MiniHBase.start(HBaseConfiguration.create())) {
      ServerManager servers = hbase.cluster().getMaster().getServerManager();
      List<ServerName> registered = new CopyOnWriteArrayList<>();
      servers.registerListener(new ServerListener() {
        @Override
        public void serverAdded(ServerName sn) {
          registered.add(sn);
        }
      });
      try (RegionServerProcess rs =
          RegionServerProcess.builder("stock-compat-jars", hbase).stockCompatJars().launch()) {
        int status = rs.awaitExit(EXIT_TIMEOUT_MS);
        String log = rs.logText();
        assertNotEquals(rs.logTail(60), 0, status);
        assertTrue(rs.logTail(60), log.contains("Deploy hbase-hadoop-compat and"
            + " hbase-hadoop2-compat of the same fork revision beside hbase-server"));
        // It names the jars it found: the stock compat jar of this release
        String version = System.getProperty("forkset.hbase.version");
        assertTrue(rs.logTail(60), log.contains("hbase-hadoop-compat-" + version + ".jar"));
        assertTrue(rs.logTail(60), log.contains("hbase-hadoop2-compat-" + version + ".jar"));
        for (ServerName sn : registered) {
          assertNotEquals("the master registered " + sn + "\n" + rs.logTail(60), rs.port(),
              sn.getPort());
        }
        for (ServerName sn : servers.getOnlineServersList()) {
          assertNotEquals("online: " + sn, rs.port(), sn.getPort());
        }
      }
    }
  }
}
