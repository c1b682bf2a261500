package dev.forkset.it.pmem;

import java.io.BufferedInputStream;
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
   * How many blocks the checkpoint at {@code file} names, read as BucketCache reads it back; -1
   * while there is no whole checkpoint there. A checkpoint is renamed into place whole, so a
   * reader sees the old one or the new one. Two layouts follow the magic: up to HBase 2.6.4 the
   * chunk size and the chunk count (8 bytes each, the first byte 0), then that many chunks, the
   * first inside the cache's details; since HBASE-28839 (2.6.5, the custom jar's 0063) the cache's
   * details, then chunks up to the end of the file (the varint length in front, never 0).
   */
  static long blocks(Path file) {
    try (InputStream raw = Files.newInputStream(file)) {
      BufferedInputStream in = new BufferedInputStream(raw);
      DataInputStream data = new DataInputStream(in);
      byte[] magic = new byte[MAGIC.length];
      data.readFully(magic);
      if (!Arrays.equals(magic, MAGIC)) {
        return -1;
      }
      in.mark(1);
      int first = in.read();
      in.reset();
      long blocks = 0;
      if (first == 0) {
        data.readLong(); // chunk size
        long chunks = data.readLong();
        for (long i = 0; i < chunks; i++) {
          BucketCacheProtos.BackingMap chunk = i == 0
              ? BucketCacheProtos.BucketCacheEntry.parseDelimitedFrom(in).getBackingMap()
              : BucketCacheProtos.BackingMap.parseDelimitedFrom(in);
          blocks += chunk.getEntryCount();
        }
      } else {
        blocks = BucketCacheProtos.BucketCacheEntry.parseDelimitedFrom(in).getBackingMap()
            .getEntryCount();
        BucketCacheProtos.BackingMap chunk;
        while ((chunk = BucketCacheProtos.BackingMap.parseDelimitedFrom(in)) != null) {
          blocks += chunk.getEntryCount();
        }
      }
      return blocks;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}
