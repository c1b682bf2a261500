package org.apache.hadoop.hbase.io.hfile.bucket;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.hbase.pmem.ProcSelf;
import java.io.File;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A stopped cache unmaps its files at once when no reader holds one of its blocks (BucketCache
 * waits, bounded, for readers to release them, then lets the engine unmap; patch 0060), and
 * leaves the mappings to the garbage collector when a reader still holds a block at the end of
 * the wait, so that block stays readable. The mappings are counted in /proc/self/maps without a
 * garbage collection. Blocks held across the stop share the mappings only with
 * {@code hbase.bucketcache.pmem.read=mapped} (opt-in), which those tests set; by default a read
 * hands out a copy and nothing a reader holds refers to the mappings.
 */
public class PmemShutdownUnmapTest {
  private static final int BLOCK = 8 * 1024;
  private static final long WAIT_MS = 1000;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private File p0;
  private File p1;
  private Configuration conf;

  @Before
  public void setUp() throws Exception {
    p0 = new File(tmp.newFolder("pmem0"), "cache");
    p1 = new File(tmp.newFolder("pmem1"), "cache");
    conf = HBaseConfiguration.create();
    conf.set("hbase.bucketcache.pmem.mapping.size", String.valueOf(4L << 20));
    conf.set("hbase.bucketcache.pmem.lock.wait.ms", "0");
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    conf.setLong("hbase.bucketcache.persist.intervalinmillis", 3_600_000);
    conf.setLong("hbase.bucketcache.shutdown.release.wait.ms", WAIT_MS);
    // Held blocks are views of the mappings only with reads of the mappings (opt-in).
    conf.set("hbase.bucketcache.pmem.read", "mapped");
  }

  private BucketCache open() throws IOException {
    BucketCache cache = new BucketCache("pmem:" + p0 + "," + p1, 32L << 20, BLOCK,
      new int[] { 9 * 1024, 17 * 1024 }, 3, 64, tmp.getRoot() + "/bucket.persistence", 60_000,
      conf);
    // Read in the background by default (HBASE-28804): wait until the map is in.
    assertTrue("the cache was not enabled within 60 s",
        cache.waitForCacheInitialization(60_000));
    return cache;
  }

  private int mappings() throws IOException {
    return ProcSelf.mappings(p0) + ProcSelf.mappings(p1);
  }

  /** Shuts the cache down; returns how long it took in ms. */
  private static long timedShutdown(BucketCache cache) {
    long start = System.nanoTime();
    cache.shutdown();
    return (System.nanoTime() - start) / 1_000_000;
  }

  @Test
  public void shutdown_unmapsAtOnceWhenNoReaderHoldsABlock() throws Exception {
    // A wait far longer than the shutdown's own work (final persist, fsyncs, writer joins) may
    // take on a loaded machine: a shutdown that waited shows as at least half of it.
    conf.setLong("hbase.bucketcache.shutdown.release.wait.ms", 60_000);
    BucketCache cache = open();
    TestBlocks blocks = TestBlocks.make(21, 100, BLOCK);
    blocks.cacheAll(cache);
    assertEquals(0, blocks.check(cache).wrong); // read and released
    assertTrue("not mapped", mappings() > 0);
    long took = timedShutdown(cache);
    assertEquals("mappings left after a shutdown with no block held", 0, mappings());
    assertTrue("shutdown waited " + took + " ms with no block held", took < 30_000);
    assertEquals(0, ProcSelf.descriptors(p0) + ProcSelf.descriptors(p1));
    // The unmapped cache starts warm again.
    BucketCache again = open();
    try {
      assertEquals(100, blocks.check(again).correct);
    } finally {
      again.shutdown();
    }
  }

  @Test
  public void shutdown_waitsForAHeldBlockAndLeavesTheMappingWhenItIsNotReleased()
    throws Exception {
    BucketCache cache = open();
    TestBlocks blocks = TestBlocks.make(22, 20, BLOCK);
    blocks.cacheAll(cache);
    Cacheable held = cache.getBlock(blocks.keys[5], false, false, false);
    assertTrue("block 5 not served", held != null);
    try {
      long took = timedShutdown(cache);
      assertTrue("shutdown returned after " + took + " ms, before the " + WAIT_MS
        + " ms wait for the held block", took >= WAIT_MS);
      assertTrue("shutdown took " + took + " ms for a wait of " + WAIT_MS, took < WAIT_MS + 20_000);
      assertTrue("a held block's mapping was unmapped", mappings() > 0);
      assertTrue("block 5 changed after shutdown", blocks.sameAs(held, 5));
    } finally {
      held.release();
    }
    assertEquals(0, ProcSelf.descriptors(p0) + ProcSelf.descriptors(p1));
  }

