package dev.forkset.memstore;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The JDK-independent proof of the 2.1.2 fix: the same probe (SnapshotSizeCallProbe) runs in one
 * JVM against the STOCK hbase-server-2.1.2.jar and against hbase-server-2.1.2-fork.jar plus the
 * hbase-memstore-fix module, each in its own class loader over the 2.1.2 dependencies. Stock calls
 * {@code size()} on the skip list while snapshotting; the fix does not, and gives the same cells,
 * counts and sizes, and the same flushed data.
 */
public class TestSnapshotSizeCalls {
  private static final String PROBE = "org.apache.hadoop.hbase.regionserver.SnapshotSizeCallProbe";
  /** Cells per run: enough for a real skip list, small enough for seconds. */
  private static final int CELLS = 20_000;
  /** Increment rounds on 50 counters (VERSIONS=1, so they go through upsert and remove cells). */
  private static final int INCREMENTS = 20;

  private static Map<String, Object> stock;
  private static Map<String, Object> fixed;

  @BeforeClass
  public static void runProbeOnBothJars() throws Exception {
    List<URL> common = new ArrayList<>();
    File forkJar = null;
    File moduleJar = null;
    File hbaseCommon = null;
    String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    for (String entry : cp.split(File.pathSeparator)) {
      if (entry.isEmpty()) {
        continue;
      }
      File f = new File(entry);
      String name = f.getName();
      if (name.startsWith("hbase-server-2.1.2-fork")) {
        forkJar = f;
      } else if (name.startsWith("hbase-memstore-fix") || entry.contains("hbase-memstore-fix")) {
        moduleJar = f;
      } else {
        if (name.equals("hbase-common-2.1.2.jar")) {
          hbaseCommon = f;
        }
        common.add(f.toURI().toURL());
      }
    }
    assertTrue("fork jar not on the test class path: " + cp, forkJar != null);
    assertTrue("hbase-memstore-fix not on the test class path: " + cp, moduleJar != null);
    assertTrue("hbase-common-2.1.2.jar not on the test class path: " + cp, hbaseCommon != null);
    // The stock jar is taken off the class path (the line's Failsafe runs on the fork jar); it
    // sits in the same local repository as hbase-common 2.1.2: <repo>/org/apache/hbase/<a>/<v>/.
    File stockJar = new File(hbaseCommon.getParentFile().getParentFile().getParentFile(),
        "hbase-server/2.1.2/hbase-server-2.1.2.jar");
    assertTrue(stockJar + " missing", stockJar.isFile());

    stock = probe(new URL[] {stockJar.toURI().toURL()}, common);
    fixed = probe(new URL[] {forkJar.toURI().toURL(), moduleJar.toURI().toURL()}, common);
    System.out.println("stock 2.1.2: " + stock);
    System.out.println("fixed 2.1.2: " + fixed);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> probe(URL[] server, List<URL> common) throws Exception {
    List<URL> urls = new ArrayList<>();
    for (URL u : server) {
      urls.add(u);
    }
    urls.addAll(common);
    ClassLoader previous = Thread.currentThread().getContextClassLoader();
    // Parent: the JDK's platform loader (this file compiles at release 8, hence reflection).
    ClassLoader platform = (ClassLoader) ClassLoader.class.getMethod("getPlatformClassLoader")
        .invoke(null);
    try (URLClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), platform)) {
      Thread.currentThread().setContextClassLoader(loader);
      Method run = loader.loadClass(PROBE).getMethod("run", int.class, int.class);
      return (Map<String, Object>) run.invoke(null, CELLS, INCREMENTS);
    } catch (InvocationTargetException e) {
      throw (Exception) e.getCause();
    } finally {
      Thread.currentThread().setContextClassLoader(previous);
    }
  }

  @Test
  public void stockUsesDefaultMemStoreAndFixUsesTheCountingOne() {
    assertEquals("org.apache.hadoop.hbase.regionserver.DefaultMemStore", stock.get("memstoreClass"));
    assertEquals("org.apache.hadoop.hbase.regionserver.CellCountingMemStore",
        fixed.get("memstoreClass"));
  }

  @Test
  public void stockSnapshotCallsSkipListSizeAndFixedSnapshotDoesNot() {
    assertTrue("stock snapshot size() calls: " + stock.get("snapshotSizeCalls"),
        (Long) stock.get("snapshotSizeCalls") >= 1);
    assertEquals(0L, fixed.get("snapshotSizeCalls"));
  }

  @Test
  public void fixedFlushMakesNoSkipListSizeCall() {
    assertTrue("stock flush size() calls: " + stock.get("flushSizeCalls"),
        (Long) stock.get("flushSizeCalls") >= 1);
    assertEquals(0L, fixed.get("flushSizeCalls"));
  }

  @Test
  public void snapshotReportsTheSameCellsCountsAndSizesAsStock() {
    assertEquals(stock.get("snapshot"), fixed.get("snapshot"));
    assertEquals(stock.get("snapshotDigest"), fixed.get("snapshotDigest"));
    assertEquals(stock.get("snapshotCellsIterated"), fixed.get("snapshotCellsIterated"));
    // The count is exact: equal to the cells a scanner finds, after upsert removed old versions
    // of the counters (fewer cells than puts plus increments).
    long iterated = (Long) fixed.get("snapshotCellsIterated");
    assertEquals((int) iterated, ((Map<?, ?>) fixed.get("snapshot")).get("cellsCount"));
    assertTrue("upsert removed nothing: " + iterated, iterated < CELLS + 50 * INCREMENTS);
  }

  @Test
  public void flushWritesTheSameDataAsStock() {
    for (String key : new String[] {"flushResult", "storeFiles", "storeFileEntries",
        "memstoreAfterFlush", "flushedCellsRead", "flushedDigest"}) {
      assertEquals(key, stock.get(key), fixed.get(key));
    }
    assertEquals((long) CELLS + 50, fixed.get("flushedCellsRead"));
  }
}
