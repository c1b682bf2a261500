package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.After;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Several starts on the same new paths at once: one wins and keeps its files; a start that
 * loses the lock must not delete the files the winner created and locked. Within one JVM a held
 * lock is reported like another process's (OverlappingFileLockException), so threads stand in
 * for processes.
 */
public class PmemStoreCreateRaceTest {
  private static final long MIB = 1L << 20;
  private static final int STARTERS = 6;
  private static final int ROUNDS = 25;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private final ExecutorService pool = Executors.newFixedThreadPool(STARTERS);

  @After
  public void tearDown() throws InterruptedException {
    pool.shutdownNow();
    assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS));
  }

  private static PmemCacheConfig config(File a, File b) {
    Configuration c = new Configuration(false);
    c.set(PmemCacheConfig.MAPPING_SIZE.name, "2m");
    c.set(PmemCacheConfig.LOCK_WAIT.name, "0");
    return PmemCacheConfig.parse("pmem:" + a + "," + b, 8 * MIB, null, c);
  }

  @Test
  public void concurrentStartsOnNewPaths_loserKeepsTheWinnersFiles() throws Exception {
    for (int round = 0; round < ROUNDS; round++) {
      File a = new File(tmp.newFolder("a" + round), "cache");
      File b = new File(tmp.newFolder("b" + round), "cache");
      PmemCacheConfig config = config(a, b);
      CyclicBarrier start = new CyclicBarrier(STARTERS);
      List<Future<PmemStore>> starts = new ArrayList<>();
      for (int i = 0; i < STARTERS; i++) {
        starts.add(pool.submit(() -> {
          start.await();
          try {
            return PmemStore.open(config);
          } catch (IOException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("is in use by"));
            return null;
          }
        }));
      }
      List<PmemStore> winners = new ArrayList<>();
      for (Future<PmemStore> f : starts) {
        PmemStore s = f.get(60, TimeUnit.SECONDS);
        if (s != null) {
          winners.add(s);
        }
      }
      assertEquals("round " + round + ": starts that got the files", 1, winners.size());
      // Every loser has finished: the winner's files must still be there.
      assertTrue("round " + round + ": " + a + " was deleted by a losing start", a.exists());
      assertTrue("round " + round + ": " + b + " was deleted by a losing start", b.exists());
      winners.get(0).close();
      PmemStore again = PmemStore.open(config);
      try {
        assertEquals("warm", again.stats().getStartMode());
      } finally {
        again.close();
      }
    }
  }
}
