package dev.forkset.hazelcast.chunked;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.impl.HeapData;
import com.hazelcast.internal.serialization.impl.SerializationConstants;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.Test;

/** A ChunkedData is, for every caller but a heap-cost reader, the HeapData of the same bytes. */
public class ChunkedDataTest {
  private static final int[] CHUNK_SIZES = {16, 32, 64, 1024, 1 << 16};

  /** Same answers as HeapData from every method HeapData defines by its bytes. */
  private static void assertSameAsHeapData(byte[] payload, int chunkSize) {
    HeapData heap = new HeapData(payload);
    ChunkedData chunked = ChunkedData.copyOf(payload, chunkSize);
    String what = payload.length + " bytes in chunks of " + chunkSize;
    assertEquals(what, heap.totalSize(), chunked.totalSize());
    assertEquals(what, heap.dataSize(), chunked.dataSize());
    assertEquals(what, heap.getType(), chunked.getType());
    assertEquals(what, heap.hasPartitionHash(), chunked.hasPartitionHash());
    assertEquals(what, heap.getPartitionHash(), chunked.getPartitionHash());
    assertEquals(what, heap.hashCode(), chunked.hashCode());
    assertEquals(what, heap.hash64(), chunked.hash64());
    assertEquals(what, heap.isJson(), chunked.isJson());
    assertEquals(what, heap.isCompact(), chunked.isCompact());
    assertArrayEquals(what, heap.toByteArray(), chunked.toByteArray());
    byte[] copied = new byte[payload.length + 3];
    byte[] heapCopied = new byte[payload.length + 3];
    chunked.copyTo(copied, 3);
    heap.copyTo(heapCopied, 3);
    assertArrayEquals(what, heapCopied, copied);
    assertTrue(what, chunked.equals(heap));
    assertTrue(what, heap.equals(chunked));
    assertEquals(what, (payload.length + chunkSize - 1) / chunkSize, chunked.chunkCount());
    for (int i = 0; i < chunked.chunkCount(); i++) {
      assertTrue(what, chunked.chunkLength(i) <= chunkSize);
    }
  }

  private static byte[] payload(Random random, int size) {
    byte[] bytes = new byte[size];
    random.nextBytes(bytes);
    return bytes;
  }

