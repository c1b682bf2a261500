package dev.forkset.it.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.it.harness.MiniHBase;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.io.hfile.BlockCache;
import org.apache.hadoop.hbase.io.hfile.CacheStats;
import org.apache.hadoop.hbase.io.hfile.CombinedBlockCache;
import org.apache.hadoop.hbase.io.hfile.bucket.BucketCache;
import org.apache.hadoop.hbase.io.hfile.bucket.PmemIOEngine;
import org.apache.hadoop.hbase.io.hfile.bucket.SharedMemoryMmapIOEngine;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The pmem: BucketCache in a minicluster, module engine (two paths) and stock engine (HBase's
 * SharedMemoryMmapIOEngine, selected with hbase.bucketcache.pmem.engine=stock) in one cluster:
 * a table larger than the on-heap L1 cache read at random and verified, the L2 hit ratio from
 * the BucketCache's CacheStats, a graceful restart, an abort, and a restart that finds a stale
 * persistence file (what an unclean stop leaves behind).
 */
public class PmemCacheRestartIT {
  private static final TableName T1 = TableName.valueOf("pmem_t1");
  private static final TableName T2 = TableName.valueOf("pmem_t2");
  private static final byte[] CF = Bytes.toBytes("f");
  private static final byte[] Q = Bytes.toBytes("q");
  /** 40,000 rows of 1 KiB: about 40 MiB per table, more than the 1% (about 30 MiB) L1. */
  private static final int ROWS = 40_000;
  private static final int VALUE = 1024;
  /** Rows read per pass, always the same random sample. */
  private static final int READS = 3000;
  private static final String BUCKET_CACHE_MB = "256";

  private static MiniHBase hbase;
  private static File dir;

  @BeforeClass
  public static void startCluster() throws Exception {
    dir = Files.createTempDirectory("pmem-it").toFile();
    Configuration conf = HBaseConfiguration.create();
    conf.setFloat("hfile.block.cache.size", 0.01f);
    conf.set("hbase.bucketcache.size", BUCKET_CACHE_MB);
    flavor(conf, "module");
    hbase = MiniHBase.start(conf);
    load(T1);
    load(T2);
  }

