package org.apache.hadoop.hbase.io.hfile.bucket;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.childjvm.ChildJvm;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * kill -9 of a JVM that runs a warm BucketCache over the module engine on two paths, one on tmpfs
 * (/dev/shm) and one on a regular filesystem, then a restart on the same files: the blocks cached
 * a checkpoint interval before the kill come back, and not one wrong byte is served, also when
 * bytes of the cache files were flipped while the process was dead.
 */
public class PmemKillRecoveryTest {
  private static final long CAPACITY = 64L << 20;
  private static final int BLOCK = 16 * 1024;
  private static final int BLOCKS = 2000;
  private static final int TAIL = 300;
  private static final long SEED = 11;
  private static final long TAIL_SEED = 12;
  /** Matches dev.forkset.hbase.pmem.Layout.HEADER_RESERVE. */
  private static final long HEADER_RESERVE = 2L << 20;
  private static final long MAPPING = 4L << 20;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private File shm;
  private File[] paths;
  private String ioEngine;
  private String persistence;

  @Before
  public void setUp() throws IOException {
    File shmRoot = new File("/dev/shm");
    shm = Files.createTempDirectory(shmRoot.isDirectory() ? shmRoot.toPath()
        : tmp.getRoot().toPath(), "pmem-kill").toFile();
    paths = new File[] {new File(shm, "cache"), new File(tmp.newFolder("disk"), "cache")};
    ioEngine = "pmem:" + paths[0] + "," + paths[1];
    persistence = tmp.getRoot() + "/bucket.persistence";
  }

  @After
  public void tearDown() {
    for (File f : shm.listFiles()) {
      f.delete();
    }
    shm.delete();
  }

  private Configuration conf() {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.bucketcache.pmem.mapping.size", String.valueOf(MAPPING));
    c.set("hbase.bucketcache.pmem.lock.wait.ms", "5s");
    c.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    return c;
  }

  /** Runs the warm cache in a child, kills it after two checkpoints; returns the entries. */
  private long[][] warmAndKill() throws Exception {
    long[][] entries = new long[BLOCKS][];
    try (ChildJvm child = CacheProcess.start(tmp.getRoot(), "warm", ioEngine, persistence,
        String.valueOf(CAPACITY), String.valueOf(SEED), String.valueOf(BLOCKS),
        String.valueOf(BLOCK), String.valueOf(TAIL_SEED), String.valueOf(TAIL),
        "hbase.bucketcache.pmem.mapping.size=" + MAPPING,
        "hbase.bucketcache.persist.intervalinmillis=1000")) {
      for (int i = 0; i < BLOCKS; i++) {
        String[] e = child.awaitLineStartingWith("ENTRY ", 120, SECONDS).split(" ");
        entries[Integer.parseInt(e[1])] = new long[] {Long.parseLong(e[2]),
            Long.parseLong(e[3])};
      }
      child.awaitLineStartingWith("CACHED", 60, SECONDS);
      // The first checkpoint after CACHED may have started before it; the second cannot.
      child.awaitLineStartingWith("CHECKPOINT", 30, SECONDS);
      child.awaitLineStartingWith("CHECKPOINT", 30, SECONDS);
      child.kill9();
    }
    return entries;
  }

  private BucketCache restart() throws IOException {
    BucketCache cache = new BucketCache(ioEngine, CAPACITY, BLOCK, CacheProcess.BUCKET_SIZES, 3, 64,
        persistence, 60_000, conf());
    // Read in the background by default (HBASE-28804): wait until the map is in.
    assertTrue("the cache was not enabled within 60 s",
        cache.waitForCacheInitialization(60_000));
    return cache;
  }

