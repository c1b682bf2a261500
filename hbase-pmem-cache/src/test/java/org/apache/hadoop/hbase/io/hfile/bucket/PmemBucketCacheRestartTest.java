package org.apache.hadoop.hbase.io.hfile.bucket;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import dev.forkset.hbase.pmem.PmemCacheConfig;
import java.io.File;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;
import org.apache.hadoop.hbase.io.hfile.CacheTestUtils;
import org.apache.hadoop.hbase.io.hfile.CacheTestUtils.HFileBlockPair;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A real BucketCache over the module engine: blocks cached before a restart come back byte for
 * byte after a clean shutdown, and nothing comes back after an unclean stop or a bad
 * persistence file.
 */
public class PmemBucketCacheRestartTest {
  private static final long CAPACITY = 64L << 20;
  private static final int BLOCK_SIZE = 8 * 1024;
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
    conf.setLong(PmemCacheConfig.MAPPING_SIZE_KEY, 4L << 20);
    // cacheBlockWithWait blocks up to this long on a full writer queue instead of dropping.
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
  }

  private BucketCache open() throws Exception {
    return new BucketCache(ioEngine, CAPACITY, BLOCK_SIZE, BUCKET_SIZES, 3, 64, persistence,
        60_000, conf);
  }

  private static void cacheAll(BucketCache cache, HFileBlockPair[] blocks) throws Exception {
    for (HFileBlockPair b : blocks) {
      cache.cacheBlockWithWait(b.getBlockName(), b.getBlock(), false, true);
    }
    long deadline = System.currentTimeMillis() + 20_000;
    while (!cache.ramCache.isEmpty() || cache.backingMap.size() < blocks.length) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("blocks not written: " + cache.backingMap.size());
      }
      Thread.sleep(10);
    }
  }

  private static ByteBuffer bytes(Cacheable c) {
    ByteBuffer b = ByteBuffer.allocate(c.getSerializedLength());
    c.serialize(b, true);
    b.rewind();
    return b;
  }

  /** Counts blocks served correctly, missing and wrong. */
  private static int[] check(BucketCache cache, HFileBlockPair[] blocks) {
    int[] correctMissingWrong = new int[3];
    for (HFileBlockPair b : blocks) {
      Cacheable got = cache.getBlock(b.getBlockName(), false, false, false);
      if (got == null) {
        correctMissingWrong[1]++;
        continue;
      }
      try {
        correctMissingWrong[bytes(got).equals(bytes(b.getBlock())) ? 0 : 2]++;
      } finally {
        got.release();
      }
    }
    return correctMissingWrong;
  }

  @Test
  public void cleanRestartServesEveryCachedBlock() throws Exception {
    HFileBlockPair[] blocks = CacheTestUtils.generateHFileBlocks(BLOCK_SIZE, BLOCKS);
    BucketCache first = open();
    assertTrue(first.ioEngine instanceof PmemIOEngine);
    cacheAll(first, blocks);
    assertEquals(Arrays.toString(new int[] {BLOCKS, 0, 0}),
        Arrays.toString(check(first, blocks)));
    first.shutdown();

    BucketCache second = open();
    try {
      assertEquals("correct, missing, wrong after a clean restart",
          Arrays.toString(new int[] {BLOCKS, 0, 0}), Arrays.toString(check(second, blocks)));
    } finally {
      second.shutdown();
    }
  }

  @Test
  public void cleanStopWithAnEmptyCacheRestarts() throws Exception {
    BucketCache first = open();
    first.shutdown();
    BucketCache second = open();
    try {
      assertEquals(0, second.backingMap.size());
      HFileBlockPair[] blocks = CacheTestUtils.generateHFileBlocks(BLOCK_SIZE, 10);
      cacheAll(second, blocks);
      assertEquals(Arrays.toString(new int[] {10, 0, 0}), Arrays.toString(check(second, blocks)));
    } finally {
      second.shutdown();
    }
  }

  @Test
  public void uncleanStopDiscardsTheStalePersistedMap() throws Exception {
    HFileBlockPair[] old = CacheTestUtils.generateHFileBlocks(BLOCK_SIZE, BLOCKS);
    BucketCache first = open();
    cacheAll(first, old);
    first.shutdown();

    // The second run evicts the old blocks, reuses their space, and is killed: its map is
    // never persisted, so the persistence file on disk is the first run's.
    BucketCache second = open();
    assertEquals(BLOCKS, second.backingMap.size());
    for (HFileBlockPair b : old) {
      second.evictBlock(b.getBlockName());
    }
    HFileBlockPair[] fresh = CacheTestUtils.generateHFileBlocks(BLOCK_SIZE, BLOCKS);
    cacheAll(second, fresh);
    second.ioEngine.sync();

    BucketCache third = open();
    try {
      int[] oldResult = check(third, old);
      assertEquals("no block of the stale map may be served", 0, oldResult[0] + oldResult[2]);
      assertEquals(0, third.backingMap.size());
    } finally {
      third.shutdown();
      second.shutdown();
    }
  }

  /** Same scenario on HBase's own pmem: engine: the stale map is served (the fault). */
  @Test
  public void stockPmemServesAStaleMapAfterAnUncleanStop() throws Exception {
    conf.set(PmemCacheConfig.ENGINE_KEY, "stock");
    ioEngine = "pmem:" + tmp.newFolder("stock") + "/cache";
    int[] stock = staleMapScenario();
    conf.set(PmemCacheConfig.ENGINE_KEY, "module");
    ioEngine = "pmem:" + tmp.newFolder("m0") + "/cache," + tmp.newFolder("m1") + "/cache";
    persistence = tmp.getRoot() + "/module.persistence";
    int[] module = staleMapScenario();
    System.out.println("stale map after an unclean stop, old blocks correct/missing/wrong: stock "
        + Arrays.toString(stock) + ", module " + Arrays.toString(module));
    assertTrue("stock serves wrong bytes " + Arrays.toString(stock), stock[2] > 0);
    assertEquals(0, module[0] + module[2]);
  }

  private int[] staleMapScenario() throws Exception {
    HFileBlockPair[] old = CacheTestUtils.generateHFileBlocks(BLOCK_SIZE, BLOCKS);
    BucketCache first = open();
    cacheAll(first, old);
    first.shutdown();
    BucketCache second = open();
    for (HFileBlockPair b : old) {
      second.evictBlock(b.getBlockName());
    }
    cacheAll(second, CacheTestUtils.generateHFileBlocks(BLOCK_SIZE, BLOCKS));
    second.ioEngine.sync();
    // second is "killed": never shut down, its map never persisted.
    BucketCache third = open();
    try {
      return check(third, old);
    } finally {
      third.shutdown();
      second.shutdown();
    }
  }

  @Test
  public void truncatedPersistenceFileStartsCold() throws Exception {
    HFileBlockPair[] blocks = CacheTestUtils.generateHFileBlocks(BLOCK_SIZE, 200);
    BucketCache first = open();
    cacheAll(first, blocks);
    first.shutdown();
    try (RandomAccessFile raf = new RandomAccessFile(persistence, "rw")) {
      raf.setLength(raf.length() / 2);
    }
    BucketCache second = open();
    try {
      assertEquals(0, second.backingMap.size());
      int[] r = check(second, blocks);
      assertEquals(0, r[0] + r[2]);
    } finally {
      second.shutdown();
    }
  }

  @Test
  public void changedCapacityStartsCold() throws Exception {
    HFileBlockPair[] blocks = CacheTestUtils.generateHFileBlocks(BLOCK_SIZE, 200);
    BucketCache first = open();
    cacheAll(first, blocks);
    first.shutdown();
    BucketCache second = new BucketCache(ioEngine, CAPACITY + (4L << 20), BLOCK_SIZE,
        BUCKET_SIZES, 3, 64, persistence, 60_000, conf);
    try {
      assertEquals(0, second.backingMap.size());
    } finally {
      second.shutdown();
    }
  }

  @Test
  public void stockSettingSelectsHBasesOwnPmemEngine() throws Exception {
    conf.set(PmemCacheConfig.ENGINE_KEY, "stock");
    ioEngine = "pmem:" + tmp.newFolder("stock") + "/cache";
    BucketCache cache = open();
    try {
      assertEquals(SharedMemoryMmapIOEngine.class, cache.ioEngine.getClass());
    } finally {
      cache.shutdown();
    }
  }

  @Test
  public void badPathFailsTheCacheAtStart() throws Exception {
    ioEngine = "pmem:" + tmp.getRoot() + "/missing/cache";
    try {
      open();
      throw new AssertionError("cache started on a missing directory");
    } catch (java.io.IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(tmp.getRoot() + "/missing/cache"));
    }
    assertNull(new File(tmp.getRoot(), "missing").list());
  }
}
