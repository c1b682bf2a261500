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
    assertEquals(cp.forJar(ServerJar.STOCK).subList(1, custom.size() - 1),
        custom.subList(1, custom.size() - 1));
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
    }
  }

  /** Entries that hold HRegion: hbase-server jars other than the tests jar. */
  private static long serverJars(List<Path> cp) {
    return cp.stream().map(p -> p.getFileName().toString())
        .filter(n -> n.startsWith("hbase-server-") && !n.endsWith("-tests.jar")).count();
  }
}
