package dev.forkset.hbase.pmem;

import java.io.IOException;

/**
 * A write refused because its bytes lie past the end of a cache file that was cut under the
 * running cache (by a process that ignores the lock): no retry can store them, unlike a
 * transient I/O error. The engine reports it to BucketCache as a failed allocation, so the
 * writer drops that one block and goes on.
 */
public final class CacheFileCutException extends IOException {
  private static final long serialVersionUID = 1L;

  CacheFileCutException(String message) {
    super(message);
  }
}
