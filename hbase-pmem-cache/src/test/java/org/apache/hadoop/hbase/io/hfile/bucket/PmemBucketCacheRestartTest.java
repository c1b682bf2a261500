package org.apache.hadoop.hbase.io.hfile.bucket;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import dev.forkset.hbase.pmem.PmemCacheConfig;
import dev.forkset.hbase.pmem.PmemCacheMXBean;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Restarts of a real BucketCache over the module engine: what comes back, what does not, and
 * what the engine reports about it.
 */
public class PmemBucketCacheRestartTest {
  private static final long CAPACITY = 64L << 20;
  private static final int BLOCK = 8 * 1024;
  private static final int BLOCKS = 3000;
  private static final int[] BUCKET_SIZES = {9 * 1024, 17 * 1024, 33 * 1024, 65 * 1024};

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private String ioEngine;
  private String persistence;
  private Configuration conf;

  @Before
  public void setUp() throws Exception {
    ioEngine = "pmem:" + tmp.newFolder("pmem0") + "/cache," + tmp.newFolder("pmem1") + "/cache";
    persistence = tmp.getRoot() + "/bucket.persistence";
    conf = HBaseConfiguration.create();
    conf.set(PmemCacheConfig.MAPPING_SIZE.name, "4m");
    conf.set(PmemCacheConfig.LOCK_WAIT.name, "0");
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    conf.setLong("hbase.bucketcache.persist.intervalinmillis", 3_600_000);
  }

  private BucketCache open() throws IOException {
    return open(CAPACITY);
  }

