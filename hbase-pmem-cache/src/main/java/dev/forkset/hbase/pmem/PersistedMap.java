package dev.forkset.hbase.pmem;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
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
 *   <li>BucketCache writes "V2UF", the chunk size, the number of chunks, then length-delimited
 *       protobuf messages; the first one ({@code BucketCacheEntry}) holds the checksum field
 *       next to the first chunk of entries ("PBUF" and one message in the old format). Only its
 *       tags are walked: every other field, the entries included, is skipped by length.
 *   <li>A map of zero chunks (an empty cache) has no checksum and nothing to use.
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
   * @return the checksum, an empty array for a map of zero chunks
   * @throws IOException saying why the map cannot be read or has no checksum
   */
  static byte[] readChecksum(File map) throws IOException {
    try (InputStream raw = new BufferedInputStream(new FileInputStream(map), 1 << 16)) {
      DataInputStream in = new DataInputStream(raw);
      byte[] magic = new byte[4];
      in.readFully(magic);
      if (Arrays.equals(magic, V2)) {
        in.readLong(); // chunk size
        long chunks = in.readLong();
        if (chunks == 0) {
          return new byte[0];
        }
      } else if (!Arrays.equals(magic, V1)) {
        throw new IOException("it is not a BucketCache persistence file");
      }
      CodedInputStream cis = CodedInputStream.newInstance(in);
      cis.setSizeLimit(Integer.MAX_VALUE);
      int length = cis.readRawVarint32();
      int start = cis.getTotalBytesRead();
      int limit = cis.pushLimit(length);
      while (true) {
        int tag = cis.readTag();
        if (tag == 0) {
          break;
        }
        if (WireFormat.getTagFieldNumber(tag)
            == BucketCacheProtos.BucketCacheEntry.CHECKSUM_FIELD_NUMBER
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          return cis.readByteArray();
        }
        if (!cis.skipField(tag)) {
          break;
        }
      }
      if (cis.getTotalBytesRead() - start < length) {
        throw new IOException("it is truncated");
      }
      cis.popLimit(limit);
      throw new IOException("it carries no checksum");
    } catch (EOFException e) {
      throw new IOException("it is truncated", e);
    }
  }
}
