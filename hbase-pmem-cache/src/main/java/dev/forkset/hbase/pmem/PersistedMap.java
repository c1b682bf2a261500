package dev.forkset.hbase.pmem;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import org.apache.hadoop.hbase.shaded.protobuf.generated.BucketCacheProtos;
import org.apache.hbase.thirdparty.com.google.protobuf.CodedInputStream;
import org.apache.hbase.thirdparty.com.google.protobuf.WireFormat;

/**
 * The link between BucketCache's persisted backing map and the cache files: the map carries a
 * digest of the files' epoch and layout (BucketCache stores what
 * {@code PersistentIOEngine.calculateChecksum} returns), and the engine reads that digest back
 * without parsing the map, so a map it will not use is moved aside unread.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Three layouts. "PBUF" and one {@code BucketCacheEntry} holding every entry (before the
 *       chunked format). "V2UF" as written up to HBase 2.6.4: the chunk size and the number of
 *       chunks (8 bytes each, big-endian), then that many length-delimited messages, the first a
 *       {@code BucketCacheEntry} with the first chunk of entries next to its checksum. "V2UF" as
 *       written since HBASE-28839 (2.6.5, and the custom jar's 0063): a delimited
 *       {@code BucketCacheEntry} with the checksum and no entries, then delimited
 *       {@code BackingMap} chunks up to the end of the file, no count. The byte after "V2UF"
 *       tells them apart: the first byte of a chunk size below 2^56 is 0, the first byte of the
 *       varint length of a message with required fields never is.
 *   <li>Only the first message's tags are walked: every other field, the entries included, is
 *       skipped by length. The other messages are skipped by their length prefix alone, so a map
 *       that ends inside a message, or before a chunk it announces, reads as truncated.
 *   <li>A 2.6.4 map of zero chunks (an empty cache) has no checksum and nothing to use.
 * </ol>
 */
final class PersistedMap {

  private static final byte[] V2 = {'V', '2', 'U', 'F'};
  private static final byte[] V1 = {'P', 'B', 'U', 'F'};

  private PersistedMap() {}

  /** The digest a map of this cache carries. */
  static byte[] digest(String algorithm, long epoch, Layout layout) throws IOException {
    try {
      MessageDigest md = MessageDigest.getInstance(algorithm);
      md.update(("forkset-pmem;" + layout.describe() + ";epoch=" + Long.toHexString(epoch))
          .getBytes(StandardCharsets.UTF_8));
      return md.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IOException("hbase.bucketcache.persistent.file.integrity.check.algorithm='"
          + algorithm + "' is not a MessageDigest algorithm of this JDK", e);
    }
  }

  /**
   * Reads the checksum field of a persisted map.
   * @return the checksum, an empty array for a 2.6.4 map of zero chunks
   * @throws IOException saying why the map cannot be read or has no checksum
   */
  static byte[] readChecksum(File map) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(map, "r")) {
      long length = raf.length();
      byte[] magic = new byte[4];
      raf.readFully(magic);
      long chunks; // messages after the first; -1: up to the end of the file
      if (Arrays.equals(magic, V1)) {
        chunks = 0;
      } else if (!Arrays.equals(magic, V2)) {
        throw new IOException("it is not a BucketCache persistence file");
      } else if (peek(raf) == 0) {
        raf.readLong(); // chunk size
        long announced = raf.readLong();
        if (announced == 0) {
          return new byte[0];
        }
        chunks = announced - 1;
      } else {
        chunks = -1;
      }
      long bodyLength = readVarint(raf);
      long body = raf.getFilePointer();
      if (body + bodyLength > length) {
        throw new IOException("it is truncated");
      }
      byte[] checksum = checksumField(map, body, (int) bodyLength);
      long next = body + bodyLength;
      for (long i = 0; chunks < 0 ? next < length : i < chunks; i++) {
        if (next >= length) {
          throw new IOException("it is truncated");
        }
        raf.seek(next);
        long n = readVarint(raf);
        next = raf.getFilePointer() + n;
        if (next > length) {
          throw new IOException("it is truncated");
        }
      }
      if (checksum == null) {
        throw new IOException("it carries no checksum");
      }
      return checksum;
    } catch (EOFException e) {
      throw new IOException("it is truncated", e);
    }
  }

  private static int peek(RandomAccessFile raf) throws IOException {
    long at = raf.getFilePointer();
    int b = raf.read();
    if (b < 0) {
      throw new EOFException();
    }
    raf.seek(at);
    return b;
  }

  /** A protobuf varint (at most 10 bytes; lengths here fit 32 bits). */
  private static long readVarint(RandomAccessFile raf) throws IOException {
    long value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      int b = raf.read();
      if (b < 0) {
        throw new EOFException();
      }
      value |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        if (value < 0 || value > Integer.MAX_VALUE) {
          throw new IOException("it holds a message of " + value + " bytes, which is no map");
        }
        return value;
      }
    }
    throw new IOException("it holds a malformed length");
  }

  /** The checksum field of the {@code BucketCacheEntry} at {@code body}, or null. */
  private static byte[] checksumField(File map, long body, int length) throws IOException {
    try (FileInputStream file = new FileInputStream(map)) {
      file.getChannel().position(body);
      CodedInputStream cis =
          CodedInputStream.newInstance(new BufferedInputStream(file, 1 << 16));
      cis.setSizeLimit(Integer.MAX_VALUE);
      cis.pushLimit(length);
      while (true) {
        int tag = cis.readTag();
        if (tag == 0) {
          return null;
        }
        if (WireFormat.getTagFieldNumber(tag)
            == BucketCacheProtos.BucketCacheEntry.CHECKSUM_FIELD_NUMBER
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          return cis.readByteArray();
        }
        if (!cis.skipField(tag)) {
          return null;
        }
      }
    }
  }
}
