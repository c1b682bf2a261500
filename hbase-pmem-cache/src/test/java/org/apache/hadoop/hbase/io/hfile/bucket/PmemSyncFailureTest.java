package org.apache.hadoop.hbase.io.hfile.bucket;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.forkset.hbase.pmem.PmemCacheConfig;
import dev.forkset.hbase.pmem.PmemTestAccess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A device that fails to force written data (fdatasync or msync returning EIO) must reach
 * BucketCache as the IOException its writer expects: the batch is dropped cleanly (nothing of it
 * in the backing map or the RAM cache, its space freed) and the cache keeps working once the
 * device does.
 */
public class PmemSyncFailureTest {
  private static final int BLOCK = 8 * 1024;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  /** The default writes: positional writes, then a force of each file written (fdatasync). */
  @Test
  public void failingFileForce_dropsTheBatchWithoutLeakingAndTheCacheRecovers() throws Exception {
    failingForce("copy", (engine, forces, failing) -> PmemTestAccess.fileForcer(engine.store(),
        (path, ch) -> {
          forces.incrementAndGet();
          if (failing.get()) {
            throw new IOException("EIO from fdatasync");
          }
          ch.force(false);
        }));
  }

  /** Writes into the mappings (opt-in): a force of the pages written (msync). */
  @Test
  public void failingForce_dropsTheBatchWithoutLeakingAndTheCacheRecovers() throws Exception {
    failingForce("mapped", (engine, forces, failing) -> PmemTestAccess.forcer(engine.store(),
        (segment, index, length) -> {
          forces.incrementAndGet();
          if (failing.get()) {
            throw new UncheckedIOException(new IOException("EIO from msync"));
          }
        }));
  }

  /** Injects a failing force into an engine. */
  private interface Injection {
    void inject(PmemIOEngine engine, AtomicInteger forces, AtomicBoolean failing);
  }

  private void failingForce(String write, Injection injection) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set(PmemCacheConfig.MAPPING_SIZE.name, "4m");
    conf.set(PmemCacheConfig.WRITE.name, write);
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    BucketCache cache = new BucketCache("pmem:" + tmp.newFolder("p") + "/cache", 32L << 20,
        BLOCK, CacheProcess.BUCKET_SIZES, 1, 64, null, 60_000, conf);
    try {
      PmemIOEngine engine = (PmemIOEngine) cache.ioEngine;
      AtomicBoolean failing = new AtomicBoolean(true);
      AtomicInteger forces = new AtomicInteger();
      injection.inject(engine, forces, failing);
      TestBlocks blocks = TestBlocks.make(1, 20, BLOCK);
      for (int i = 0; i < 20; i++) {
        cache.cacheBlockWithWait(blocks.keys[i], blocks.blocks[i], false, true);
      }
      long deadline = System.currentTimeMillis() + 20_000;
      while (!cache.ramCache.isEmpty() || forces.get() == 0) {
        assertTrue("the writer did not drain its batch after the failed force: ramCache="
            + cache.ramCache.isEmpty(), System.currentTimeMillis() < deadline);
        Thread.sleep(10);
      }
      assertEquals("blocks of a batch whose force failed are in the backing map", 0,
          cache.backingMap.size());
      assertEquals("space of the failed batch not freed", 0, cache.getAllocator().getUsedSize());

      failing.set(false);
      blocks.cacheAll(cache);
      assertEquals(20, blocks.check(cache).correct);
    } finally {
      cache.shutdown();
    }
  }
}
