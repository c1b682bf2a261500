package org.apache.hadoop.hbase.io.hfile.bucket;

import java.nio.ByteBuffer;
import java.util.Random;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.io.ByteBuffAllocator;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;
import org.apache.hadoop.hbase.io.hfile.BlockType;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.apache.hadoop.hbase.io.hfile.HFileBlock;
import org.apache.hadoop.hbase.io.hfile.HFileBlockBuilder;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.apache.hadoop.hbase.util.ChecksumType;

/**
 * HFile blocks made from a seed, so a test and a child JVM (or two runs) make the same blocks,
 * and the tally of what a cache serves for them: correct, missing or wrong.
 */
final class TestBlocks {

  final BlockCacheKey[] keys;
  final HFileBlock[] blocks;

  private TestBlocks(int n) {
    keys = new BlockCacheKey[n];
    blocks = new HFileBlock[n];
  }

  /** {@code n} blocks of {@code size} bytes (header included) of HFile "seed-<seed>". */
  static TestBlocks make(long seed, int n, int size) {
    TestBlocks t = new TestBlocks(n);
    Random r = new Random(seed);
    HFileContext ctx = new HFileContextBuilder().withHBaseCheckSum(false)
        .withIncludesMvcc(true).withIncludesTags(false)
        .withCompression(Compression.Algorithm.NONE).withBytesPerCheckSum(0)
        .withChecksumType(ChecksumType.NULL).build();
    int header = HConstants.HFILEBLOCK_HEADER_SIZE_NO_CHECKSUM;
    for (int i = 0; i < n; i++) {
      ByteBuffer buf = ByteBuffer.allocate(size);
      r.nextBytes(buf.array());
      BlockType.DATA.write(buf);
      buf.putInt(size - header);
      buf.putInt(size - header);
      buf.putLong(-1L);
      buf.rewind();
      t.blocks[i] = new HFileBlockBuilder().withBlockType(BlockType.DATA)
          .withOnDiskSizeWithoutHeader(size - header)
          .withUncompressedSizeWithoutHeader(size - header).withPrevBlockOffset(-1)
          .withByteBuff(ByteBuff.wrap(buf)).withFillHeader(HFileBlock.DONT_FILL_HEADER)
          .withOffset((long) i * size).withNextBlockOnDiskSize(-1)
          .withOnDiskDataSizeWithHeader(size).withHFileContext(ctx)
          .withByteBuffAllocator(ByteBuffAllocator.HEAP).build();
      t.keys[i] = new BlockCacheKey("seed-" + seed, (long) i * size);
    }
    return t;
  }

  static ByteBuffer serialized(Cacheable c) {
    ByteBuffer b = ByteBuffer.allocate(c.getSerializedLength());
    c.serialize(b, true);
    b.rewind();
    return b;
  }

  /** Caches every block, waiting on a full writer queue rather than dropping. */
  void cacheAll(BucketCache cache) throws InterruptedException {
    cache(cache, 0, keys.length);
  }

  void cache(BucketCache cache, int from, int to) throws InterruptedException {
    for (int i = from; i < to; i++) {
      cache.cacheBlockWithWait(keys[i], blocks[i], false, true);
    }
    long deadline = System.currentTimeMillis() + 60_000;
    while (!cache.ramCache.isEmpty() || !allIn(cache, from, to)) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("blocks not written within 60 s: " + cache.backingMap.size());
      }
      Thread.sleep(10);
    }
  }

  private boolean allIn(BucketCache cache, int from, int to) {
    for (int i = from; i < to; i++) {
      if (!cache.backingMap.containsKey(keys[i])) {
        return false;
      }
    }
    return true;
  }

  /** Correct, missing and wrong reads of every block; a read that throws counts as wrong. */
  Tally check(BucketCache cache) {
    Tally t = new Tally();
    for (int i = 0; i < keys.length; i++) {
      t.add(i, read(cache, i));
    }
    return t;
  }

  /** 0 correct, 1 missing, 2 wrong (or an exception). */
  int read(BucketCache cache, int i) {
    Cacheable got;
    try {
      got = cache.getBlock(keys[i], false, false, false);
    } catch (RuntimeException e) {
      return 2;
    }
    if (got == null) {
      return 1;
    }
    try {
      return serialized(got).equals(serialized(blocks[i])) ? 0 : 2;
    } catch (RuntimeException e) {
      return 2;
    } finally {
      got.release();
    }
  }

  /** Whether {@code got} holds the bytes of block {@code i}. */
  boolean sameAs(Cacheable got, int i) {
    return serialized(got).equals(serialized(blocks[i]));
  }

  /** What a cache served. */
  static final class Tally {
    int correct;
    int missing;
    int wrong;
    final java.util.BitSet served = new java.util.BitSet();

    void add(int i, int outcome) {
      if (outcome == 0) {
        correct++;
        served.set(i);
      } else if (outcome == 1) {
        missing++;
      } else {
        wrong++;
      }
    }

    @Override
    public String toString() {
      return "correct=" + correct + " missing=" + missing + " wrong=" + wrong;
    }
  }
}
