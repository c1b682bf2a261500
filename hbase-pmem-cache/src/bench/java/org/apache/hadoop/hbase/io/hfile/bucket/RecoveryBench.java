package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.hbase.pmem.PmemCacheMXBean;
import java.io.File;
import java.io.PrintStream;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;

/**
 * Time to verify a recovered cache and to checkpoint its map, at a size where the numbers mean
 * something: a module cache of {@code capacityMiB} filled with blocks of {@code blockSize}, a
 * checkpoint taken while it runs (timed), a restart, the background pass (timed by the engine).
 * Arguments: scratch dir, capacity in MiB, block size, output file (appended).
 */
public final class RecoveryBench {
  private RecoveryBench() {}

  public static void main(String[] args) throws Exception {
    File dir = new File(args[0], "forkset-recovery-bench");
    long capacity = Long.parseLong(args[1]) << 20;
    int blockSize = Integer.parseInt(args[2]);
    PrintStream out = new PrintStream(new java.io.FileOutputStream(args[3], true), true, "UTF-8");
    BenchFiles.delete(dir);
    new File(dir, "p0").mkdirs();
    new File(dir, "p1").mkdirs();
    Configuration conf = HBaseConfiguration.create();
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    conf.setLong("hbase.bucketcache.persist.intervalinmillis", 3_600_000);
    String io = "pmem:" + dir + "/p0/cache," + dir + "/p1/cache";
    String map = dir + "/map";
    int[] sizes = {blockSize + 1024};
    try {
      BucketCache first = new BucketCache(io, capacity, blockSize, sizes, 3, 64, map, 60_000,
          conf);
      int n = (int) (capacity / (blockSize + 1024) * 9 / 10);
      int batch = 4096;
      for (int from = 0; from < n; from += batch) {
        TestBlocks.make(from, Math.min(batch, n - from), blockSize).cacheAll(first);
      }
      long t0 = System.nanoTime();
      first.persistToFile();
      long persistMs = (System.nanoTime() - t0) / 1_000_000;
      long mapBytes = new File(map).length();
      first.shutdown();

      t0 = System.nanoTime();
      BucketCache second = new BucketCache(io, capacity, blockSize, sizes, 3, 64, map, 60_000,
          conf);
      long openMs = (System.nanoTime() - t0) / 1_000_000;
      while (!second.getBackingMapValidated().get()) {
        Thread.sleep(5);
      }
      long passMs = (System.nanoTime() - t0) / 1_000_000 - openMs;
      PmemCacheMXBean s = ((PmemIOEngine) second.ioEngine).store().stats();
      double gib = s.getRecoveredBytesChecked() / (double) (1L << 30);
      out.printf("| %d MiB | %d | %,d | %,d ms | %,d KiB | %,d ms | %,d ms | %.0f ms | %.0f ms"
          + " | %s |%n", capacity >> 20, blockSize, n, persistMs, mapBytes >> 10, openMs, passMs,
          passMs / gib, s.getVerifyMillisPerGiB(), s.getChecksum());
      second.shutdown();
    } finally {
      BenchFiles.delete(dir);
    }
  }
}
