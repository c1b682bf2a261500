package dev.forkset.hbase21;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.net.URLClassLoader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.Test;

/** The class path a 2.1.2 JVM gets: exactly one hbase-server jar, the right one first. */
public class Hbase21ClassPathTest {

  @Test
  public void forJar_stock_startsWithTheStockJarAndHoldsNoOtherServerJar() throws Exception {
    List<Path> stock = Hbase21ClassPath.load().forJar(ServerJar.STOCK);
    assertEquals("hbase-server-2.1.2.jar", stock.get(0).getFileName().toString());
    assertEquals(1, serverJars(stock));
    assertTrue("no HBaseTestingUtility jar in " + stock, stock.stream()
        .anyMatch(p -> p.getFileName().toString().equals("hbase-server-2.1.2-tests.jar")));
    assertTrue("no PerformanceEvaluation jar in " + stock, stock.stream()
        .anyMatch(p -> p.getFileName().toString().equals("hbase-mapreduce-2.1.2-tests.jar")));
    assertFalse("ApacheDS on the class path", stock.stream()
        .anyMatch(p -> p.toString().contains("org/apache/directory")));
  }

  @Test
  public void forJar_custom_startsWithTheCustomJarInsteadOfTheStockJar() throws Exception {
    Hbase21ClassPath cp = Hbase21ClassPath.load();
    List<Path> custom = cp.forJar(ServerJar.CUSTOM, Paths.get("extra"));
    assertTrue(custom.get(0).toString(),
        custom.get(0).getFileName().toString().startsWith("hbase-server-2.1.2-fork."));
    assertEquals(1, serverJars(custom));
    assertEquals(Paths.get("extra"), custom.get(custom.size() - 1));
    // Then the custom compat jars of the same revision, where the stock path has the stock ones.
    String fork = custom.get(0).getFileName().toString().replace("hbase-server-", "");
    assertEquals("hbase-hadoop-compat-" + fork, custom.get(1).getFileName().toString());
    assertEquals("hbase-hadoop2-compat-" + fork, custom.get(2).getFileName().toString());
    List<Path> stock = cp.forJar(ServerJar.STOCK);
    assertEquals("hbase-hadoop-compat-2.1.2.jar", stock.get(1).getFileName().toString());
    assertEquals("hbase-hadoop2-compat-2.1.2.jar", stock.get(2).getFileName().toString());
    assertEquals(stock.subList(3, custom.size() - 1), custom.subList(3, custom.size() - 1));
    assertFalse("a stock compat jar on the custom class path: " + custom, custom.stream()
        .anyMatch(p -> p.getFileName().toString().matches("hbase-hadoop2?-compat-2\\.1\\.2\\.jar")));
  }

  @Test
  public void loader_loadsHBaseFromItsJarAndNotFromThisJvm() throws Exception {
    Hbase21ClassPath cp = Hbase21ClassPath.load();
    String region = "org.apache.hadoop.hbase.regionserver.HRegion";
    try (URLClassLoader stock = cp.loader(ServerJar.STOCK);
        URLClassLoader custom = cp.loader(ServerJar.CUSTOM)) {
      Class<?> a = stock.loadClass(region);
      Class<?> b = custom.loadClass(region);
      assertNotEquals(a, b);
      assertEquals(cp.serverJar(ServerJar.STOCK).toUri().toURL(),
          a.getProtectionDomain().getCodeSource().getLocation());
      assertEquals(cp.serverJar(ServerJar.CUSTOM).toUri().toURL(),
          b.getProtectionDomain().getCodeSource().getLocation());
      String source = "org.apache.hadoop.hbase.regionserver.MetricsRegionServerSourceImpl";
      assertEquals(cp.compatJars(ServerJar.CUSTOM).get(1).toUri().toURL(),
          custom.loadClass(source).getProtectionDomain().getCodeSource().getLocation());
      assertEquals(cp.compatJars(ServerJar.STOCK).get(1).toUri().toURL(),
          stock.loadClass(source).getProtectionDomain().getCodeSource().getLocation());
    }
  }

  /** Entries that hold HRegion: hbase-server jars other than the tests jar. */
  private static long serverJars(List<Path> cp) {
    return cp.stream().map(p -> p.getFileName().toString())
        .filter(n -> n.startsWith("hbase-server-") && !n.endsWith("-tests.jar")).count();
  }
}
