package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.ByteBuffAllocator;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;
import org.apache.hadoop.hbase.io.hfile.CacheTestUtils;
import org.apache.hadoop.hbase.io.hfile.CacheTestUtils.HFileBlockPair;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.apache.hadoop.hbase.io.hfile.HFileBlock;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The read path alone, in one run: random 16 KiB block reads through BucketCache.getBlock (every
 * 64th byte touched, then released), as {@link PmemReadWriteBench#randomRead}, for the module's
 * default reads (one pread of the block into a buffer of the block's allocator, then its check),
 * the same where the channels cannot be made uninterruptible (JDK 9+ without sun.nio.ch
 * exported: reads on the checker threads), the module's opt-in reads of the mappings (zero copy,
 * the read path before the default changed), stock offheap and stock file: (upstream's
 * FileIOEngine, which preads each block the same way). {@code alloc} is the allocator the cached blocks carry, which a
 * copying read allocates from: {@code pooled}, the pooled direct buffers of a RegionServer
 * (HBase's default, {@code hbase.server.allocator.pool.enabled=true}), or {@code heap}, where
 * the JDK preads into a temporary direct buffer and copies to the heap. Files in bench.dir
 * (default /dev/shm).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 8, time = 1)
public class PmemReadPathBench {
  @Param({"module-pmem", "module-pmem-fallback", "module-pmem-mapped", "stock-offheap",
      "stock-file"})
  public String engine;

  /** {@code -p alloc=heap} for blocks of the heap allocator. */
  @Param({"pooled"})
  public String alloc;

  BucketCache cache;
  BlockCacheKey[] keys;
  File dir;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = new File(System.getProperty("bench.dir", "/dev/shm") + "/forkset-pmem-jmh-read-"
        + engine);
    BenchFiles.delete(dir);
    dir.mkdirs();
    Configuration conf = HBaseConfiguration.create();
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    dev.forkset.hbase.pmem.PmemTestAccess.uninterruptibleUnavailable(
        engine.equals("module-pmem-fallback"));
    String io = PmemReadWriteBench.ioEngine(engine, dir, conf);
    cache = new BucketCache(io, PmemReadWriteBench.CAPACITY, PmemReadWriteBench.BLOCK, null, 3,
        64, null, 60_000, conf);
    ByteBuffAllocator allocator = alloc.equals("pooled")
        ? ByteBuffAllocator.create(conf, true) : ByteBuffAllocator.HEAP;
    HFileBlockPair[] blocks = CacheTestUtils.generateHFileBlocks(PmemReadWriteBench.BLOCK,
        PmemReadWriteBench.BLOCKS);
    keys = new BlockCacheKey[blocks.length];
    for (int i = 0; i < blocks.length; i++) {
      keys[i] = blocks[i].getBlockName();
      cache.cacheBlockWithWait(keys[i], withAllocator((HFileBlock) blocks[i].getBlock(),
          allocator), false, true);
    }
    while (!cache.ramCache.isEmpty() || cache.backingMap.size() < blocks.length) {
      Thread.sleep(20);
    }
  }

  /** The block as a RegionServer holds it: the same bytes, carrying {@code allocator}. */
  private static HFileBlock withAllocator(HFileBlock block, ByteBuffAllocator allocator)
      throws Exception {
    ByteBuffer serialized = ByteBuffer.allocate(block.getSerializedLength());
    block.serialize(serialized, true);
    serialized.rewind();
    return (HFileBlock) HFileBlock.BLOCK_DESERIALIZER.deserialize(ByteBuff.wrap(serialized),
        allocator);
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
}
