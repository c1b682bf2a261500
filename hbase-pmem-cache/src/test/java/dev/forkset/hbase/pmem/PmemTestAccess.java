package dev.forkset.hbase.pmem;

import java.io.IOException;
import java.nio.MappedByteBuffer;

/** Lets tests in BucketCache's package inject device errors into a store. */
public final class PmemTestAccess {
  private PmemTestAccess() {}

  /** Forces a range of a mapping; see {@link Mappings.Forcer}. */
  public interface Forcer {
    void force(MappedByteBuffer segment, int index, int length) throws IOException;
  }

  public static void forcer(PmemStore store, Forcer forcer) {
    store.forcer(forcer::force);
  }

  /** Forces a cache file written with positional writes; see {@link Mappings.FileForcer}. */
  public interface FileForcer {
    void force(int path, java.nio.channels.FileChannel ch) throws IOException;
  }

  public static void fileForcer(PmemStore store, FileForcer forcer) {
    store.fileForcer(forcer::force);
  }

  /** {file index, position in that file} of a logical cache offset. */
  public static long[] filePosition(PmemStore store, long offset) {
    Layout l = store.layout();
    int s = l.segmentOf(offset);
    return new long[] {l.fileOf(s), l.fileOffset(s) + l.offsetInSegment(offset)};
  }

  /**
   * Makes stores opened after this call read on their checker threads, as on JDK 9+ without
   * sun.nio.ch exported (the read benchmark's fallback row).
   */
  public static void uninterruptibleUnavailable(boolean unavailable) {
    Uninterruptible.unavailableForTests = unavailable;
  }
}
