package dev.forkset.hbase.pmem;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;

/**
 * An exclusive lock on a cache file, so two RegionServers configured with the same paths cannot
 * write into each other's blocks.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The lock is a POSIX record lock on the whole file ({@code FileChannel.tryLock}, i.e.
 *       {@code fcntl(F_SETLK)}): held by the process, released by the kernel when the process
 *       ends however it ends (kill -9 included), so a crash never leaves a stale lock behind.
 *       Every cache file is locked, not a side file, so two servers whose path lists merely
 *       overlap also collide.
 *   <li>POSIX locks do not name their holder to Java. Each holder writes "running pid@host since
 *       ..." into the file's holder record ({@link CacheFileHeader}) once it holds the lock; a
 *       process that fails to get the lock reads that record for its message.
 *   <li>Within one JVM a second lock on the same file throws OverlappingFileLockException; it is
 *       reported the same way, naming this process.
 *   <li>Start-up retries for a while (hbase.bucketcache.pmem.lock.wait.ms), for a restart that
 *       overlaps the previous process's exit.
 * </ol>
 */
final class CacheLock {

  private CacheLock() {}

  /** This process, as "pid@host". */
  static String self() {
    return ManagementFactory.getRuntimeMXBean().getName();
  }

  /**
   * Locks the whole file, retrying until {@code waitMillis} has passed.
   * @throws IOException naming the path and the holder when the lock stays taken
   */
  static FileLock acquire(File path, FileChannel ch, long waitMillis) throws IOException {
    long deadline = System.nanoTime() + waitMillis * 1_000_000L;
    while (true) {
      boolean inThisJvm = false;
      try {
        FileLock lock = ch.tryLock();
        if (lock != null) {
          return lock;
        }
      } catch (OverlappingFileLockException e) {
        inThisJvm = true;
      }
      if (System.nanoTime() - deadline >= 0) {
        String holder = CacheFileHeader.readHolder(ch);
        String who = inThisJvm ? "this process (" + self() + ")"
            : "another process" + (holder == null ? "" : ": " + holder);
        throw new IOException("pmem cache path " + path + " (hbase.bucketcache.ioengine) is in"
            + " use by " + who + ". Two RegionServers cannot share cache files: stop the other"
            + " one or give this one other paths");
      }
      try {
        Thread.sleep(Math.min(100, Math.max(1, waitMillis)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for the lock of " + path, e);
      }
    }
  }
}
