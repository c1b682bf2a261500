package dev.forkset.hazelcast.chunked;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.internal.serialization.impl.HeapData;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.Test;

public class ChunkedDataBuilderTest {

  @Test
  public void build_inManyWritesOfAnySize_isTheHeapDataOfThoseBytes() {
    Random random = new Random(41);
    byte[] payload = new byte[10_000];
    random.nextBytes(payload);
    ChunkedDataBuilder builder = new ChunkedDataBuilder(payload.length, 128);
    int off = 0;
    while (off < payload.length) {
      int n = Math.min(payload.length - off, random.nextInt(300));
      builder.write(payload, off, n);
      off += n;
    }
    assertEquals(0, builder.remaining());
    assertEquals(new HeapData(payload), builder.build());
  }

  @Test
  public void writeByteBuffer_holdingMoreThanTheValue_takesOnlyTheValuesBytes() {
    ByteBuffer frames = ByteBuffer.allocate(100);
    for (int i = 0; i < 100; i++) {
      frames.put((byte) i);
    }
    frames.flip();
    ChunkedDataBuilder builder = new ChunkedDataBuilder(60, 16);
    assertEquals(60, builder.write(frames));
    assertEquals(40, frames.remaining()); // the next frame's bytes stay in the buffer
    assertEquals(0, builder.write(frames));
    ChunkedData data = builder.build();
    assertEquals(59, data.byteAt(59));
  }

  @Test
  public void build_incompletePayload_isRefused() {
    ChunkedDataBuilder builder = new ChunkedDataBuilder(100, 16);
    builder.write(new byte[99], 0, 99);
    try {
      builder.build();
      fail();
    } catch (IllegalStateException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("99 of 100"));
    }
  }

  @Test(expected = IllegalStateException.class)
  public void write_pastTheTotalSize_isRefused() {
    ChunkedDataBuilder builder = new ChunkedDataBuilder(20, 16);
    builder.write(new byte[21], 0, 21);
  }

  @Test(expected = IllegalStateException.class)
  public void build_twice_isRefused() {
    ChunkedDataBuilder builder = new ChunkedDataBuilder(0, 16);
    builder.build();
    builder.build();
  }

  @Test
  public void constructor_payloadOfOneToSevenBytes_isRefusedAsHeapDataRefusesIt() {
    for (int size = 1; size < 8; size++) {
      try {
        new ChunkedDataBuilder(size, 16);
        fail("size " + size);
      } catch (IllegalArgumentException expected) {
        assertTrue(expected.getMessage().contains("at least 8 bytes"));
      }
      try {
        new HeapData(new byte[size]);
        fail("HeapData of " + size);
      } catch (IllegalArgumentException expected) {
        // the same rule
      }
    }
  }

  @Test
  public void constructor_chunkSizeNotAPowerOfTwoOrBelowSixteen_isRefused() {
    for (int chunk : new int[] {0, 8, 15, 24, 1000, -16}) {
      try {
        new ChunkedDataBuilder(100, chunk);
        fail("chunk " + chunk);
      } catch (IllegalArgumentException expected) {
        assertTrue(expected.getMessage().contains("power of two"));
      }
    }
  }
}