  /**
   * A copy of a payload owns its bytes (the frame it came from may be reused or changed) and
   * refuses the chunk and payload sizes a builder refuses.
   */
  @Test
  public void copyOfPayload_ownsItsBytes_andRefusesBadLayouts() {
    byte[] payload = payload(new Random(7), 1000);
    byte[] before = payload.clone();
    ChunkedData chunked = ChunkedData.copyOf(payload, 64);
    java.util.Arrays.fill(payload, (byte) 0x5a);
    assertArrayEquals(before, chunked.toByteArray());
    assertEquals(new HeapData(before), chunked);
    for (int[] bad : new int[][] {{1000, 24}, {1000, 8}, {5, 16}}) {
      try {
        ChunkedData.copyOf(new byte[bad[0]], bad[1]);
        fail("payload " + bad[0] + ", chunk size " + bad[1] + " accepted");
      } catch (IllegalArgumentException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("chunk size " + bad[1])
            || expected.getMessage().contains("payload of " + bad[0]));
      }
    }
  }

  @Test
  public void everyMethod_randomPayloads_matchHeapData() {
    Random random = new Random(21);
    for (int chunkSize : CHUNK_SIZES) {
      for (int n = 0; n < 200; n++) {
        int size = 8 + random.nextInt(8 * chunkSize);
        assertSameAsHeapData(payload(random, size), chunkSize);
      }
    }
  }

  @Test
  public void everyMethod_sizesAroundChunkBoundaries_matchHeapData() {
    Random random = new Random(22);
    for (int chunkSize : CHUNK_SIZES) {
      for (int chunks = 1; chunks <= 3; chunks++) {
        for (int delta = -17; delta <= 17; delta++) {
          int size = chunks * chunkSize + delta;
          if (size >= 8) {
            assertSameAsHeapData(payload(random, size), chunkSize);
          }
        }
      }
    }
  }

  @Test
  public void everyMethod_emptyAndHeaderOnlyPayloads_matchHeapData() {
    assertSameAsHeapData(new byte[0], 16);
    assertSameAsHeapData(new byte[8], 16);
    byte[] typed = new byte[8];
    typed[7] = -2;
    assertSameAsHeapData(typed, 16);
    assertTrue(new HeapData(null).equals(ChunkedData.copyOf(new byte[0], 16)));
    assertTrue(ChunkedData.copyOf(new byte[0], 16).equals(new HeapData(null)));
    ChunkedData.copyOf(new byte[0], 16).copyTo(null, 0); // as HeapData: nothing to copy
    assertEquals(new HeapData(null).hashCode(), ChunkedData.copyOf(new byte[0], 16).hashCode());
    assertEquals(SerializationConstants.CONSTANT_TYPE_NULL, ChunkedData.copyOf(new byte[0], 16).getType());
  }

  @Test
  public void hashes_everyTailLengthWithNegativeBytes_matchHeapData() {
    // HashUtil's x64 tail sign-extends bytes: negative bytes in every tail position catch a
    // version that masks them.
    for (int chunkSize : new int[] {16, 32}) {
      for (int dataSize = 0; dataSize <= 64; dataSize++) {
        byte[] payload = new byte[8 + dataSize];
        for (int i = 8; i < payload.length; i++) {
          payload[i] = (byte) (0x80 | i * 37);
        }
        assertSameAsHeapData(payload, chunkSize);
      }
    }
  }

  @Test
  public void partitionHash_carryingPayload_isReadFromTheHeaderAsHeapDataReadsIt() {
    Random random = new Random(23);
    byte[] payload = payload(random, 5000);
    ByteBuffer.wrap(payload).putInt(0, 0x12345678);
    ChunkedData chunked = ChunkedData.copyOf(payload, 64);
    assertTrue(chunked.hasPartitionHash());
    assertEquals(0x12345678, chunked.getPartitionHash());
    assertSameAsHeapData(payload, 64);
    ByteBuffer.wrap(payload).putInt(0, 0);
    assertFalse(ChunkedData.copyOf(payload, 64).hasPartitionHash());
    assertEquals(new HeapData(payload).hashCode(), ChunkedData.copyOf(payload, 64).getPartitionHash());
  }

  @Test
  public void equals_samePayloadOtherPartitionHash_isEqualAsForHeapData() {
    Random random = new Random(24);
    byte[] a = payload(random, 300);
    byte[] b = a.clone();
    ByteBuffer.wrap(b).putInt(0, 99);
    assertEquals(new HeapData(a), new HeapData(b)); // HeapData does not compare the partition hash
    assertEquals(ChunkedData.copyOf(a, 16), new HeapData(b));
    assertEquals(new HeapData(b), ChunkedData.copyOf(a, 16));
    assertEquals(ChunkedData.copyOf(a, 16), ChunkedData.copyOf(b, 32));
    assertEquals(ChunkedData.copyOf(a, 16), ChunkedData.copyOf(b, 16));
  }

  @Test
  public void equals_anyOneByteDiffering_isFalseBothWaysAndWithHeapData() {
    Random random = new Random(25);
    byte[] payload = payload(random, 200);
    ChunkedData chunked = ChunkedData.copyOf(payload, 16);
    for (int i = 4; i < payload.length; i++) { // type and data; 0-3 is the partition hash
      byte[] other = payload.clone();
      other[i] ^= 1;
      HeapData heapOther = new HeapData(other);
      ChunkedData chunkedOther = ChunkedData.copyOf(other, 32);
      ChunkedData sameLayoutOther = ChunkedData.copyOf(other, 16);
      assertNotEquals("byte " + i, chunked, sameLayoutOther);
      assertNotEquals("byte " + i, sameLayoutOther, chunked);
      assertNotEquals("byte " + i, chunked, heapOther);
      assertNotEquals("byte " + i, heapOther, chunked);
      assertNotEquals("byte " + i, chunked, chunkedOther);
      assertNotEquals("byte " + i, chunkedOther, chunked);
    }
    assertNotEquals(chunked, ChunkedData.copyOf(payload(random, 201), 16));
    assertFalse(chunked.equals(null));
    assertFalse(chunked.equals(payload));
  }

  @Test
  public void equals_otherChunkSize_isEqualWithTheSameHash() {
    Random random = new Random(26);
    byte[] payload = payload(random, 10_000);
    ChunkedData small = ChunkedData.copyOf(payload, 16);
    ChunkedData large = ChunkedData.copyOf(payload, 4096);
    assertEquals(small, large);
    assertEquals(small.hashCode(), large.hashCode());
    assertEquals(small.hash64(), large.hash64());
    assertEquals(large, ChunkedData.copyOf(small, 4096));
  }

  @Test
  public void hashMap_keyedByHeapData_findsTheChunkedCopyAndBack() {
    Random random = new Random(27);
    Map<Data, Integer> byData = new HashMap<>();
    for (int i = 0; i < 50; i++) {
      byte[] payload = payload(random, 8 + random.nextInt(3000));
      byData.put(new HeapData(payload), i);
      assertEquals(Integer.valueOf(i), byData.get(ChunkedData.copyOf(payload, 64)));
      byData.put(ChunkedData.copyOf(payload, 64), i + 1000);
      assertEquals(Integer.valueOf(i + 1000), byData.get(new HeapData(payload)));
    }
    assertEquals(50, byData.size());
  }

  @Test
  public void copyTo_anyRange_copiesThosePayloadBytes() {
    Random random = new Random(28);
    byte[] payload = payload(random, 1000);
    ChunkedData chunked = ChunkedData.copyOf(payload, 64);
    for (int n = 0; n < 300; n++) {
      int from = random.nextInt(payload.length + 1);
      int length = random.nextInt(payload.length - from + 1);
      byte[] dest = new byte[length + 5];
      chunked.copyTo(from, dest, 5, length);
      for (int i = 0; i < length; i++) {
        assertEquals(payload[from + i], dest[5 + i]);
      }
    }
  }

  @Test(expected = IndexOutOfBoundsException.class)
  public void copyTo_rangePastTheEnd_isRefused() {
    ChunkedData.copyOf(new byte[100], 16).copyTo(90, new byte[20], 0, 11);
  }

  @Test
  public void copyToByteBuffer_inPartsAsAFrameWriterDoes_producesThePayload() {
    Random random = new Random(29);
    byte[] payload = payload(random, 70_000);
    ChunkedData chunked = ChunkedData.copyOf(payload, 1024);
    ByteArrayOutputStream sent = new ByteArrayOutputStream();
    ByteBuffer socketBuffer = ByteBuffer.allocate(3000);
    int offset = 0;
    while (offset < payload.length) {
      int n = Math.min(socketBuffer.remaining(), payload.length - offset);
      chunked.copyTo(offset, socketBuffer, n);
      offset += n;
      socketBuffer.flip();
      byte[] out = new byte[socketBuffer.remaining()];
      socketBuffer.get(out);
      sent.write(out, 0, out.length);
      socketBuffer.clear();
    }
    assertArrayEquals(payload, sent.toByteArray());
  }

  @Test
  public void newInputStream_fromTheDataOffset_readsTheSerializedObjectBytes() throws IOException {
    Random random = new Random(30);
    byte[] payload = payload(random, 5000);
    InputStream in = ChunkedData.copyOf(payload, 64).newInputStream(HeapData.DATA_OFFSET);
    assertEquals(payload.length - 8, in.available());
    byte[] read = new byte[payload.length - 8];
    new DataInputStream(in).readFully(read);
    for (int i = 0; i < read.length; i++) {
      assertEquals(payload[8 + i], read[i]);
    }
    assertEquals(-1, in.read());
    assertEquals(-1, in.read(new byte[4], 0, 4));
  }

  @Test
  public void newInputStream_singleBytesSkipAndReset_followThePayload() throws IOException {
    byte[] payload = new byte[100];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) (i - 50);
    }
    InputStream in = ChunkedData.copyOf(payload, 16).newInputStream(10);
    assertEquals(payload[10] & 0xff, in.read());
    in.mark(0);
    assertEquals(20, in.skip(20));
    assertEquals(payload[31] & 0xff, in.read());
    in.reset();
    assertEquals(payload[11] & 0xff, in.read());
    assertEquals(88, in.skip(1000));
    assertEquals(-1, in.read());
  }

  @Test
  public void getHeapCost_countsTheChunkArraysHeaders() {
    byte[] payload = new byte[10_000];
    HeapData heap = new HeapData(payload);
    ChunkedData chunked = ChunkedData.copyOf(payload, 1024);
    // 10 chunks: 10 array headers and references beyond HeapData's one.
    assertTrue(chunked.getHeapCost() > heap.getHeapCost() + 9 * 16);
    assertTrue(chunked.getHeapCost() < heap.getHeapCost() + 11 * (16 + 8) + 32);
  }

  @Test
  public void copyOf_heapData_copiesItsPayloadIntoChunks() {
    Random random = new Random(31);
    byte[] payload = payload(random, 3000);
    HeapData heap = new HeapData(payload);
    ChunkedData chunked = ChunkedData.copyOf(heap, 256);
    assertEquals(heap, chunked);
    payload[100] ^= 1; // the chunked copy does not share the HeapData's array
    assertNotEquals(heap, chunked);
    assertEquals(0, ChunkedData.copyOf(new HeapData(null), 16).totalSize());
  }
}
