package dev.forkset.hazelcast.chunked;

import java.io.InputStream;

/**
 * Reads a {@link ChunkedData}'s payload chunk by chunk, without an array of its size: the
 * chunk-backed input for deserialization ({@link StreamingDeserializer}) and for writers that
 * take a stream.
 */
final class ChunkedDataInputStream extends InputStream {
  private final ChunkedData data;
  private int pos;
  private int mark;

  ChunkedDataInputStream(ChunkedData data, int from) {
    this.data = data;
    this.pos = from;
    this.mark = from;
  }

  @Override
  public int read() {
    return pos < data.totalSize() ? data.byteAt(pos++) & 0xff : -1;
  }

  @Override
  public int read(byte[] b, int off, int len) {
    if (off < 0 || len < 0 || off > b.length - len) {
      throw new IndexOutOfBoundsException(
          "buffer " + b.length + " bytes, offset " + off + ", length " + len);
    }
    if (len == 0) {
      return 0;
    }
    int left = data.totalSize() - pos;
    if (left <= 0) {
      return -1;
    }
    // Stops at a chunk's end; DataInputStream.readFully and callers loop as InputStream allows.
    int n = data.read(pos, b, off, Math.min(len, left));
    pos += n;
    return n;
  }

  @Override
  public long skip(long n) {
    long skipped = Math.max(0, Math.min(n, data.totalSize() - pos));
    pos += (int) skipped;
    return skipped;
  }

  @Override
  public int available() {
    return data.totalSize() - pos;
  }

  @Override
  public boolean markSupported() {
    return true;
  }

  @Override
  public synchronized void mark(int readlimit) {
    mark = pos;
  }

  @Override
  public synchronized void reset() {
    pos = mark;
  }
}
