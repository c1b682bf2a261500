package dev.forkset.it.hbase21;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.forkset.childjvm.Jdks;
import dev.forkset.hbase21.Hbase21Cluster;
import dev.forkset.it.harness.RegionServerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.Test;

/**
 * An operator who replaces only hbase-server with the custom 2.1.2 jar and keeps the stock
 * hbase-hadoop-compat and hbase-hadoop2-compat jars: the servers refuse to start, saying which
 * jars to deploy, before any RegionServer reports for duty. A real HBase 2.1.2 minicluster on
 * JDK 8 (HDFS, ZooKeeper, a master and a RegionServer) in a JVM of its own
 * ({@link Hbase21Cluster}) whose class path has the custom hbase-server and the stock compat jars:
 * the master, a RegionServer itself in 2.1, fails in its constructor, so the cluster never comes
 * up and no server is registered.
 */
public class StockCompatJarsHbase21IT {
  @Test
  public void customServerJarWithStockCompatJarsRefusesToStart() throws Exception {
    Path dir = Paths.get(System.getProperty("forkset.hbase21.dir", "target/hbase21"),
        StockCompatJarsHbase21IT.class.getSimpleName());
    // An earlier run's logs must not be read
    RegionServerProcess.deleteTree(dir);
    String refusal = null;
    try (Hbase21Cluster cluster =
        Hbase21Cluster.builder(Jdks.jdk8(), dir).heap("1g").customWithStockCompatJars().start()) {
      fail("the cluster started: " + cluster.info());
    } catch (IOException e) {
      refusal = e.getMessage();
    }
    String out = read(dir.resolve("cluster-custom_with_stock_compat.out"));
    Path logFile = dir.resolve("cluster-custom_with_stock_compat.log");
    // The absence of a registration below means something only if this is the log of the
    // cluster that started a master and saw it fail
    assertTrue("no cluster log " + logFile, Files.isRegularFile(logFile));
    String log = read(logFile);
    assertTrue("empty cluster log " + logFile, !log.isEmpty());
    assertTrue(log, log.contains("Starting up minicluster with 1 master(s)"));
    assertTrue(log, log.contains("Failed construction of Master"));
    String all = refusal + "\n" + out + "\n" + log;
    assertTrue(refusal, all.contains("Deploy hbase-hadoop-compat and hbase-hadoop2-compat of"
        + " the same fork revision beside hbase-server"));
    // It names the stock compat jars it found
    assertTrue(refusal, all.contains("hbase-hadoop-compat-2.1.2.jar"));
    assertTrue(refusal, all.contains("hbase-hadoop2-compat-2.1.2.jar"));
    // Refused before any server reported for duty: the master registered none
    assertFalse(log, log.contains("Registering regionserver="));
  }

  private static String read(Path file) throws IOException {
    return Files.exists(file)
        ? new String(Files.readAllBytes(file), StandardCharsets.UTF_8) : "";
  }
}
