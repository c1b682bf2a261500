package dev.forkset.memstore;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.hbase21.ServerJar;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

/**
 * The JDK-independent proof of the 2.1.2 fix, for every memstore type and with no key set: the
 * same probe (SnapshotSizeCallProbe) runs in one JVM against the STOCK hbase-server-2.1.2.jar and
 * against hbase-server-2.1.2-fork.<n>.jar, each in its own class loader. The CslmSizeAgent counts every
 * {@code ConcurrentSkipListMap.size()} call. Stock calls it while snapshotting, under the region's
 * update lock; the custom jar does not, and gives the same cells, counts and flushed data.
 */
@RunWith(Parameterized.class)
public class TestSnapshotSizeCalls {
  private static final String PROBE = "org.apache.hadoop.hbase.regionserver.SnapshotSizeCallProbe";
  /** Cells per run: enough for several in-memory flushes, small enough for seconds. */
  private static final int CELLS = 20_000;
  /** Increment rounds on 50 counters (VERSIONS=1, so they go through upsert and remove cells). */
  private static final int INCREMENTS = 20;

  @Parameters(name = "{0}")
  public static Collection<Object[]> policies() {
    // site:BASIC: hbase.hregion.compacting.memstore.type=BASIC for every store, as the field
    // report advised; on the old fork jar with its memstore class key set this failed every store.
    return Arrays.asList(new Object[][] {{"NONE"}, {"BASIC"}, {"EAGER"}, {"site:BASIC"}});
  }

  private final String policy;
  private final Map<String, Object> stock;
  private final Map<String, Object> custom;

  /** Probe results by policy, stock then custom: JUnit makes one instance per test method. */
  private static final Map<String, List<Map<String, Object>>> RUNS = new HashMap<>();

  public TestSnapshotSizeCalls(String policy) throws Exception {
    this.policy = policy;
    List<Map<String, Object>> runs = RUNS.get(policy);
    if (runs == null) {
      runs = Arrays.asList(probe(ServerJar.STOCK, policy), probe(ServerJar.CUSTOM, policy));
      System.out.println(policy + " stock 2.1.2: " + runs.get(0));
      System.out.println(policy + " custom 2.1.2: " + runs.get(1));
      RUNS.put(policy, runs);
    }
    this.stock = runs.get(0);
    this.custom = runs.get(1);
  }

  /**
   * Runs the probe; a run that hits HBase 2.1.2's own CellChunkMap fault is run again, at most
   * twice. With EAGER, an increment's read can fail with "In CellChunkMap, cell must be
   * associated with chunk" after in-memory compaction flattened a segment into a CellChunkMap
   * (a cell whose chunk id the ChunkCreator does not know; cause not traced). It struck the stock
   * jar once in a CI-like run; the fork's patches do not touch that code. Any other failure
   * fails the test at once.
   */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> probe(ServerJar server, String policy) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        return (Map<String, Object>) InEachJar.call(server, PROBE, "run",
            new Class<?>[] {String.class, int.class, int.class}, policy, CELLS, INCREMENTS);
      } catch (Exception e) {
        if (attempt == 3 || !upstreamCellChunkMapFault(e)) {
          throw e;
        }
        System.out.println(policy + " " + server + ": HBase 2.1.2's CellChunkMap fault, run "
            + attempt + " of 3: " + e);
      }
    }
  }

  private static boolean upstreamCellChunkMapFault(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (String.valueOf(t.getMessage()).contains("In CellChunkMap, cell must be associated")) {
        return true;
      }
    }
    return false;
  }

  @Test
  public void bothJarsUseTheMemStoreHBasePicksWithNoKeySet() {
    String expected = policy.equals("NONE")
        ? "org.apache.hadoop.hbase.regionserver.DefaultMemStore"
        : "org.apache.hadoop.hbase.regionserver.CompactingMemStore";
    assertEquals(expected, stock.get("memstoreClass"));
    assertEquals(expected, custom.get("memstoreClass"));
  }

  @Test
  public void stockSnapshotSizesTheSkipListAndCustomSnapshotDoesNot() {
    assertTrue("stock snapshot size() calls: " + stock.get("snapshotSizeCalls"),
        (Long) stock.get("snapshotSizeCalls") >= 1);
    assertEquals(0L, custom.get("snapshotSizeCalls"));
  }

  @Test
  public void customFlushMakesNoSkipListSizeCallUnderTheUpdateLock() {
    assertTrue("stock flush size() calls under the lock: " + stock.get("flushSizeCallsUnderLock"),
        (Long) stock.get("flushSizeCallsUnderLock") >= 1);
    assertEquals("first call: " + custom.get("firstSizeCallUnderLock"), 0L,
        custom.get("flushSizeCallsUnderLock"));
  }

  @Test
  public void snapshotCountIsExact() {
    // Equal to the cells a scanner finds, after upsert removed old versions of the counters (and,
    // for EAGER, after in-memory compaction dropped some).
    for (Map<String, Object> run : Arrays.asList(stock, custom)) {
      long iterated = (Long) run.get("snapshotCellsIterated");
      assertEquals((int) iterated, ((Map<?, ?>) run.get("snapshot")).get("cellsCount"));
      assertTrue("upsert removed nothing: " + iterated, iterated < CELLS + 50 * INCREMENTS);
    }
  }

  @Test
  public void snapshotOfDefaultMemStoreIsTheSameAsStock() {
    if (!policy.equals("NONE")) {
      return; // in-memory compaction runs in the background: segment layout varies run to run
    }
    assertEquals(stock.get("snapshot"), custom.get("snapshot"));
    assertEquals(stock.get("snapshotDigest"), custom.get("snapshotDigest"));
  }

  @Test
  public void flushWritesTheSameDataAsStock() {
    for (String key : new String[] {"flushResult", "memstoreAfterFlush", "flushedCellsRead",
        "flushedDigest"}) {
      assertEquals(key, stock.get(key), custom.get(key));
    }
    assertEquals((long) CELLS + 50, custom.get("flushedCellsRead"));
  }
}
