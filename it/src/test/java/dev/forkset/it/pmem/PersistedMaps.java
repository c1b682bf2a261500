package dev.forkset.it.pmem;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.apache.hadoop.hbase.shaded.protobuf.generated.BucketCacheProtos;

/** What a BucketCache persistence file (a checkpoint of its backing map) holds. */
final class PersistedMaps {
  /** BucketProtoUtils.PB_MAGIC_V2: the chunked format of HBase 2.6. */
  private static final byte[] MAGIC = {'V', '2', 'U', 'F'};

  private PersistedMaps() {}

  /**
   * How many blocks the checkpoint at {@code file} names, read as BucketCache reads it back (the
   * header, then each chunk); -1 while there is no whole checkpoint there. A checkpoint is
   * renamed into place whole, so a reader sees the old one or the new one.
   */
  static long blocks(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      DataInputStream data = new DataInputStream(in);
      byte[] magic = new byte[MAGIC.length];
      data.readFully(magic);
      if (!Arrays.equals(magic, MAGIC)) {
        return -1;
      }
      data.readLong(); // chunk size
      long chunks = data.readLong();
      long blocks = 0;
      for (long i = 0; i < chunks; i++) {
        BucketCacheProtos.BackingMap chunk = i == 0
            ? BucketCacheProtos.BucketCacheEntry.parseDelimitedFrom(in).getBackingMap()
            : BucketCacheProtos.BackingMap.parseDelimitedFrom(in);
        blocks += chunk.getEntryCount();
      }
      return blocks;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}
