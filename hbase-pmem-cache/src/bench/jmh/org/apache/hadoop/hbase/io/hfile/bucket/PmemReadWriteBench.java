package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;
import org.apache.hadoop.hbase.io.hfile.CacheTestUtils;
import org.apache.hadoop.hbase.io.hfile.CacheTestUtils.HFileBlockPair;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.apache.hadoop.hbase.io.hfile.HFileBlock;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Random block reads through BucketCache.getBlock (every cache line of the block touched, then
 * released), random 16 KiB block writes into the IOEngine, and writer batches (random block writes
 * followed by the sync BucketCache's writer thread runs after each batch), for the module engine
 * (two files; writes to the files by default, module-pmem-write-mapped copies into the mappings),
 * stock offheap, stock pmem: and stock file: (one file). Files live in bench.dir (default
 * /dev/shm).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class PmemReadWriteBench {
  static final int BLOCK = 16 * 1024;
  static final int BLOCKS = 8192;
  static final long CAPACITY = 512L << 20;

  @Param({"module-pmem", "stock-offheap", "stock-pmem"})
  public String engine;

  BucketCache cache;
  BlockCacheKey[] keys;
  ByteBuffer writeBlock;
  File dir;

  static String ioEngine(String engine, File dir, Configuration conf) {
    switch (engine) {
      case "module-pmem-write-mapped":
        conf.set("hbase.bucketcache.pmem.write", "mapped");
        return moduleFiles(dir); // the module engine, writes into the mappings (opt-in)
      case "module-pmem-mapped":
        conf.set("hbase.bucketcache.pmem.read", "mapped");
        return moduleFiles(dir); // the module engine, reads of the mappings (opt-in)
      case "module-pmem-fallback": // set up by the caller: reads on the checker threads
      case "module-pmem":
        return moduleFiles(dir);
      case "stock-pmem":
        conf.set("hbase.bucketcache.pmem.engine", "stock");
        new File(dir, "s").mkdirs();
        return "pmem:" + dir + "/s/cache";
      case "stock-offheap":
        return "offheap";
      case "stock-file":
        new File(dir, "f").mkdirs();
        return "file:" + dir + "/f/cache";
      default:
        throw new IllegalArgumentException(engine);
    }
  }

  private static String moduleFiles(File dir) {
    new File(dir, "p0").mkdirs();
    new File(dir, "p1").mkdirs();
    return "pmem:" + dir + "/p0/cache," + dir + "/p1/cache";
  }

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = new File(System.getProperty("bench.dir", "/dev/shm") + "/forkset-pmem-jmh-" + engine);
    BenchFiles.delete(dir);
    dir.mkdirs();
    Configuration conf = HBaseConfiguration.create();
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    String io = ioEngine(engine, dir, conf);
    cache = new BucketCache(io, CAPACITY, BLOCK, null, 3, 64, null, 60_000, conf);
    HFileBlockPair[] blocks = CacheTestUtils.generateHFileBlocks(BLOCK, BLOCKS);
    keys = new BlockCacheKey[blocks.length];
    for (int i = 0; i < blocks.length; i++) {
      keys[i] = blocks[i].getBlockName();
      cache.cacheBlockWithWait(keys[i], blocks[i].getBlock(), false, true);
    }
    while (!cache.ramCache.isEmpty() || cache.backingMap.size() < blocks.length) {
      Thread.sleep(20);
    }
    writeBlock = ByteBuffer.allocateDirect(BLOCK);
    for (int i = 0; i < BLOCK; i++) {
      writeBlock.put(i, (byte) i);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    cache.shutdown();
    BenchFiles.delete(dir);
  }

  @Benchmark
  public long randomRead() {
    BlockCacheKey key = keys[ThreadLocalRandom.current().nextInt(keys.length)];
    Cacheable c = cache.getBlock(key, false, false, false);
    try {
      ByteBuff buf = ((HFileBlock) c).getBufferWithoutHeader();
      long sum = 0;
      for (int i = 0; i < buf.limit(); i += 64) {
        sum += buf.get(i);
      }
      return sum;
    } finally {
      c.release();
    }
  }

  /** Writes into the upper half of the engine, above the cached blocks. */
  @Benchmark
  public void randomWrite() throws Exception {
    long slots = CAPACITY / 2 / BLOCK;
    long offset = CAPACITY / 2 + ThreadLocalRandom.current().nextLong(slots - 1) * BLOCK;
    write(offset);
  }

  /**
   * A writer batch as BucketCache's writer thread does it: {@link #BATCH} blocks at random places
   * of the upper half, then the engine's sync, whose cost depends on how the engine tracks what
   * it must force (a range spanning the batch, or the blocks written).
   */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void randomWriteBatchThenSync() throws Exception {
    long slots = CAPACITY / 2 / BLOCK;
    for (int i = 0; i < BATCH; i++) {
      long offset = CAPACITY / 2 + ThreadLocalRandom.current().nextLong(slots - 1) * BLOCK;
      write(offset);
    }
    cache.ioEngine.sync();
  }

  /**
   * A 16 KiB entry at {@code offset} as BucketCache writes it to the engine: for the module
   * engine its block write (header with the body's checksum, body; hbase.bucketcache.pmem.write
   * decides positional writes or copies into the mappings), for the stock engines a raw write.
   */
  private void write(long offset) throws java.io.IOException {
    if (cache.ioEngine instanceof PmemIOEngine) {
      dev.forkset.hbase.pmem.PmemStore store = ((PmemIOEngine) cache.ioEngine).store();
      ByteBuffer body = writeBlock.duplicate();
      body.limit(BLOCK - store.blockHeaderSize());
      store.writeBlock(WRITE_KEY, offset, BLOCK, ByteBuff.wrap(body), ByteBuffer.allocate(0));
    } else {
      cache.ioEngine.write(writeBlock.duplicate(), offset);
    }
  }

  private static final BlockCacheKey WRITE_KEY = new BlockCacheKey("bench-write", 0);

  static final int BATCH = 8;
}
