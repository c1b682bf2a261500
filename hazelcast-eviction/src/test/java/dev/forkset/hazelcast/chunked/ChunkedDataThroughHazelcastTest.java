package dev.forkset.hazelcast.chunked;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.internal.nio.BufferObjectDataInput;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.InternalSerializationService;
import com.hazelcast.internal.serialization.impl.DefaultSerializationServiceBuilder;
import com.hazelcast.internal.serialization.impl.HeapData;
import com.hazelcast.internal.util.comparators.ValueComparator;
import com.hazelcast.internal.util.comparators.ValueComparatorUtil;
import com.hazelcast.nio.ObjectDataOutput;
import java.io.IOException;
import java.util.Random;
import org.junit.After;
import org.junit.Test;

/**
 * Hazelcast's own code paths take a chunked value as they are, through Data's contract: what
 * the design (docs/hazelcast-eviction.md, "Chunked stored copies") relies on before any patch.
 */
public class ChunkedDataThroughHazelcastTest {
  private final InternalSerializationService ss = new DefaultSerializationServiceBuilder().build();

  @After
  public void dispose() {
    ss.dispose();
  }

  private byte[] value(int size) {
    byte[] bytes = new byte[size];
    new Random(71).nextBytes(bytes);
    return bytes;
  }

  /** Backup, migration and replica sync write a value with writeData (copyTo into the packet). */
  @Test
  public void writeData_ofAChunkedValue_readsBackAsTheEqualHeapData() throws IOException {
    Data heap = ss.toData(value(100_000));
    ChunkedData chunked = ChunkedData.copyOf(heap, 1024);
    ObjectDataOutput out = ss.createObjectDataOutput();
    out.writeInt(7);
    ((com.hazelcast.internal.nio.DataWriter) out).writeData(chunked);
    out.writeInt(8);
    BufferObjectDataInput in = ss.createObjectDataInput(out.toByteArray());
    assertEquals(7, in.readInt());
    Data read = in.readData();
    assertEquals(8, in.readInt());
    assertTrue(read instanceof HeapData);
    assertEquals(heap, read);
    assertEquals(chunked, read);
    assertArrayEquals(heap.toByteArray(), read.toByteArray());
  }

  /** Without a patch toObject takes the one-array path (takeInputBuffer), and reads the value. */
  @Test
  public void toObject_ofAChunkedValue_readsTheValue() {
    byte[] bytes = value(50_000);
    assertArrayEquals(bytes, (byte[]) ss.toObject(ChunkedData.copyOf(ss.toData(bytes), 64)));
    String text = "chunked " + new String(new char[5000]).replace('\0', 'x');
    assertEquals(text, ss.toObject(ChunkedData.copyOf(ss.toData(text), 16)));
  }

  /** A record factory's ss.toData(value) keeps a chunked value as it is. */
  @Test
  public void toData_ofAChunkedValue_isTheValueItself() {
    ChunkedData chunked = ChunkedData.copyOf(ss.toData(value(1000)), 64);
    assertSame(chunked, ss.toData(chunked));
  }

  /** replace(k, old, new), remove(k, v), containsValue: caller's value first, stored second. */
  @Test
  public void binaryValueComparator_heapDataAndChunkedCopy_areEqualEitherWay() {
    ValueComparator comparator = ValueComparatorUtil.getValueComparatorOf(InMemoryFormat.BINARY);
    Data heap = ss.toData(value(20_000));
    ChunkedData chunked = ChunkedData.copyOf(heap, 256);
    assertTrue(comparator.isEqual(heap, chunked, ss));
    assertTrue(comparator.isEqual(chunked, heap, ss));
    byte[] other = value(20_000);
    other[19_999] ^= 1;
    Data different = ss.toData(other);
    assertTrue(!comparator.isEqual(different, chunked, ss));
    assertTrue(!comparator.isEqual(chunked, different, ss));
    // The object form of the stored value is compared through its serialized form.
    assertTrue(comparator.isEqual(value(20_000), chunked, ss));
  }
}
