package org.apache.hadoop.hbase.io.hfile.bucket;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.hbase.pmem.PmemCacheConfig;
import dev.forkset.hbase.pmem.PmemTestAccess;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Recovery under load, with far more threads than cores: 16 readers and 4 writers hit a cache
 * whose recovered blocks are still being verified, while the writers fill it past its capacity
 * so buckets are evicted and reused. Some recovered blocks were damaged while the cache was down.
 * Not one read may return wrong bytes, and no damaged block may ever be served.
 */
public class PmemConcurrentRecoveryTest {
  private static final long CAPACITY = 96L << 20;
  private static final int BLOCK = 8 * 1024;
  private static final int BLOCKS = 8000;
  private static final int READERS = 16;
  private static final int WRITERS = 4;

  private File dir;

  @Before
  public void setUp() throws IOException {
    File shm = new File("/dev/shm");
    dir = Files.createTempDirectory(shm.isDirectory() ? shm.toPath()
        : new File(System.getProperty("java.io.tmpdir")).toPath(), "pmem-concurrent").toFile();
    new File(dir, "p0").mkdir();
    new File(dir, "p1").mkdir();
  }

  @After
  public void tearDown() {
    for (String d : new String[] {"p0", "p1"}) {
      File[] files = new File(dir, d).listFiles();
      for (File f : files == null ? new File[0] : files) {
        f.delete();
      }
      new File(dir, d).delete();
    }
    new File(dir, "map").delete();
    new File(dir, "map.discarded").delete();
    dir.delete();
  }

  private BucketCache open() throws IOException {
    Configuration conf = HBaseConfiguration.create();
    conf.set(PmemCacheConfig.MAPPING_SIZE.name, "8m");
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    conf.setLong("hbase.bucketcache.persist.intervalinmillis", 500);
    BucketCache cache = new BucketCache("pmem:" + dir + "/p0/cache," + dir + "/p1/cache", CAPACITY, BLOCK,
        CacheProcess.BUCKET_SIZES, 3, 64, dir + "/map", 60_000, conf);
    // Read in the background by default (HBASE-28804): wait until the map is in.
    assertTrue("the cache was not enabled within 60 s",
        cache.waitForCacheInitialization(60_000));
    return cache;
  }

  @Test
  public void readsAndWritesDuringVerification_neverServeAWrongByte() throws Exception {
    TestBlocks recovered = TestBlocks.make(21, BLOCKS, BLOCK);
    BucketCache first = open();
    recovered.cacheAll(first);
    // Damage one byte of every tenth block while the cache is down.
    boolean[] damaged = new boolean[BLOCKS];
    List<long[]> flips = new ArrayList<>();
    Random r = new Random(5);
    PmemIOEngine engine = (PmemIOEngine) first.ioEngine;
    for (int i = 0; i < BLOCKS; i += 10) {
      BucketEntry e = first.backingMap.get(recovered.keys[i]);
      flips.add(PmemTestAccess.filePosition(engine.store(), e.offset() + r.nextInt(e.getLength())));
      damaged[i] = true;
    }
    first.shutdown();
    for (long[] f : flips) {
      try (RandomAccessFile raf = new RandomAccessFile(dir + "/p" + f[0] + "/cache", "rw")) {
        raf.seek(f[1]);
        int b = raf.read();
        raf.seek(f[1]);
        raf.write(b ^ 0x40);
      }
    }

    TestBlocks fresh = TestBlocks.make(22, BLOCKS, BLOCK);
    // The threads run before the cache is opened and start the moment it is: the background
    // pass starts at the end of the constructor, so they race it from its first block.
    AtomicReference<BucketCache> opened = new AtomicReference<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger reads = new AtomicInteger();
    AtomicInteger servedRecovered = new AtomicInteger();
    AtomicReference<String> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < READERS; t++) {
      threads.add(new Thread(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        BucketCache cache;
        while ((cache = opened.get()) == null) {
          Thread.yield();
        }
        while (!stop.get() && failure.get() == null) {
          int i = rnd.nextInt(BLOCKS);
          boolean old = rnd.nextBoolean();
          int outcome = (old ? recovered : fresh).read(cache, i);
          reads.incrementAndGet();
          if (outcome == 2) {
            failure.compareAndSet(null, "wrong bytes for " + (old ? "recovered" : "new")
                + " block " + i);
          } else if (old && outcome == 0) {
            servedRecovered.incrementAndGet();
            if (damaged[i]) {
              failure.compareAndSet(null, "damaged block " + i + " was served");
            }
          }
        }
      }, "reader-" + t));
    }
    for (int t = 0; t < WRITERS; t++) {
      int from = t * BLOCKS / WRITERS;
      int to = (t + 1) * BLOCKS / WRITERS;
      threads.add(new Thread(() -> {
        BucketCache cache;
        while ((cache = opened.get()) == null) {
          Thread.yield();
        }
        for (int i = from; i < to && !stop.get(); i++) {
          cache.cacheBlockWithWait(fresh.keys[i], fresh.blocks[i], false, true);
        }
      }, "writer-" + t));
    }
    for (Thread t : threads) {
      t.start();
    }
    BucketCache cache = open();
    opened.set(cache);
    try {
      long deadline = System.currentTimeMillis() + 60_000;
      while (!cache.getBackingMapValidated().get() && failure.get() == null) {
        assertTrue("verification did not end", System.currentTimeMillis() < deadline);
        Thread.sleep(5);
      }
      Thread.sleep(500);
      stop.set(true);
      for (Thread t : threads) {
        t.join(60_000);
      }
      System.out.println("recovery under " + READERS + " readers and " + WRITERS + " writers: "
          + reads.get() + " reads, " + servedRecovered.get() + " recovered blocks served; "
          + ((PmemIOEngine) cache.ioEngine).store().stats().getReadsChecked()
          + " reads checked during the pass");
      assertEquals(null, failure.get());
      TestBlocks.Tally t = recovered.check(cache);
      for (int i = 0; i < BLOCKS; i++) {
        assertTrue("damaged block " + i + " served", !damaged[i] || !t.served.get(i));
      }
      assertEquals(0, t.wrong);
      assertEquals(0, fresh.check(cache).wrong);
    } finally {
      stop.set(true);
      cache.shutdown();
    }
  }
}
