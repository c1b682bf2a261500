package dev.forkset.hbase.pmem;

import java.nio.ByteBuffer;
import java.util.zip.Checksum;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;

/**
 * The header that lets every cached block prove itself: which cache wrote it (the epoch), under
 * which key, how long it is, and a checksum of all that and of the block's bytes.
 *
 * <p>Layout, {@link #HEADER_SIZE} bytes in front of each block (BucketCache reserves them, see
 * {@code BlockVerifyingIOEngine}):
 * <pre>
 *   0  int   magic "PMB1"
 *   4  int   body length (block bytes and BucketCache's metadata after them)
 *   8  long  epoch of the cache files (see {@link CacheFileHeader})
 *  16  long  hash of the block's key (HFile name and offset)
 *  24  int   0 (reserved)
 *  28  int   checksum of bytes 0..27 and of the body
 * </pre>
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The checksum of a positional write (the default) is computed over the entry as it is
 *       written, the writer's direct buffer that the pwrite copies to the file
 *       ({@link #seal}); with writes into the mappings, over the writer's source buffers, which
 *       the write copies after.
 *   <li>A block passes only if every field matches what its backing-map entry expects: a bucket
 *       reused for another block (another key), another size (length, checksum), a torn write
 *       (checksum), a recreated or foreign file (epoch) all fail. HFile blocks never change under
 *       a key, so an intact block found under its key is the right one, whenever it was written.
 *   <li>The key hash is 64-bit FNV-1a over the HFile name's chars, combined with the offset
 *       through MurmurHash3's 64-bit finalizer; it is not a defence against an adversary, the
 *       checksum and the epoch are checked too.
 *   <li>The checksum never runs over mapped memory: a page of a mapping with nothing behind it
 *       (a file truncated by another process, a media error) raises SIGBUS when touched, and in
 *       the intrinsic CRC32C stub that crashes the JVM (seen here on JDK 17). Writes sum the
 *       writer's buffers; checks of stored blocks get their bytes from the files
 *       ({@code Mappings.check}, {@code PmemStore#readBlock}), where such a page is an
 *       IOException.
 * </ol>
 */
final class BlockCheck {

  static final int HEADER_SIZE = 32;
  static final int MAGIC = 0x504D4231;
  private static final int CHECKED_HEADER_BYTES = 28;

  private final long epoch;
  private final Crc crc;

  BlockCheck(long epoch, Crc crc) {
    this.epoch = epoch;
    this.crc = crc;
  }

  long epoch() {
    return epoch;
  }

  Crc crc() {
    return crc;
  }

  /** The header of a block whose body is {@code body} (buffers that are not mapped memory). */
  ByteBuffer header(BlockCacheKey key, int bodyLength, ByteBuffer[] body) {
    ByteBuffer h = ByteBuffer.allocate(HEADER_SIZE);
    h.putInt(MAGIC).putInt(bodyLength).putLong(epoch).putLong(keyHash(key)).putInt(0);
    h.putInt(checksum(h, body));
    h.flip();
    return h;
  }

  /**
   * Writes the header into the first {@link #HEADER_SIZE} bytes of {@code entry} (position 0 to
   * its limit: header room, then the body), summed over the body as it is in {@code entry}.
   */
  void seal(BlockCacheKey key, ByteBuffer entry) {
    ByteBuffer body = entry.duplicate();
    body.position(HEADER_SIZE);
    ByteBuffer h = header(key, body.remaining(), new ByteBuffer[] {body.slice()});
    ByteBuffer at = entry.duplicate();
    at.position(0);
    at.put(h);
  }

  /**
   * Compares a stored block with what its entry expects.
   * @param header the {@link #HEADER_SIZE} stored header bytes, from position 0
   * @param body   the stored body, {@code bodyLength} bytes over one or more buffers, none of
   *               them a mapping (copies read from the files): summed in place
   * @return null when the block is intact, else why it is not
   */
  String mismatch(BlockCacheKey key, int bodyLength, ByteBuffer header, ByteBuffer[] body) {
    int magic = header.getInt(0);
    if (magic != MAGIC) {
      return "no block header (magic " + Integer.toHexString(magic) + ")";
    }
    if (header.getLong(8) != epoch) {
      return "written by another cache (epoch " + Long.toHexString(header.getLong(8)) + ")";
    }
    if (key != null && header.getLong(16) != keyHash(key)) {
      return "holds another key's block";
    }
    if (header.getInt(4) != bodyLength) {
      return "holds a block of " + header.getInt(4) + " bytes, not " + bodyLength;
    }
    ByteBuffer checked = header.duplicate();
    checked.limit(CHECKED_HEADER_BYTES).position(CHECKED_HEADER_BYTES);
    if (header.getInt(CHECKED_HEADER_BYTES) != checksum(checked, body)) {
      return "fails its " + crc.name();
    }
    return null;
  }

  /** Checksum of the first 28 header bytes (position 28 of {@code h}) and the body. */
  private int checksum(ByteBuffer h, ByteBuffer[] body) {
    Checksum c = crc.create();
    ByteBuffer prefix = h.duplicate();
    prefix.flip();
    crc.update(c, prefix);
    for (ByteBuffer b : body) {
      crc.update(c, b.duplicate());
    }
    return (int) c.getValue();
  }

  static long keyHash(BlockCacheKey key) {
    return keyHash(key.getHfileName(), key.getOffset());
  }

  static long keyHash(String hfileName, long offset) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < hfileName.length(); i++) {
      h ^= hfileName.charAt(i);
      h *= 0x100000001b3L;
    }
    return fmix64(h ^ fmix64(offset + 0x9E3779B97F4A7C15L));
  }

  private static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }
}
