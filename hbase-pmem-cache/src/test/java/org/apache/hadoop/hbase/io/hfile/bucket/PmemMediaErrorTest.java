package org.apache.hadoop.hbase.io.hfile.bucket;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.hbase.pmem.PmemCacheConfig;
import dev.forkset.hbase.pmem.PmemCacheMXBean;
import dev.forkset.hbase.pmem.StoreFaults;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A media error met by a read, through a real BucketCache: the block is a miss, its slot is
 * reused by BucketCache (its allocator hands the freed slot out first), and the blocks cached
 * after it are cached and served: neither a write into the bad page (SIGBUS on a real device)
 * nor a size class that stops caching.
 */
public class PmemMediaErrorTest {
  private static final int BLOCK = 8 * 1024;
  private static final int[] BUCKET_SIZES = {9 * 1024, 17 * 1024, 33 * 1024, 65 * 1024};

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void aBadBlocksSlot_isNotWrittenAndTheCacheGoesOn() throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set(PmemCacheConfig.MAPPING_SIZE.name, "4m");
    conf.set(PmemCacheConfig.LOCK_WAIT.name, "0");
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    BucketCache cache = new BucketCache("pmem:" + tmp.newFolder("pmem0") + "/cache", 64L << 20,
        BLOCK, BUCKET_SIZES, 1, 64, null, 60_000, conf);
    try {
      PmemIOEngine engine = (PmemIOEngine) cache.ioEngine;
      PmemCacheMXBean stats = engine.store().stats();
      TestBlocks first = TestBlocks.make(1, 5, BLOCK);
      first.cacheAll(cache);
      BucketEntry bad = cache.backingMap.get(first.keys[2]);
      StoreFaults.failReads(engine.store(), bad.offset(), bad.getLength());
      assertEquals("the block on the bad page", 1, first.read(cache, 2));
      assertTrue("evicted", !cache.backingMap.containsKey(first.keys[2]));
      assertEquals(1, stats.getBadRanges());
      // The next blocks: the first of them gets the freed slot.
      TestBlocks later = TestBlocks.make(2, 40, BLOCK);
      later.cacheAll(cache);
      assertTrue("the bad slot was not offered again", stats.getWritesSkipped() >= 1);
      TestBlocks.Tally t = later.check(cache);
      assertEquals(t.toString(), 0, t.wrong);
      assertTrue(t.toString(), t.correct >= 39);
      TestBlocks.Tally before = first.check(cache);
      assertEquals(before.toString(), 4, before.correct);
    } finally {
      cache.shutdown();
    }
  }
}
