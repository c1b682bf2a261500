package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.File;
import java.nio.ByteBuffer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.hfile.CacheTestUtils;
import org.apache.hadoop.hbase.io.hfile.CacheTestUtils.HFileBlockPair;
import org.apache.hadoop.hbase.io.hfile.Cacheable;

/**
 * The restart scenario: 3000 cached 8 KiB blocks, clean shutdown, restart. Prints
 * "RESULT engine restartMillis correct missing wrong" for one engine. Run on the class path of
 * the build it measures (custom jar + module, or upstream hbase-server alone).
 */
public final class RestartBench {
  static final int BLOCKS = 3000;
  static final int BLOCK = 8 * 1024;
  static final long CAPACITY = 256L << 20;

  public static void main(String[] args) throws Exception {
    String engine = args[0];
    File dir = new File(args[1] + "/forkset-pmem-restart-" + engine);
    BenchFiles.delete(dir);
    dir.mkdirs();
    Configuration conf = HBaseConfiguration.create();
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    String io = PmemReadWriteBench.ioEngine(engine.replace("upstream-", "stock-"), dir, conf);
    String persistence = dir + "/bucket.persistence";
    HFileBlockPair[] blocks = CacheTestUtils.generateHFileBlocks(BLOCK, BLOCKS);
    BucketCache first = new BucketCache(io, CAPACITY, BLOCK, null, 3, 64, persistence, 60_000,
        conf);
    for (HFileBlockPair b : blocks) {
      first.cacheBlockWithWait(b.getBlockName(), b.getBlock(), false, true);
    }
    while (!first.ramCache.isEmpty() || first.backingMap.size() < BLOCKS) {
      Thread.sleep(20);
    }
    first.shutdown();
    long t0 = System.nanoTime();
    BucketCache second = new BucketCache(io, CAPACITY, BLOCK, null, 3, 64, persistence, 60_000,
        conf);
    long restartMillis = (System.nanoTime() - t0) / 1_000_000;
    int correct = 0;
    int missing = 0;
    int wrong = 0;
    for (HFileBlockPair b : blocks) {
      Cacheable got;
      try {
        got = second.getBlock(b.getBlockName(), false, false, false);
      } catch (RuntimeException e) {
        got = null;
      }
      if (got == null) {
        missing++;
        continue;
      }
      if (bytes(got).equals(bytes(b.getBlock()))) {
        correct++;
      } else {
        wrong++;
      }
      got.release();
    }
    second.shutdown();
    BenchFiles.delete(dir);
    System.out.println("RESULT " + engine + " " + restartMillis + " " + correct + " " + missing
        + " " + wrong + " " + Runtime.getRuntime().availableProcessors());
  }

  private static ByteBuffer bytes(Cacheable c) {
    ByteBuffer b = ByteBuffer.allocate(c.getSerializedLength());
    c.serialize(b, true);
    b.rewind();
    return b;
  }
}
