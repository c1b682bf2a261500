package dev.forkset.hazelcast.chunked;

import com.hazelcast.internal.serialization.impl.HeapData;
import java.nio.ByteBuffer;

/**
 * Fills a {@link ChunkedData} of a known total size from successive writes, one chunk at a time,
 * so a payload can be copied out of a frame or a packet (or a socket buffer, in parts) without an
 * array of its full size. {@link #build()} refuses an incomplete payload: a value is stored whole
 * or not at all.
 */
public final class ChunkedDataBuilder {
  private final byte[][] chunks;
  private final int shift;
  private final int totalSize;
  private int written;
  private boolean built;

  /**
   * A builder of {@code totalSize} payload bytes in chunks of {@code chunkSize}, a power of two of
   * at least {@link ChunkedData#MIN_CHUNK_SIZE}. A payload is empty or at least
   * {@link HeapData#HEAP_DATA_OVERHEAD} bytes, as HeapData requires.
   */
  public ChunkedDataBuilder(int totalSize, int chunkSize) {
    checkLayout(totalSize, chunkSize);
    this.shift = Integer.numberOfTrailingZeros(chunkSize);
    this.totalSize = totalSize;
    this.chunks = new byte[chunkCount(totalSize, chunkSize)][];
  }

  /** Refuses a chunk size or a payload size that a {@link ChunkedData} cannot have. */
  static void checkLayout(int totalSize, int chunkSize) {
    if (chunkSize < ChunkedData.MIN_CHUNK_SIZE || Integer.bitCount(chunkSize) != 1) {
      throw new IllegalArgumentException("chunk size " + chunkSize + ": must be a power of two of"
          + " at least " + ChunkedData.MIN_CHUNK_SIZE + " bytes");
    }
    if (totalSize < 0 || totalSize > 0 && totalSize < HeapData.HEAP_DATA_OVERHEAD) {
      throw new IllegalArgumentException("payload of " + totalSize + " bytes: Data should be either"
          + " empty or contain at least " + HeapData.HEAP_DATA_OVERHEAD + " bytes");
    }
  }

  /** How many chunks of {@code chunkSize} (a power of two) hold {@code totalSize} bytes. */
  static int chunkCount(int totalSize, int chunkSize) {
    return (int) ((totalSize + (long) chunkSize - 1) / chunkSize);
  }

  /** Bytes still expected. */
  public int remaining() {
    return totalSize - written;
  }

  /** Appends {@code len} bytes of {@code src} from {@code off}; more than {@link #remaining()} fails. */
  public void write(byte[] src, int off, int len) {
    checkOpen();
    if (off < 0 || len < 0 || off > src.length - len) {
      throw new IndexOutOfBoundsException(
          "source " + src.length + " bytes, offset " + off + ", length " + len);
    }
    if (len > remaining()) {
      throw new IllegalStateException(
          "write of " + len + " bytes, but only " + remaining() + " of " + totalSize + " expected");
    }
    while (len > 0) {
      byte[] chunk = chunk(written >>> shift);
      int at = written & ((1 << shift) - 1);
      int n = Math.min(len, chunk.length - at);
      System.arraycopy(src, off, chunk, at, n);
      off += n;
      len -= n;
      written += n;
    }
  }

  /**
   * Takes as many bytes from {@code src} as it has and this value still expects; returns how many
   * (the rest of the buffer belongs to what follows the value).
   */
  public int write(ByteBuffer src) {
    checkOpen();
    int len = Math.min(src.remaining(), remaining());
    int left = len;
    while (left > 0) {
      byte[] chunk = chunk(written >>> shift);
      int at = written & ((1 << shift) - 1);
      int n = Math.min(left, chunk.length - at);
      src.get(chunk, at, n);
      left -= n;
      written += n;
    }
    return len;
  }

  /** The value; fails unless every byte was written. One value per builder. */
  public ChunkedData build() {
    checkOpen();
    if (written != totalSize) {
      throw new IllegalStateException("incomplete payload: " + written + " of " + totalSize
          + " bytes written; a value is stored whole or not at all");
    }
    built = true;
    return new ChunkedData(chunks, shift, totalSize);
  }

  // Chunks are allocated as the bytes arrive: a payload that never completes holds only what came.
  private byte[] chunk(int i) {
    byte[] chunk = chunks[i];
    if (chunk == null) {
      int length = Math.min(1 << shift, totalSize - (i << shift));
      chunk = new byte[length];
      chunks[i] = chunk;
    }
    return chunk;
  }

  private void checkOpen() {
    if (built) {
      throw new IllegalStateException("the value was built already");
    }
  }
}