  private static void awaitVerified(BucketCache cache) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 60_000;
    while (!cache.getBackingMapValidated().get()) {
      assertTrue("recovered blocks not verified within 60 s",
          System.currentTimeMillis() < deadline);
      Thread.sleep(10);
    }
  }

  @Test
  public void killedWarmCache_servesItsCheckpointedBlocksAgainAndNoWrongByte() throws Exception {
    warmAndKill();
    long start = System.nanoTime();
    BucketCache cache = restart();
    long openMillis = (System.nanoTime() - start) / 1_000_000;
    try {
      TestBlocks first = TestBlocks.make(SEED, BLOCKS, BLOCK);
      TestBlocks tail = TestBlocks.make(TAIL_SEED, TAIL, BLOCK);
      // Read at once, while recovered blocks are still being verified in the background.
      TestBlocks.Tally early = first.check(cache);
      awaitVerified(cache);
      TestBlocks.Tally t = first.check(cache);
      TestBlocks.Tally tt = tail.check(cache);
      System.out.println("kill -9 of a warm cache (tmpfs + disk), restart in " + openMillis
          + " ms: cached a checkpoint interval before the kill " + t + " of " + BLOCKS
          + "; first reads during verification " + early + "; cached during the last interval "
          + tt + " of " + TAIL + "; engine " + cache.ioEngine.getClass().getSimpleName());
      assertEquals(0, early.wrong);
      assertEquals(0, t.wrong);
      assertEquals(0, tt.wrong);
      assertTrue(t + ": fewer than 99% of the checkpointed blocks came back",
          t.correct >= BLOCKS * 99 / 100);
    } finally {
      cache.shutdown();
    }
  }

  @Test
  public void flippedBytesAfterAKill_areNeverServedAndTheRestIs() throws Exception {
    long[][] entries = warmAndKill();
    Random r = new Random(99);
    List<long[]> flips = new ArrayList<>(); // {file, position}
    // One byte in 5% of the blocks (header or body), then 200 anywhere in the data regions.
    for (int i = 0; i < BLOCKS; i++) {
      if (r.nextInt(20) == 0) {
        long logical = entries[i][0] + r.nextInt((int) entries[i][1]);
        flips.add(filePosition(logical));
      }
    }
    for (int i = 0; i < 200; i++) {
      int f = r.nextInt(2);
      long len = paths[f].length() - HEADER_RESERVE;
      flips.add(new long[] {f, HEADER_RESERVE + (long) (r.nextDouble() * len)});
    }
    for (long[] flip : flips) {
      try (RandomAccessFile raf = new RandomAccessFile(paths[(int) flip[0]], "rw")) {
        raf.seek(flip[1]);
        int b = raf.read();
        raf.seek(flip[1]);
        raf.write(b ^ (1 + r.nextInt(255)));
      }
    }
    boolean[] hit = new boolean[BLOCKS];
    int hits = 0;
    for (int i = 0; i < BLOCKS; i++) {
      for (long[] piece : pieces(entries[i][0], entries[i][1])) {
        for (long[] flip : flips) {
          if (flip[0] == piece[0] && flip[1] >= piece[1] && flip[1] < piece[2]) {
            hit[i] = true;
          }
        }
      }
      hits += hit[i] ? 1 : 0;
    }
    BucketCache cache = restart();
    try {
      awaitVerified(cache);
      TestBlocks first = TestBlocks.make(SEED, BLOCKS, BLOCK);
      TestBlocks.Tally t = first.check(cache);
      int intactMissing = 0;
      for (int i = 0; i < BLOCKS; i++) {
        if (!hit[i] && !t.served.get(i)) {
          intactMissing++;
        }
        assertTrue("block " + i + " was served although a byte of it was flipped",
            !hit[i] || !t.served.get(i));
      }
      System.out.println("kill -9, then " + flips.size() + " random bytes flipped in the cache"
          + " files (" + hits + " blocks hit): " + t + "; intact blocks not served: "
          + intactMissing);
      assertEquals(0, t.wrong);
      assertTrue("intact blocks lost: " + intactMissing, intactMissing <= BLOCKS / 100);
    } finally {
      cache.shutdown();
    }
  }

  /** {file, from, to} of each part of a block, split where it crosses a segment boundary. */
  private static List<long[]> pieces(long logical, long length) {
    List<long[]> out = new ArrayList<>();
    long pos = logical;
    long end = logical + length;
    while (pos < end) {
      long segmentEnd = (pos / MAPPING + 1) * MAPPING;
      long to = Math.min(end, segmentEnd);
      long[] fp = filePosition(pos);
      out.add(new long[] {fp[0], fp[1], fp[1] + (to - pos)});
      pos = to;
    }
    return out;
  }

  /** {file, position} of a logical offset, as dev.forkset.hbase.pmem.Layout places it. */
  private static long[] filePosition(long logical) {
    long segment = logical / MAPPING;
    long file = segment % 2;
    return new long[] {file, HEADER_RESERVE + (segment / 2) * MAPPING + logical % MAPPING};
  }
}
