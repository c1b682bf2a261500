package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.apache.hadoop.hbase.io.hfile.HFileBlock;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the self-checking blocks cost, stock offheap vs the module engine in one run. Per block:
 * <ul>
 *   <li>{@code write}: what a BucketCache writer does for one HFile block: offheap copies block
 *       and metadata; the module copies them, checksums the stored bytes and writes the header.
 *   <li>{@code writeWithoutCheck}: the copies alone (for the module: its raw write), the
 *       baseline of the check's write cost.
 *   <li>{@code read}: BucketCache.getBlock of a random cached block, every 64th byte touched: the
 *       steady state, in which the module does not check (its recovered blocks are verified).
 *   <li>{@code engineRead}: the engine's own read of a random block (no BucketCache map lookup
 *       or lock), every 64th byte touched; the module does not check.
 *   <li>{@code engineReadChecked}: the same with the check a read makes while a recovery pass
 *       runs (offheap: as {@code engineRead}), so {@code engineReadChecked / engineRead} is the
 *       price of the check on the read path.
 * </ul>
 * Cache files in bench.dir (default /dev/shm), so every engine is DRAM and only the engines'
 * work differs. Not part of the tests; run with -Pbench.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BlockCheckBench {
  static final long CAPACITY = 512L << 20;
  static final int BLOCKS = 2048;

  @Param({"stock-offheap", "module-pmem"})
  public String engine;

  @Param({"16384", "65536"})
  public int blockSize;

  BucketCache cache;
  TestBlocks blocks;
  BucketEntry[] entries;
  ByteBuff writeBody;
  ByteBuffer writeMeta;
  BucketEntry[] writeSlots;
  File dir;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = new File(System.getProperty("bench.dir", "/dev/shm") + "/forkset-blockcheck-" + engine);
    BenchFiles.delete(dir);
    dir.mkdirs();
    Configuration conf = HBaseConfiguration.create();
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    String io = PmemReadWriteBench.ioEngine(engine, dir, conf);
    cache = new BucketCache(io, CAPACITY, blockSize, null, 3, 64, null, 60_000, conf);
    blocks = TestBlocks.make(7, BLOCKS, blockSize);
    blocks.cacheAll(cache);
    entries = new BucketEntry[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
      entries[i] = cache.backingMap.get(blocks.keys[i]);
    }
    // Writes go to the upper half of the cache, above the cached blocks.
    HFileBlock block = blocks.blocks[0];
    writeBody = block.getBufferReadOnly();
    writeMeta = ByteBuffer.allocate(HFileBlock.BLOCK_METADATA_SPACE);
    block.getMetaData(writeMeta);
    int header = cache.ioEngine instanceof BlockVerifyingIOEngine
        ? ((BlockVerifyingIOEngine) cache.ioEngine).blockHeaderSize() : 0;
    int length = header + writeBody.remaining() + writeMeta.remaining();
    int stride = (length + 255) / 256 * 256;
    int slots = (int) (CAPACITY / 2 / stride) - 1;
    writeSlots = new BucketEntry[slots];
    for (int i = 0; i < slots; i++) {
      writeSlots[i] = new BucketEntry(CAPACITY / 2 + (long) i * stride, length, length, 0, false,
          e -> () -> {
          }, null);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    cache.shutdown();
    BenchFiles.delete(dir);
  }

  private BucketEntry slot() {
    return writeSlots[ThreadLocalRandom.current().nextInt(writeSlots.length)];
  }

  @Benchmark
  public void write() throws Exception {
    BucketEntry e = slot();
    if (cache.ioEngine instanceof BlockVerifyingIOEngine) {
      ((BlockVerifyingIOEngine) cache.ioEngine).writeBlock(blocks.keys[0], e,
          writeBody.duplicate(), writeMeta.duplicate());
    } else {
      plainWrite(e);
    }
  }

  @Benchmark
  public void writeWithoutCheck() throws Exception {
    plainWrite(slot());
  }

  private void plainWrite(BucketEntry e) throws Exception {
    long offset = e.offset();
    cache.ioEngine.write(writeBody.duplicate(), offset);
    cache.ioEngine.write(writeMeta.duplicate(), offset + writeBody.remaining());
  }

  private static long touch(Cacheable c) {
    ByteBuff buf = ((HFileBlock) c).getBufferWithoutHeader();
    long sum = 0;
    for (int i = 0; i < buf.limit(); i += 64) {
      sum += buf.get(i);
    }
    return sum;
  }

  @Benchmark
  public long read() {
    int i = ThreadLocalRandom.current().nextInt(BLOCKS);
    Cacheable c = cache.getBlock(blocks.keys[i], false, false, false);
    try {
      return touch(c);
    } finally {
      c.release();
    }
  }

  @Benchmark
  public long engineRead() throws Exception {
    return engineRead(false);
  }

  @Benchmark
  public long engineReadChecked() throws Exception {
    return engineRead(true);
  }

  private long engineRead(boolean check) throws Exception {
    int i = ThreadLocalRandom.current().nextInt(BLOCKS);
    Cacheable c = cache.ioEngine instanceof BlockVerifyingIOEngine
        ? ((BlockVerifyingIOEngine) cache.ioEngine).read(blocks.keys[i], entries[i], check)
        : cache.ioEngine.read(entries[i]);
    if (cache.ioEngine.usesSharedMemory()) {
      c.retain();
    }
    try {
      return touch(c);
    } finally {
      c.release();
    }
  }
}
