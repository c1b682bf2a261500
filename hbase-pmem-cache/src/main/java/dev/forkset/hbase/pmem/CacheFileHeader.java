package dev.forkset.hbase.pmem;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * The identity of a cache file, kept in the file itself: which cache (epoch), which of its files
 * (index and count), laid out how (capacity, mapping size), checked with which checksum. Plus an
 * advisory record of the process that uses the file.
 *
 * <p>Layout, in the first {@link Layout#HEADER_RESERVE} bytes of every cache file:
 * <pre>
 *   0  long  magic "FKPMEMC2"
 *   8  int   format version
 *  12  int   file index        16 int  file count
 *  20  int   block checksum (1 CRC32, 2 CRC32C)
 *  24  long  epoch (random, never 0; new at every format)
 *  32  long  capacity          40 long mapping size     48 long header reserve
 *  56  long  formatted at (epoch millis, for people)
 *  64  int   CRC32 of bytes 0..63
 * 4096       holder record: int length, UTF-8 text, int CRC32 of length and text
 * </pre>
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The epoch is the proof that ties everything together: it is written in every file's
 *       header, in every block's header ({@link BlockCheck}) and digested into the backing map
 *       BucketCache persists. Swapped files (wrong index), recreated or zeroed files (no header),
 *       files of another cache (other epoch) or another layout start cold: nothing written under
 *       another identity can be served.
 *   <li>The identity record is written once, when the cache is formatted, and forced before any
 *       block is written; a torn write fails its CRC, which also means a cold start.
 *   <li>The holder record ("running pid@host since ..." or "stopped cleanly ...") is rewritten at
 *       every start and clean stop. It only serves messages: who holds the lock of a file, and
 *       whether the previous run stopped cleanly. A torn holder record reads as unknown.
 * </ol>
 */
final class CacheFileHeader {

  static final long MAGIC = 0x464B504D454D4332L;
  static final int VERSION = 1;
  static final int RECORD_SIZE = 68;
  static final long HOLDER_OFFSET = 4096;
  static final int HOLDER_MAX = 1024;

  final int fileIndex;
  final int fileCount;
  final int crcId;
  final long epoch;
  final long capacity;
  final long mappingSize;
  final long headerReserve;
  final long formattedAt;

  CacheFileHeader(int fileIndex, int fileCount, int crcId, long epoch, long capacity,
      long mappingSize, long headerReserve, long formattedAt) {
    this.fileIndex = fileIndex;
    this.fileCount = fileCount;
    this.crcId = crcId;
    this.epoch = epoch;
    this.capacity = capacity;
    this.mappingSize = mappingSize;
    this.headerReserve = headerReserve;
    this.formattedAt = formattedAt;
  }

  /** The header of file {@code index} of a cache with this layout. */
  static CacheFileHeader of(Layout layout, int index, Crc crc, long epoch, long now) {
    return new CacheFileHeader(index, layout.pathCount(), crc.id(), epoch, layout.capacity(),
        layout.mappingSize(), Layout.HEADER_RESERVE, now);
  }

  ByteBuffer encode() {
    ByteBuffer b = ByteBuffer.allocate(RECORD_SIZE);
    b.putLong(MAGIC).putInt(VERSION).putInt(fileIndex).putInt(fileCount).putInt(crcId)
        .putLong(epoch).putLong(capacity).putLong(mappingSize).putLong(headerReserve)
        .putLong(formattedAt);
    b.putInt(crc32(b.array(), 0, RECORD_SIZE - 4));
    b.flip();
    return b;
  }

  /**
   * Decodes an identity record.
   * @throws IOException saying why the bytes are not a valid header
   */
  static CacheFileHeader decode(ByteBuffer b) throws IOException {
    if (b.remaining() < RECORD_SIZE) {
      throw new IOException("the file is shorter than its header");
    }
    byte[] bytes = new byte[RECORD_SIZE];
    b.duplicate().get(bytes);
    ByteBuffer r = ByteBuffer.wrap(bytes);
    long magic = r.getLong();
    if (magic != MAGIC) {
      throw new IOException(magic == 0 ? "the file has no cache header (zeroed or new)"
          : "the file has no pmem cache header");
    }
    int version = r.getInt();
    if (version != VERSION) {
      throw new IOException("the cache header has format version " + version + ", this engine"
          + " reads " + VERSION);
    }
    if (r.getInt(RECORD_SIZE - 4) != crc32(bytes, 0, RECORD_SIZE - 4)) {
      throw new IOException("the cache header fails its CRC");
    }
    return new CacheFileHeader(r.getInt(), r.getInt(), r.getInt(), r.getLong(), r.getLong(),
        r.getLong(), r.getLong(), r.getLong());
  }

  /** Reads the identity record of a file. */
  static CacheFileHeader read(FileChannel ch) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(RECORD_SIZE);
    while (b.hasRemaining()) {
      if (ch.read(b, b.position()) < 0) {
        break;
      }
    }
    b.flip();
    return decode(b);
  }

  /**
   * Compares this header with what file {@code index} of a cache with {@code layout} needs.
   * @return null when it matches, else why not
   */
  String mismatch(Layout layout, int index) {
    if (fileCount != layout.pathCount()) {
      return "it belongs to a cache of " + fileCount + " files, this one has "
          + layout.pathCount();
    }
    if (fileIndex != index) {
      return "it is file " + (fileIndex + 1) + " of its cache but is listed as file "
          + (index + 1) + " (paths swapped or reordered)";
    }
    if (capacity != layout.capacity() || mappingSize != layout.mappingSize()
        || headerReserve != Layout.HEADER_RESERVE) {
      return "its layout changed (capacity " + capacity + ", mapping size " + mappingSize
          + "; now " + layout.capacity() + ", " + layout.mappingSize() + ")";
    }
    return null;
  }

  static ByteBuffer encodeHolder(String text) {
    byte[] t = text.getBytes(StandardCharsets.UTF_8);
    int n = Math.min(t.length, HOLDER_MAX - 8);
    ByteBuffer b = ByteBuffer.allocate(n + 8);
    b.putInt(n).put(t, 0, n);
    b.putInt(crc32(b.array(), 0, n + 4));
    b.flip();
    return b;
  }

  /** The holder record of a file, or null when it has none (or a torn one). */
  static String readHolder(FileChannel ch) {
    try {
      ByteBuffer b = ByteBuffer.allocate(HOLDER_MAX);
      ch.read(b, HOLDER_OFFSET);
      b.flip();
      if (b.remaining() < 8) {
        return null;
      }
      int n = b.getInt(0);
      if (n < 0 || n > HOLDER_MAX - 8 || b.remaining() < n + 8) {
        return null;
      }
      if (b.getInt(n + 4) != crc32(b.array(), 0, n + 4)) {
        return null;
      }
      return new String(b.array(), 4, n, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static int crc32(byte[] b, int off, int len) {
    CRC32 c = new CRC32();
    c.update(b, off, len);
    return (int) c.getValue();
  }
}