  /** A cache that is enabled: with the asynchronous retrieval (0106), once its map is read. */
  private BucketCache open(long capacity) throws IOException {
    BucketCache cache = construct(capacity);
    long deadline = System.currentTimeMillis() + 60_000;
    while (!cache.isCacheEnabled()) {
      assertTrue("cache not enabled within 60 s", System.currentTimeMillis() < deadline);
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
    return cache;
  }

  private BucketCache construct(long capacity) throws IOException {
    return new BucketCache(ioEngine, capacity, BLOCK, BUCKET_SIZES, 3, 64, persistence, 60_000,
        conf);
  }

  private static PmemCacheMXBean stats(BucketCache cache) {
    return ((PmemIOEngine) cache.ioEngine).store().stats();
  }

  @Test
  public void cleanRestart_servesEveryBlockAfterVerifyingIt() throws Exception {
    TestBlocks blocks = TestBlocks.make(1, BLOCKS, BLOCK);
    BucketCache first = open();
    assertTrue(first.ioEngine instanceof PmemIOEngine);
    assertEquals("cold", stats(first).getStartMode());
    blocks.cacheAll(first);
    first.shutdown();

    BucketCache second = open();
    try {
      PmemCacheMXBean s = stats(second);
      assertEquals("warm", s.getStartMode());
      assertEquals("clean", s.getPreviousStop());
      TestBlocks.Tally t = blocks.check(second);
      assertEquals(t.toString(), BLOCKS, t.correct);
      // The engine learns that the pass ended just after BucketCache marks the map validated:
      // wait for the engine's own state.
      long deadline = System.currentTimeMillis() + 60_000;
      while (!s.isRecoveryComplete()) {
        assertTrue("recovery not complete within 60 s", System.currentTimeMillis() < deadline);
        Thread.sleep(10);
      }
      assertTrue(second.getBackingMapValidated().get());
      assertEquals("the background pass checks every recovered block", BLOCKS,
          s.getRecoveredBlocksChecked());
      assertEquals(0, s.getRecoveredBlocksFailed() + s.getReadsFailed());
    } finally {
      second.shutdown();
    }
  }

  /**
   * With the map read in the background (patch 0106), the engine's pass over the recovered blocks
   * starts once the map is in and the cache enabled, and checks every block as in the constructor's
   * read.
   */
  @Test
  public void asyncRetrieval_cleanRestart_servesEveryBlockAfterVerifyingIt() throws Exception {
    conf.setBoolean(BucketCache.PERSISTENCE_RETRIEVE_ASYNC_KEY, true);
    cleanRestart_servesEveryBlockAfterVerifyingIt();
  }

  @Test
  public void asyncRetrieval_staleMap_servesNoWrongByte() throws Exception {
    conf.setBoolean(BucketCache.PERSISTENCE_RETRIEVE_ASYNC_KEY, true);
    TestBlocks.Tally module = staleMap();
    assertEquals(module.toString(), 0, module.wrong);
  }

  /**
   * A shutdown right after the constructor, while the map may still be read or just after: either
   * way the engine is shut down after the read, the persistence file stays whole, and the next
   * start serves every block.
   */
  @Test
  public void asyncRetrieval_shutdownRightAfterTheConstructor_nextStartServesEveryBlock()
      throws Exception {
    conf.setBoolean(BucketCache.PERSISTENCE_RETRIEVE_ASYNC_KEY, true);
    TestBlocks blocks = TestBlocks.make(5, BLOCKS, BLOCK);
    BucketCache first = open();
    blocks.cacheAll(first);
    first.shutdown();

    // During the read the file is left as it is; after it, the shutdown persists the map again.
    construct(CAPACITY).shutdown();

    BucketCache third = open();
    try {
      TestBlocks.Tally t = blocks.check(third);
      assertEquals(t.toString(), BLOCKS, t.correct);
    } finally {
      third.shutdown();
    }
  }

  @Test
  public void cleanStopWithAnEmptyCache_restarts() throws Exception {
    BucketCache first = open();
    first.shutdown();
    BucketCache second = open();
    try {
      assertEquals(0, second.backingMap.size());
      TestBlocks blocks = TestBlocks.make(2, 10, BLOCK);
      blocks.cacheAll(second);
      assertEquals(10, blocks.check(second).correct);
    } finally {
      second.shutdown();
    }
  }

  /**
   * The fault of a stale map: the map of an earlier stop comes back over blocks whose space was
   * reused since. Stock pmem: serves other blocks' bytes; the module evicts every such block.
   */
  private TestBlocks.Tally staleMap() throws Exception {
    TestBlocks old = TestBlocks.make(3, BLOCKS, BLOCK);
    BucketCache first = open();
    old.cacheAll(first);
    first.shutdown();
    File saved = tmp.newFile();
    Files.copy(new File(persistence).toPath(), saved.toPath(),
        StandardCopyOption.REPLACE_EXISTING);
    BucketCache second = open();
    for (int i = 0; i < BLOCKS; i++) {
      second.evictBlock(old.keys[i]);
    }
    TestBlocks.make(4, BLOCKS, BLOCK).cacheAll(second);
    second.shutdown();
    Files.copy(saved.toPath(), new File(persistence).toPath(),
        StandardCopyOption.REPLACE_EXISTING);
    BucketCache third = open();
    try {
      return old.check(third);
    } finally {
      third.shutdown();
    }
  }

  @Test
  public void staleMap_servesNoWrongByteWhereStockPmemDoes() throws Exception {
    TestBlocks.Tally module = staleMap();
    conf.set(PmemCacheConfig.ENGINE.name, "stock");
    ioEngine = "pmem:" + tmp.newFolder("stock") + "/cache";
    persistence = tmp.getRoot() + "/stock.persistence";
    TestBlocks.Tally stock = staleMap();
    System.out.println("stale map after a restart, old blocks: module " + module + ", stock "
        + stock);
    assertEquals(module.toString(), 0, module.wrong);
    assertTrue("stock served no wrong byte: " + stock, stock.wrong > 0);
  }

  @Test
  public void changedCapacity_startsColdAndMovesTheMapAside() throws Exception {
    BucketCache first = open();
    TestBlocks.make(5, 200, BLOCK).cacheAll(first);
    first.shutdown();
    BucketCache second = open(CAPACITY + (4L << 20));
    try {
      assertEquals(0, second.backingMap.size());
      assertEquals("cold", stats(second).getStartMode());
      assertTrue(stats(second).getColdReason(), stats(second).getColdReason().contains("layout"));
      assertTrue(new File(persistence + ".discarded").exists());
    } finally {
      second.shutdown();
    }
  }

  @Test
  public void truncatedPersistenceFile_startsWithAnEmptyMap() throws Exception {
    TestBlocks blocks = TestBlocks.make(6, 200, BLOCK);
    BucketCache first = open();
    blocks.cacheAll(first);
    first.shutdown();
    try (RandomAccessFile raf = new RandomAccessFile(persistence, "rw")) {
      raf.setLength(raf.length() / 2);
    }
    BucketCache second = open();
    try {
      assertEquals(0, second.backingMap.size());
      assertEquals(0, second.blocksByHFile.size());
      TestBlocks.Tally t = blocks.check(second);
      assertEquals(0, t.correct + t.wrong);
    } finally {
      second.shutdown();
    }
  }

  @Test
  public void stockSetting_selectsHBasesOwnPmemEngine() throws Exception {
    conf.set(PmemCacheConfig.ENGINE.name, "stock");
    ioEngine = "pmem:" + tmp.newFolder("stock") + "/cache";
    BucketCache cache = open();
    try {
      assertEquals(SharedMemoryMmapIOEngine.class, cache.ioEngine.getClass());
    } finally {
      cache.shutdown();
    }
  }

  @Test
  public void badPath_failsTheCacheAtStart() throws Exception {
    ioEngine = "pmem:" + tmp.getRoot() + "/missing/cache";
    try {
      open();
      throw new AssertionError("cache started on a missing directory");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(tmp.getRoot() + "/missing/cache"));
    }
    assertNull(new File(tmp.getRoot(), "missing").list());
  }

  @Test
  public void secondCacheInTheSameJvm_failsNamingThisProcess() throws Exception {
    BucketCache first = open();
    try {
      open();
      throw new AssertionError("a second cache opened the same files");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("this process"));
    } finally {
      first.shutdown();
    }
    open().shutdown();
  }
}