  @AfterClass
  public static void stopCluster() throws Exception {
    if (hbase != null) {
      hbase.close();
    }
    if (dir != null) {
      try (java.util.stream.Stream<java.nio.file.Path> files = Files.walk(dir.toPath())) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Points the next RegionServer at the cache files and persistence file of a flavor. */
  private static void flavor(Configuration conf, String flavor) throws Exception {
    File f = new File(dir, flavor);
    for (String p : new String[] {"pmem0", "pmem1"}) {
      new File(f, p).mkdirs();
    }
    conf.set("hbase.bucketcache.pmem.engine", flavor);
    conf.set("hbase.bucketcache.ioengine", flavor.equals("module")
        ? "pmem:" + f + "/pmem0/cache," + f + "/pmem1/cache"
        : "pmem:" + f + "/pmem0/cache");
    conf.set("hbase.bucketcache.persistent.path", f + "/bucket.persistence");
  }

  private static byte[] value(TableName t, int row) {
    byte[] v = new byte[VALUE];
    new Random(row * 31L + t.getNameAsString().hashCode()).nextBytes(v);
    return v;
  }

  private static byte[] row(int i) {
    return Bytes.toBytes(String.format("row%08d", i));
  }

  private static void load(TableName t) throws Exception {
    try (Table table = hbase.util().createTable(t, CF)) {
      List<Put> batch = new ArrayList<>();
      for (int i = 0; i < ROWS; i++) {
        batch.add(new Put(row(i)).addColumn(CF, Q, value(t, i)));
        if (batch.size() == 1000) {
          table.put(batch);
          batch.clear();
        }
      }
    }
    hbase.util().flush(t);
  }

  private static BucketCache bucketCache(HRegionServer rs) {
    BlockCache bc = rs.getBlockCache().get();
    return (BucketCache) ((CombinedBlockCache) bc).getBlockCaches()[1];
  }

  /** One pass: hits, misses (L2 CacheStats deltas), correct, missing, wrong, failed reads. */
  private static long[] pass(TableName t) throws Exception {
    BucketCache cache = bucketCache(hbase.regionServer());
    CacheStats stats = cache.getStats();
    long hits = stats.getHitCount();
    long misses = stats.getMissCount();
    long correct = 0;
    long missing = 0;
    long wrong = 0;
    long failed = 0;
    Random r = new Random(42);
    try (Table table = hbase.util().getConnection().getTable(t)) {
      for (int i = 0; i < READS; i++) {
        int row = r.nextInt(ROWS);
        try {
          Result res = table.get(new Get(row(row)));
          byte[] v = res.getValue(CF, Q);
          if (v == null) {
            missing++;
          } else if (Arrays.equals(v, value(t, row))) {
            correct++;
          } else {
            wrong++;
          }
        } catch (Exception e) {
          failed++;
        }
      }
    }
    return new long[] {stats.getHitCount() - hits, stats.getMissCount() - misses, correct,
        missing, wrong, failed};
  }

  private static double ratio(long[] p) {
    return p[0] + p[1] == 0 ? 0 : (double) p[0] / (p[0] + p[1]);
  }

  private static String show(long[] p) {
    return String.format("hit ratio %.4f (hits %d, misses %d), rows correct %d, missing %d,"
        + " wrong %d, failed %d", ratio(p), p[0], p[1], p[2], p[3], p[4], p[5]);
  }

  /**
   * Waits until the BucketCache writer threads have drained the RAM queue into the engine: its
   * heap size counts exactly the queued blocks (added when a block is queued, taken off once the
   * writer has put it in the backing map or dropped it), while its block count includes them.
   */
  private static void drain() throws Exception {
    BucketCache cache = bucketCache(hbase.regionServer());
    long deadline = System.currentTimeMillis() + 60_000;
    while (cache.heapSize() > 0) {
      assertTrue("the BucketCache writers still hold " + cache.heapSize() + " bytes after 60 s",
          System.currentTimeMillis() < deadline);
      Thread.sleep(50);
    }
  }

  /** Results of one flavor, printed and checked by the test. */
  private static final class Run {
    long[] warm;
    long[] afterRestart;
    long[] afterAbort;
    long[] staleMap;
    long blocksWarm;
    long blocksAfterRestart;
    long blocksAfterAbort;
    long blocksAfterStaleMap;
    Class<?> engine;
  }

  private static Run runFlavor(String flavor) throws Exception {
    Run run = new Run();
    File persistence = new File(dir, flavor + "/bucket.persistence");
    File saved = new File(dir, flavor + "/bucket.persistence.first-stop");
    run.engine = engineOf(hbase.regionServer());

    pass(T1); // fills the cache from HDFS
    drain();
    run.warm = pass(T1);
    drain();
    run.blocksWarm = bucketCache(hbase.regionServer()).getBlockCount();

    hbase.stopRegionServer();
    Files.copy(persistence.toPath(), saved.toPath(), StandardCopyOption.REPLACE_EXISTING);
    run.blocksAfterRestart = bucketCache(hbase.startRegionServer()).getBlockCount();
    run.afterRestart = pass(T1);

    hbase.killRegionServer();
    run.blocksAfterAbort = bucketCache(hbase.startRegionServer()).getBlockCount();
    run.afterAbort = pass(T1);

    // Space of T1's blocks is freed and reused by T2; then the RegionServer restarts on the map
    // persisted at the first stop, as after an unclean stop that left an old map behind.
    try (Admin admin = hbase.util().getAdmin()) {
      admin.clearBlockCache(T1);
    }
    pass(T2);
    drain();
    pass(T2);
    drain();
    hbase.stopRegionServer();
    Files.copy(saved.toPath(), persistence.toPath(), StandardCopyOption.REPLACE_EXISTING);
    run.blocksAfterStaleMap = bucketCache(hbase.startRegionServer()).getBlockCount();
    run.staleMap = pass(T1);

    System.out.println("pmem " + flavor + " engine " + run.engine.getSimpleName()
        + "\n  warm pass:                  " + show(run.warm) + "; blocks cached "
        + run.blocksWarm
        + "\n  first pass after restart:   " + show(run.afterRestart) + "; blocks at start "
        + run.blocksAfterRestart
        + "\n  first pass after abort:     " + show(run.afterAbort) + "; blocks at start "
        + run.blocksAfterAbort
        + "\n  first pass after stale map: " + show(run.staleMap) + "; blocks at start "
        + run.blocksAfterStaleMap);
    return run;
  }

  private static Class<?> engineOf(HRegionServer rs) throws Exception {
    java.lang.reflect.Field f = BucketCache.class.getDeclaredField("ioEngine");
    f.setAccessible(true);
    return f.get(bucketCache(rs)).getClass();
  }

  @Test
  public void moduleKeepsItsCacheAcrossRestartsAndNeverServesAWrongValueWhileStockDoes()
      throws Exception {
    Run module = runFlavor("module");

    hbase.stopRegionServer();
    // MiniHBaseCluster starts RegionServers from its own copy of the configuration.
    flavor(hbase.cluster().getConf(), "stock");
    hbase.startRegionServer();
    Run stock = runFlavor("stock");

    assertEquals(PmemIOEngine.class, module.engine);
    assertEquals(SharedMemoryMmapIOEngine.class, stock.engine);
    assertEquals("module warm pass: every row correct", READS, module.warm[2]);
    assertTrue("module warm pass is served from the BucketCache: " + show(module.warm),
        ratio(module.warm) > 0.95);
    assertTrue("module first pass after a graceful restart keeps >= 99% of the warm hit ratio: "
        + show(module.afterRestart),
        ratio(module.afterRestart) >= 0.99 * ratio(module.warm));
    assertEquals("module after restart: every row correct", READS, module.afterRestart[2]);
    assertTrue("module restarts with the blocks it had (" + module.blocksAfterRestart + " of "
        + module.blocksWarm + ")", module.blocksAfterRestart >= module.blocksWarm);
    assertEquals("module after abort: every row correct", READS, module.afterAbort[2]);
    assertTrue("an abort still runs the cache shutdown, so the module restarts warm (docs): "
        + module.blocksAfterAbort, module.blocksAfterAbort >= module.blocksWarm);
    assertEquals("module with a stale map: every row correct", READS, module.staleMap[2]);
    // A stale map is no longer discarded whole: every block it names is checked against its
    // header (epoch, key hash, CRC) before it is served, so what still matches stays cached and
    // the rest is evicted; the row check above is what must hold.
    assertTrue("stock serves rows of another block from a stale map: " + show(stock.staleMap),
        stock.staleMap[3] + stock.staleMap[4] + stock.staleMap[5] > 0);
  }
}
