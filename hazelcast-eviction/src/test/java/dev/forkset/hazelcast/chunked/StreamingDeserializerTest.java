package dev.forkset.hazelcast.chunked;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.core.HazelcastJsonValue;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.InternalSerializationService;
import com.hazelcast.internal.serialization.impl.DefaultSerializationServiceBuilder;
import com.hazelcast.internal.serialization.impl.HeapData;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.IdentifiedDataSerializable;
import com.hazelcast.internal.serialization.impl.SerializationConstants;
import java.io.IOException;
import java.io.Serializable;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.After;
import org.junit.Test;

/** Values read through the chunk-backed stream are the values HeapData deserializes. */
public class StreamingDeserializerTest {
  private static final int FACTORY = 21;
  private final InternalSerializationService ss = new DefaultSerializationServiceBuilder()
      .addDataSerializableFactory(FACTORY, type -> new Sample()).build();
  private final StreamingDeserializer streaming = new StreamingDeserializer(ss);

  @After
  public void dispose() {
    ss.dispose();
  }

  static final class Point implements Serializable {
    private static final long serialVersionUID = 1L;
    final int x;
    final String label;

    Point(int x, String label) {
      this.x = x;
      this.label = label;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Point && ((Point) o).x == x && ((Point) o).label.equals(label);
    }

    @Override
    public int hashCode() {
      return x;
    }
  }

  /** An IdentifiedDataSerializable value, read front to back as DataSerializableSerializer does. */
  public static final class Sample implements IdentifiedDataSerializable {
    long id;
    byte[] blob;

    public Sample() {
    }

    Sample(long id, byte[] blob) {
      this.id = id;
      this.blob = blob;
    }

    @Override
    public int getFactoryId() {
      return FACTORY;
    }

    @Override
    public int getClassId() {
      return 1;
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
      out.writeLong(id);
      out.writeByteArray(blob);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
      id = in.readLong();
      blob = in.readByteArray();
    }
  }

  private Object throughChunks(Object value, int chunkSize) throws IOException {
    Data heap = ss.toData(value);
    return streaming.toObject(ChunkedData.copyOf(heap, chunkSize));
  }

  @Test
  public void toObject_sequentialSerializers_readWhatHeapDataReads() throws IOException {
    Random random = new Random(51);
    byte[] bytes = new byte[300_000];
    random.nextBytes(bytes);
    assertArrayEquals(bytes, (byte[]) throughChunks(bytes, 4096));
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 20_000; i++) {
      text.append((char) ('a' + i % 26)).append('\u00e9');
    }
    assertEquals(text.toString(), throughChunks(text.toString(), 64));
    assertEquals(42L, throughChunks(42L, 16));
    List<Integer> list = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      list.add(i * 7);
    }
    assertEquals(list, throughChunks(list, 32));
    assertEquals(new Point(3, text.toString()), throughChunks(new Point(3, text.toString()), 256));
    Sample sample = (Sample) throughChunks(new Sample(77, bytes), 512);
    assertEquals(77, sample.id);
    assertArrayEquals(bytes, sample.blob);
    HazelcastJsonValue json = new HazelcastJsonValue("{\"a\":\"" + text + "\"}");
    assertEquals(json, throughChunks(json, 1024));
    assertNull(streaming.toObject(ChunkedData.copyOf(ss.toData(null) == null ? new byte[0]
        : ss.toData(null).toByteArray(), 16)));
  }

  @Test
  public void toObject_compactValue_isRefusedForTheArrayPath() throws IOException {
    assertFalse(StreamingDeserializer.streams(SerializationConstants.TYPE_COMPACT));
    assertFalse(StreamingDeserializer.streams(SerializationConstants.TYPE_COMPACT_WITH_SCHEMA));
    assertFalse(StreamingDeserializer.streams(SerializationConstants.CONSTANT_TYPE_PORTABLE));
    byte[] compact = new byte[64];
    ByteBuffer.wrap(compact).putInt(HeapData.TYPE_OFFSET, SerializationConstants.TYPE_COMPACT);
    try {
      streaming.toObject(ChunkedData.copyOf(compact, 16));
      fail();
    } catch (IllegalArgumentException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("reads by offset"));
    }
  }

  /**
   * Reading a 4 MB byte[] value through the chunks allocates the value and not a second copy of
   * its size; through one array (what takeInputBuffer needs) it allocates both. Same-run ratio,
   * generous bounds.
   */
  @Test
  public void toObject_largeByteArray_allocatesTheValueButNoFullSizeCopy() throws IOException {
    int size = 4 << 20;
    ChunkedData chunked = ChunkedData.copyOf(ss.toData(new byte[size]), 64 << 10);
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long thread = Thread.currentThread().getId();
    streaming.toObject(chunked); // warm up the classes on this path
    long before = threads.getThreadAllocatedBytes(thread);
    byte[] read = streaming.toObject(chunked);
    long streamed = threads.getThreadAllocatedBytes(thread) - before;
    before = threads.getThreadAllocatedBytes(thread);
    byte[] viaArray = ss.toObject(new HeapData(chunked.toByteArray()));
    long throughArray = threads.getThreadAllocatedBytes(thread) - before;
    assertEquals(size, read.length);
    assertEquals(size, viaArray.length);
    assertTrue("streamed " + streamed + " B for a " + size + " B value", streamed < size * 1.25);
    assertTrue("through one array " + throughArray + " B", throughArray > size * 1.9);
  }
}
