package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.nio.ByteBuffer;
import java.util.Random;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;
import org.junit.Test;

public class BlockCheckTest {
  private static final BlockCacheKey KEY = new BlockCacheKey("0123456789abcdef", 65536);
  private final BlockCheck check = new BlockCheck(0x1234_5678_9abc_def0L, Crc.fastest());

  private static ByteBuffer body(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return ByteBuffer.wrap(b);
  }

  private static ByteBuffer[] split(ByteBuffer b, int at) {
    ByteBuffer a = b.duplicate();
    a.limit(at);
    ByteBuffer c = b.duplicate();
    c.position(at);
    return new ByteBuffer[] {a.slice(), c.slice()};
  }

  @Test
  public void mismatch_isNullForTheBlockTheHeaderWasWrittenFor() {
    ByteBuffer body = body(9000, 1);
    ByteBuffer h = check.header(KEY, 9000, new ByteBuffer[] {body});
    assertEquals(BlockCheck.HEADER_SIZE, h.remaining());
    assertNull(check.mismatch(KEY, 9000, h, new ByteBuffer[] {body}));
    assertNull("a body split over two mappings", check.mismatch(KEY, 9000, h, split(body, 123)));
  }

  @Test
  public void mismatch_namesAnotherKey() {
    ByteBuffer body = body(100, 2);
    ByteBuffer h = check.header(KEY, 100, new ByteBuffer[] {body});
    String why = check.mismatch(new BlockCacheKey("0123456789abcdef", 0), 100, h,
        new ByteBuffer[] {body});
    assertTrue(why, why.contains("another key"));
    assertTrue(check.mismatch(new BlockCacheKey("other", 65536), 100, h,
        new ByteBuffer[] {body}).contains("another key"));
  }

  @Test
  public void mismatch_namesAnotherLength() {
    ByteBuffer body = body(100, 3);
    ByteBuffer h = check.header(KEY, 100, new ByteBuffer[] {body});
    assertTrue(check.mismatch(KEY, 99, h, new ByteBuffer[] {body}).contains("99"));
  }

  @Test
  public void mismatch_catchesEveryFlippedBitOfTheBody() {
    ByteBuffer body = body(256, 4);
    ByteBuffer h = check.header(KEY, 256, new ByteBuffer[] {body});
    for (int bit = 0; bit < 256 * 8; bit++) {
      ByteBuffer bad = ByteBuffer.allocate(256);
      bad.put(body.duplicate()).flip();
      bad.put(bit / 8, (byte) (bad.get(bit / 8) ^ (1 << (bit % 8))));
      String why = check.mismatch(KEY, 256, h, new ByteBuffer[] {bad});
      assertTrue("bit " + bit, why != null && why.contains("fails its"));
    }
  }

  @Test
  public void mismatch_catchesAFlippedHeaderByteAndAnotherEpoch() {
    ByteBuffer body = body(100, 5);
    ByteBuffer h = check.header(KEY, 100, new ByteBuffer[] {body});
    for (int i = 0; i < BlockCheck.HEADER_SIZE; i++) {
      ByteBuffer bad = ByteBuffer.allocate(BlockCheck.HEADER_SIZE);
      bad.put(h.duplicate()).flip();
      bad.put(i, (byte) (bad.get(i) ^ 0x10));
      assertTrue("header byte " + i,
          check.mismatch(KEY, 100, bad, new ByteBuffer[] {body}) != null);
    }
    BlockCheck other = new BlockCheck(42, Crc.fastest());
    assertTrue(other.mismatch(KEY, 100, h, new ByteBuffer[] {body}).contains("another cache"));
    assertTrue(check.mismatch(KEY, 100, ByteBuffer.allocate(BlockCheck.HEADER_SIZE),
        new ByteBuffer[] {body}).contains("no block header"));
  }

  @Test
  public void keyHash_dependsOnNameAndOffset() {
    long h = BlockCheck.keyHash("a", 1);
    assertEquals(h, BlockCheck.keyHash("a", 1));
    assertNotEquals(h, BlockCheck.keyHash("a", 2));
    assertNotEquals(h, BlockCheck.keyHash("b", 1));
    assertNotEquals(BlockCheck.keyHash("ab", 0), BlockCheck.keyHash("ba", 0));
  }
}