  @Test
  public void shutdown_waitsForABlockHeldAfterItsEvictionToo() throws Exception {
    BucketCache cache = open();
    TestBlocks blocks = TestBlocks.make(23, 20, BLOCK);
    blocks.cacheAll(cache);
    Cacheable held = cache.getBlock(blocks.keys[7], false, false, false);
    assertTrue("block 7 not served", held != null);
    // Evicted while held: its entry leaves the backing map, the reader keeps the memory.
    assertTrue(cache.evictBlock(blocks.keys[7]));
    assertTrue(!cache.backingMap.containsKey(blocks.keys[7]));
    try {
      long took = timedShutdown(cache);
      assertTrue("shutdown returned after " + took + " ms, before the " + WAIT_MS
        + " ms wait for the held block", took >= WAIT_MS);
      assertTrue("a held block's mapping was unmapped", mappings() > 0);
      assertTrue("block 7 changed after shutdown", blocks.sameAs(held, 7));
    } finally {
      held.release();
    }
  }

  @Test
  public void shutdown_unmapsOnceAHeldBlockIsReleasedDuringTheWait() throws Exception {
    conf.setLong("hbase.bucketcache.shutdown.release.wait.ms", 30_000);
    BucketCache cache = open();
    TestBlocks blocks = TestBlocks.make(24, 20, BLOCK);
    blocks.cacheAll(cache);
    Cacheable held = cache.getBlock(blocks.keys[2], false, false, false);
    assertTrue("block 2 not served", held != null);
    AtomicBoolean readable = new AtomicBoolean();
    long start = System.nanoTime();
    Thread reader = new Thread(() -> {
      try {
        Thread.sleep(500);
        // Read during the wait: the files are still mapped.
        readable.set(blocks.sameAs(held, 2));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        held.release();
      }
    });
    reader.start();
    cache.shutdown();
    long took = (System.nanoTime() - start) / 1_000_000;
    reader.join();
    assertTrue("the held block read wrong during the wait", readable.get());
    assertTrue("shutdown returned after " + took + " ms, before the block was released",
      took >= 500);
    assertTrue("shutdown took " + took + " ms, the release came after 500", took < 30_000);
    assertEquals("mappings left after the held block was released", 0, mappings());
  }

  /**
   * By default a read hands out a copy read from the files, so the engine reports it does not
   * share its memory, BucketCache does not wait for held blocks (patch 0060 waits only for
   * engines that share it) and the files are unmapped at once; the held blocks, one of them
   * evicted, stay readable and right after the stop.
   */
  @Test
  public void shutdown_withHeldCopies_unmapsAtOnceAndTheCopiesStayReadable() throws Exception {
    conf.set("hbase.bucketcache.pmem.read", "copy");
    conf.setLong("hbase.bucketcache.shutdown.release.wait.ms", 60_000);
    BucketCache cache = open();
    assertTrue(!cache.ioEngine.usesSharedMemory());
    TestBlocks blocks = TestBlocks.make(25, 20, BLOCK);
    blocks.cacheAll(cache);
    Cacheable held = cache.getBlock(blocks.keys[5], false, false, false);
    Cacheable evicted = cache.getBlock(blocks.keys[7], false, false, false);
    assertTrue("blocks 5 and 7 not served", held != null && evicted != null);
    assertTrue(cache.evictBlock(blocks.keys[7]));
    try {
      long took = timedShutdown(cache);
      assertTrue("shutdown waited " + took + " ms for blocks that are copies", took < 30_000);
      assertEquals("mappings left after the shutdown", 0, mappings());
      assertEquals(0, ProcSelf.descriptors(p0) + ProcSelf.descriptors(p1));
      assertTrue("block 5 changed after shutdown", blocks.sameAs(held, 5));
      assertTrue("block 7 changed after shutdown", blocks.sameAs(evicted, 7));
    } finally {
      held.release();
      evicted.release();
    }
  }
}
