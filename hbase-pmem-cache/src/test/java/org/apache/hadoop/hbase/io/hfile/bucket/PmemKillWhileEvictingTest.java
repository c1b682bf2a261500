package org.apache.hadoop.hbase.io.hfile.bucket;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.childjvm.ChildJvm;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * kill -9 of a cache in use: a JVM caches 3,000 blocks, then keeps caching 2,000 other blocks and
 * evicting them again through several checkpoints (the persister walks the backing map while
 * entries leave it), and is killed with SIGKILL right after a checkpoint written while it evicted. A restart on the same files must serve at least
 * 99% of the 3,000 blocks again (they were cached several checkpoint intervals before the kill)
 * and not one wrong byte, for the module engine on two paths and, side by side, for stock
 * {@code file:} with persistence on the custom jar. A checkpoint torn by the evictions (a file
 * that announces a chunk it does not hold) costs the whole cache.
 */
public class PmemKillWhileEvictingTest {
  private static final long CAPACITY = 128L << 20;
  private static final int BLOCK = 16 * 1024;
  private static final int BLOCKS = 3000;
  private static final int CHURN = 2000;
  private static final long SEED = 21;
  private static final long CHURN_SEED = 22;
  private static final long MAPPING = 4L << 20;
  /** Checkpoints completed while the child churns before it is killed. */
  private static final int CHECKPOINTS = 4;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private File shm;
  private String persistence;

  @Before
  public void setUp() throws IOException {
    File shmRoot = new File("/dev/shm");
    shm = Files.createTempDirectory(shmRoot.isDirectory() ? shmRoot.toPath()
        : tmp.getRoot().toPath(), "pmem-churn").toFile();
    persistence = tmp.getRoot() + "/bucket.persistence";
  }

  @After
  public void tearDown() {
    for (File f : shm.listFiles()) {
      f.delete();
    }
    shm.delete();
  }

  private static Configuration conf() {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.bucketcache.pmem.mapping.size", String.valueOf(MAPPING));
    c.set("hbase.bucketcache.pmem.lock.wait.ms", "5s");
    c.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    return c;
  }

  /** Caches the blocks in a child, lets it churn through the checkpoints, kills it. */
  private void churnAndKill(String ioEngine) throws Exception {
    try (ChildJvm child = CacheProcess.start(tmp.getRoot(), "churn", ioEngine, persistence,
        String.valueOf(CAPACITY), String.valueOf(SEED), String.valueOf(BLOCKS),
        String.valueOf(BLOCK), String.valueOf(CHURN_SEED), String.valueOf(CHURN),
        "hbase.bucketcache.pmem.mapping.size=" + MAPPING,
        "hbase.bucketcache.persist.intervalinmillis=1000")) {
      child.awaitLineStartingWith("CACHED", 120, SECONDS);
      child.awaitLineStartingWith("CHURNING", 60, SECONDS);
      for (int i = 0; i < CHECKPOINTS; i++) {
        child.awaitLineStartingWith("CHECKPOINT", 30, SECONDS);
      }
      // Killed right after a checkpoint written while the child was evicting: its walk of the
      // map saw entries leave.
      while (!child.awaitLineStartingWith("CHECKPOINT", 30, SECONDS).endsWith(" evicting")) {
        // a checkpoint of a caching phase: wait for the next one
      }
      child.kill9();
    }
  }

  private void killRestartAndCheck(String what, String ioEngine) throws Exception {
    churnAndKill(ioEngine);
    long start = System.nanoTime();
    BucketCache cache = new BucketCache(ioEngine, CAPACITY, BLOCK, CacheProcess.BUCKET_SIZES, 3,
        64, persistence, 60_000, conf());
    long openMillis = (System.nanoTime() - start) / 1_000_000;
    // Read in the background by default (HBASE-28804): wait until the map is in.
    assertTrue("the cache was not enabled within 60 s",
        cache.waitForCacheInitialization(60_000));
    try {
      long deadline = System.currentTimeMillis() + 60_000;
      while (!cache.getBackingMapValidated().get()) {
        assertTrue("recovered blocks not checked within 60 s",
            System.currentTimeMillis() < deadline);
        Thread.sleep(10);
      }
      TestBlocks.Tally warm = TestBlocks.make(SEED, BLOCKS, BLOCK).check(cache);
      TestBlocks.Tally churn = TestBlocks.make(CHURN_SEED, CHURN, BLOCK).check(cache);
      System.out.println("kill -9 while caching and evicting, " + what + ", restart in "
          + openMillis + " ms (" + new File(persistence).length() + " bytes of map): blocks cached"
          + " before the churn " + warm + " of " + BLOCKS + "; churned blocks " + churn + " of "
          + CHURN);
      assertEquals(0, warm.wrong);
      assertEquals(0, churn.wrong);
      assertTrue(what + ": " + warm + ": fewer than 99% of the blocks cached before the churn"
          + " came back", warm.correct >= BLOCKS * 99 / 100);
    } finally {
      cache.shutdown();
    }
  }

  @Test
  public void moduleOnTwoPaths_servesItsBlocksAgainAfterAKillWhileEvicting() throws Exception {
    killRestartAndCheck("module pmem: (tmpfs + disk)", "pmem:" + new File(shm, "cache") + ","
        + new File(tmp.newFolder("disk"), "cache"));
  }

  @Test
  public void stockFileEngine_servesItsBlocksAgainAfterAKillWhileEvicting() throws Exception {
    killRestartAndCheck("stock file:", "file:" + new File(tmp.newFolder("file"), "cache"));
  }
}
