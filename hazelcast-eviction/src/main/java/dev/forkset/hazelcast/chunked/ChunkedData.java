package dev.forkset.hazelcast.chunked;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.impl.HeapData;
import com.hazelcast.internal.serialization.impl.SerializationConstants;
import com.hazelcast.internal.util.JVMUtil;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * A {@link Data} whose payload (partition hash, type, serialized object: the bytes of a
 * {@link HeapData}) is held in pieces, none larger than a chunk size chosen so that no piece is
 * a humongous object of the member's collector ({@link ChunkSize}).
 *
 * <p>For the same payload bytes, every method of {@link Data} but {@link #getHeapCost()} returns
 * what {@link HeapData} returns, and {@link #equals} and {@link #hashCode} agree with HeapData's
 * in both directions: a chunked copy on one replica and a HeapData on another compare and hash
 * as the same value ({@code replace(k, old, new)}, {@code EvictBatchBackupOperation}'s hash check
 * of a backup's value). HeapData's own {@code equals(chunked)} holds because it compares
 * {@code getType()}, {@code dataSize()} and then the bytes from {@link HeapData#DATA_OFFSET}: on a
 * custom jar of revision 5 or later range by range through {@link #copyTo(int, ByteBuffer, int)}
 * (patch 0007), on older jars through {@code toByteArray()}, one temporary array of the full size
 * (see docs/hazelcast-eviction.md, "Chunked stored copies").
 *
 * <p>Invariants: every chunk but the last has exactly {@code 1 << shift} bytes, the last has
 * between 1 and {@code 1 << shift}; the chunk size is a power of two of at least
 * {@link #MIN_CHUNK_SIZE}, so the 4-byte blocks of MurmurHash3_x86_32 and the 8-byte halves of
 * MurmurHash3_x64_64 (which start at {@link HeapData#DATA_OFFSET}, a multiple of 8) and the
 * header ints (offsets 0 and 4) never straddle two chunks. The chunks are never handed out: the
 * value is immutable once built, as a stored HeapData is in practice.
 */
public final class ChunkedData implements Data {
  /** Smallest chunk size: the 8-byte header and one 8-byte hash half fit in the first chunk. */
  public static final int MIN_CHUNK_SIZE = 16;

  // HeapData's cost constants: array header (12) + length (4).
  private static final int ARRAY_HEADER = 16;

  private final byte[][] chunks;
  private final int shift;
  private final int totalSize;

  ChunkedData(byte[][] chunks, int shift, int totalSize) {
    this.chunks = chunks;
    this.shift = shift;
    this.totalSize = totalSize;
  }

  /** A chunked copy of {@code payload} (a HeapData payload: empty or at least 8 bytes). */
  public static ChunkedData copyOf(byte[] payload, int chunkSize) {
    Objects.requireNonNull(payload, "payload");
    ChunkedDataBuilder.checkLayout(payload.length, chunkSize);
    // Each chunk is allocated and filled by one Arrays.copyOfRange, which C2 compiles without
    // zeroing the new array first (it is overwritten whole); a builder fills chunks it allocated
    // earlier, so they are zeroed and then written. Measured on the put path of a 5 MB value
    // (docs/hazelcast-eviction.md, "Where a chunking put's time goes").
    byte[][] chunks = new byte[ChunkedDataBuilder.chunkCount(payload.length, chunkSize)][];
    for (int i = 0; i < chunks.length; i++) {
      int from = i * chunkSize;
      chunks[i] = Arrays.copyOfRange(payload, from, Math.min(payload.length, from + chunkSize));
    }
    return new ChunkedData(chunks, Integer.numberOfTrailingZeros(chunkSize), payload.length);
  }

  /**
   * A chunked copy of {@code data}. A HeapData hands over its payload without a copy; another
   * chunked value of the same chunk size is returned as it is (both are immutable).
   */
  public static ChunkedData copyOf(Data data, int chunkSize) {
    Objects.requireNonNull(data, "data");
    if (data instanceof ChunkedData && ((ChunkedData) data).chunkSize() == chunkSize) {
      return (ChunkedData) data;
    }
    if (data instanceof ChunkedData) {
      ChunkedData source = (ChunkedData) data;
      ChunkedDataBuilder builder = new ChunkedDataBuilder(source.totalSize, chunkSize);
      for (byte[] chunk : source.chunks) {
        builder.write(chunk, 0, chunk.length);
      }
      return builder.build();
    }
    byte[] payload = data.toByteArray();
    return copyOf(payload == null ? new byte[0] : payload, chunkSize);
  }

  /** The size of every chunk but the last. */
  public int chunkSize() {
    return 1 << shift;
  }

  public int chunkCount() {
    return chunks.length;
  }

  /** The length of chunk {@code i} (for the cost model and tests; the bytes stay private). */
  public int chunkLength(int i) {
    return chunks[i].length;
  }

  @Override
  public int totalSize() {
    return totalSize;
  }

  @Override
  public int dataSize() {
    return Math.max(totalSize - HeapData.HEAP_DATA_OVERHEAD, 0);
  }

  /**
   * A new array of the whole payload. This allocates the full size (a humongous object for the
   * values this class exists for): it is the fallback for callers that need one array, which the
   * live paths are to avoid (use {@link #copyTo(int, byte[], int, int)},
   * {@link #copyTo(int, ByteBuffer, int)} or {@link #newInputStream(int)}).
   */
  @Override
  public byte[] toByteArray() {
    byte[] bytes = new byte[totalSize];
    copyTo(bytes, 0);
    return bytes;
  }

  @Override
  public void copyTo(byte[] dest, int destPos) {
    if (totalSize > 0) { // as HeapData: an empty value copies nothing, whatever dest is
      copyTo(0, dest, destPos, totalSize);
    }
  }

  /** Copies {@code length} payload bytes from {@code srcPos} into {@code dest} at {@code destPos}. */
  public void copyTo(int srcPos, byte[] dest, int destPos, int length) {
    checkRange(srcPos, length);
    if (destPos < 0 || length > dest.length - destPos) {
      throw new IndexOutOfBoundsException("destination " + dest.length + " bytes, position "
          + destPos + ", length " + length);
    }
    int pos = srcPos;
    int end = srcPos + length;
    while (pos < end) {
      byte[] chunk = chunks[pos >>> shift];
      int from = pos & mask();
      int n = Math.min(chunk.length - from, end - pos);
      System.arraycopy(chunk, from, dest, destPos + (pos - srcPos), n);
      pos += n;
    }
  }

  /**
   * Puts {@code length} payload bytes from {@code srcPos} into {@code dst} at its position: what a
   * frame writer filling a socket buffer needs (it writes a frame in as many parts as the buffer
   * has room for). On a custom jar of revision 5 or later this overrides
   * {@code Data#copyTo(int, ByteBuffer, int)} (patch 0007), through which client responses,
   * {@code HeapData#equals} and byte[] deserialization read the value without one array; on an
   * older jar it is a method of this class only.
   */
  public void copyTo(int srcPos, ByteBuffer dst, int length) {
    checkRange(srcPos, length);
    if (length > dst.remaining()) {
      throw new IndexOutOfBoundsException(
          "buffer has " + dst.remaining() + " bytes left, length " + length);
    }
    int pos = srcPos;
    int end = srcPos + length;
    while (pos < end) {
      byte[] chunk = chunks[pos >>> shift];
      int from = pos & mask();
      int n = Math.min(chunk.length - from, end - pos);
      dst.put(chunk, from, n);
      pos += n;
    }
  }

  /** A stream of the payload from {@code from} (e.g. {@link HeapData#DATA_OFFSET}) to its end. */
  public InputStream newInputStream(int from) {
    checkRange(from, totalSize - from);
    return new ChunkedDataInputStream(this, from);
  }

  @Override
  public int getType() {
    if (totalSize == 0) {
      return SerializationConstants.CONSTANT_TYPE_NULL;
    }
    return intB(HeapData.TYPE_OFFSET);
  }

  @Override
  public boolean hasPartitionHash() {
    return totalSize >= HeapData.HEAP_DATA_OVERHEAD && intB(HeapData.PARTITION_HASH_OFFSET) != 0;
  }

  @Override
  public int getPartitionHash() {
    if (hasPartitionHash()) {
      return intB(HeapData.PARTITION_HASH_OFFSET);
    }
    return hashCode();
  }

  /**
   * The heap this object really occupies (unlike the other methods, not HeapData's value for the
   * same bytes): the object, the array of chunks and each chunk. Hazelcast's record cost and the
   * module's estimator read it.
   */
  @Override
  public int getHeapCost() {
    long cost = JVMUtil.OBJECT_HEADER_SIZE + JVMUtil.REFERENCE_COST_IN_BYTES + 2 * Integer.BYTES
        + ARRAY_HEADER + (long) chunks.length * JVMUtil.REFERENCE_COST_IN_BYTES;
    for (byte[] chunk : chunks) {
      cost += ARRAY_HEADER + chunk.length;
    }
    return (int) Math.min(Integer.MAX_VALUE, cost);
  }

  @Override
  public int hashCode() {
    return ChunkedMurmur3.hash32(this, HeapData.DATA_OFFSET, dataSize());
  }

  @Override
  public long hash64() {
    return ChunkedMurmur3.hash64(this, HeapData.DATA_OFFSET, dataSize());
  }

  /**
   * HeapData's equality: same type, same data size, same bytes after the header (the partition
   * hash is not compared, as HeapData does not compare it).
   */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Data)) {
      return false;
    }
    Data other = (Data) o;
    if (getType() != other.getType()) {
      return false;
    }
    int dataSize = dataSize();
    if (dataSize != other.dataSize()) {
      return false;
    }
    if (dataSize == 0) {
      return true;
    }
    if (other instanceof ChunkedData) {
      return sameBytes((ChunkedData) other);
    }
    // A HeapData hands over its payload; another Data kind builds one array (its own contract).
    byte[] bytes = other.toByteArray();
    return bytes != null && bytes.length == totalSize && sameBytes(bytes);
  }

  private boolean sameBytes(byte[] bytes) {
    int pos = HeapData.DATA_OFFSET;
    while (pos < totalSize) {
      byte[] chunk = chunks[pos >>> shift];
      int from = pos & mask();
      for (int i = from; i < chunk.length; i++, pos++) {
        if (chunk[i] != bytes[pos]) {
          return false;
        }
      }
    }
    return true;
  }

  private boolean sameBytes(ChunkedData other) {
    if (other.shift == shift) {
      // Same layout: chunk against chunk, the first one after the header.
      for (int c = 0; c < chunks.length; c++) {
        byte[] a = chunks[c];
        byte[] b = other.chunks[c];
        for (int i = c == 0 ? HeapData.DATA_OFFSET : 0; i < a.length; i++) {
          if (a[i] != b[i]) {
            return false;
          }
        }
      }
      return true;
    }
    for (int pos = HeapData.DATA_OFFSET; pos < totalSize; pos++) {
      if (byteAt(pos) != other.byteAt(pos)) {
        return false;
      }
    }
    return true;
  }

  @Override
  @SuppressWarnings("deprecation")
  public boolean isPortable() {
    return SerializationConstants.CONSTANT_TYPE_PORTABLE == getType();
  }

  @Override
  public boolean isJson() {
    return SerializationConstants.JAVASCRIPT_JSON_SERIALIZATION_TYPE == getType();
  }

  @Override
  public boolean isCompact() {
    return SerializationConstants.TYPE_COMPACT == getType();
  }

  @Override
  public String toString() {
    return "ChunkedData{type=" + getType() + ", hashCode=" + hashCode() + ", partitionHash="
        + getPartitionHash() + ", totalSize=" + totalSize + ", dataSize=" + dataSize()
        + ", heapCost=" + getHeapCost() + ", chunks=" + chunks.length + " x <= " + chunkSize()
        + '}';
  }

  byte byteAt(int pos) {
    return chunks[pos >>> shift][pos & mask()];
  }

  /** Big-endian int at {@code pos} (the header's byte order). */
  int intB(int pos) {
    return (byteAt(pos) & 0xff) << 24 | (byteAt(pos + 1) & 0xff) << 16
        | (byteAt(pos + 2) & 0xff) << 8 | byteAt(pos + 3) & 0xff;
  }

  /** Little-endian int at {@code pos}, as HashUtil loads Murmur blocks from a byte array. */
  int intL(int pos) {
    byte[] chunk = chunks[pos >>> shift];
    int i = pos & mask();
    if (i + 4 <= chunk.length) {
      return chunk[i] & 0xff | (chunk[i + 1] & 0xff) << 8 | (chunk[i + 2] & 0xff) << 16
          | (chunk[i + 3] & 0xff) << 24;
    }
    return byteAt(pos) & 0xff | (byteAt(pos + 1) & 0xff) << 8 | (byteAt(pos + 2) & 0xff) << 16
        | (byteAt(pos + 3) & 0xff) << 24;
  }

  /** Little-endian long at {@code pos}. */
  long longL(int pos) {
    return intL(pos) & 0xffffffffL | (long) intL(pos + 4) << 32;
  }

  int read(int pos, byte[] dest, int off, int len) {
    byte[] chunk = chunks[pos >>> shift];
    int from = pos & mask();
    int n = Math.min(len, chunk.length - from);
    System.arraycopy(chunk, from, dest, off, n);
    return n;
  }

  private int mask() {
    return (1 << shift) - 1;
  }

  private void checkRange(int from, int length) {
    if (from < 0 || length < 0 || from > totalSize - length) {
      throw new IndexOutOfBoundsException(
          "payload " + totalSize + " bytes, position " + from + ", length " + length);
    }
  }
}
