package dev.forkset.hbase21;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The class path a 2.1.2 JVM gets: exactly one hbase-server jar, the right one first. */
public class Hbase21ClassPathTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void stock_startsWithTheStockJarAndHoldsNoOtherServerJar() throws Exception {
    Hbase21ClassPath cp = Hbase21ClassPath.load();
    List<Path> stock = cp.stock();
    assertEquals(cp.stockJar(), stock.get(0));
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
  public void custom_startsWithTheCustomAndModuleJarsInsteadOfTheStockJar() throws Exception {
    Path fork = Files.createFile(tmp.getRoot().toPath().resolve("hbase-server-2.1.2-fork.jar"));
    Path module = tmp.newFolder("module-classes").toPath();
    List<Path> custom = Hbase21ClassPath.load().forJar(ServerJar.CUSTOM, fork, module);
    assertEquals(fork, custom.get(0));
    assertEquals(module, custom.get(1));
    assertEquals(1, serverJars(custom));
  }

  @Test
  public void custom_withoutItsJars_failsNamingWhatIsMissing() throws Exception {
    Hbase21ClassPath cp = Hbase21ClassPath.load();
    Path fork = Files.createFile(tmp.getRoot().toPath().resolve("hbase-server-2.1.2-fork.jar"));
    try {
      cp.forJar(ServerJar.CUSTOM, tmp.getRoot().toPath().resolve("nothing.jar"), fork);
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("hbase-server-2.1.2-fork.<n>.jar"));
    }
    try {
      cp.forJar(ServerJar.CUSTOM, fork, null);
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("hbase-memstore-fix"));
    }
  }

  /** Entries that hold HRegion: hbase-server jars other than the tests jar. */
  private static long serverJars(List<Path> cp) {
    return cp.stream().map(p -> p.getFileName().toString())
        .filter(n -> n.startsWith("hbase-server-") && !n.endsWith("-tests.jar")).count();
  }
}
