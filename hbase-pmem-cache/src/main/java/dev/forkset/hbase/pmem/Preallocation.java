package dev.forkset.hbase.pmem;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure no write into the cache can fault for lack of space: the space every cache file
 * still needs is summed per filesystem and checked before anything is written, then the files
 * are preallocated.
 *
 * <p>A mapped file with holes is a trap: when its filesystem fills up, the page fault of a later
 * store into a hole cannot allocate a block and the kernel sends SIGBUS, which kills the writer
 * thread or the JVM. Two paths on one filesystem that each fit alone (60% and 60%) used to pass.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>What a file still needs is its target length minus the bytes already allocated to it
 *       ({@code du -B1}, the allocated size rather than the apparent length, so an existing
 *       sparse file counts as the holes it has). Files on one filesystem (same {@link FileStore})
 *       are summed and compared with its usable space; a shortfall fails start naming the
 *       filesystem, every path on it, the bytes needed, usable and missing.
 *   <li>Preallocation runs {@code fallocate -l <length> <file>} (util-linux): it allocates the
 *       holes without touching data that is there, so it is safe on a warm cache, and it is fast
 *       (unwritten extents on ext4/xfs, pages on tmpfs). It is also the authoritative check: if
 *       it fails, start fails with its message and the shortfall.
 *   <li>Without {@code fallocate} the file is filled with zeros through its channel, which is
 *       only done for a file that starts cold anyway (its content is not used); a warm file that
 *       {@code du} reports fully allocated needs nothing. A filesystem that does not support
 *       fallocate(2) (NFS, FUSE, some ZFS: "Operation not supported") is treated the same way, as
 *       if the command were missing, with a warning naming the path; a real failure (no space)
 *       still fails start.
 * </ol>
 */
final class Preallocation {
  private static final Logger LOG = LoggerFactory.getLogger(Preallocation.class);

  /** The fallocate command; tests replace it with a script that fails like a filesystem. */
  static volatile String fallocateCommand = "fallocate";

  private Preallocation() {}

  /** Bytes allocated to a file (0 when it does not exist); its length when du cannot run. */
  static long allocatedBytes(File f) {
    if (!f.exists()) {
      return 0;
    }
    try {
      String out = run(60, "du", "-B1", "--", f.getPath());
      return Long.parseLong(out.trim().split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      LOG.debug("du cannot tell the allocated size of {} ({}); using its length", f, e);
      return f.length();
    }
  }

  /**
   * Fails when a filesystem cannot hold what its cache files still need.
   * @param lengths target length of each path
   */
  static void checkFreeSpace(List<File> paths, long[] lengths) throws IOException {
    Map<FileStore, List<Integer>> byStore = new LinkedHashMap<>();
    for (int i = 0; i < paths.size(); i++) {
      FileStore store = Files.getFileStore(paths.get(i).getParentFile().toPath());
      List<Integer> onStore = byStore.get(store);
      if (onStore == null) {
        onStore = new ArrayList<>();
        byStore.put(store, onStore);
      }
      onStore.add(i);
    }
    for (Map.Entry<FileStore, List<Integer>> e : byStore.entrySet()) {
      long needed = 0;
      StringBuilder parts = new StringBuilder();
      for (int i : e.getValue()) {
        File f = paths.get(i);
        long more = Math.max(0, lengths[i] - allocatedBytes(f));
        needed += more;
        parts.append(parts.length() == 0 ? "" : ", ").append(f).append(" ").append(more);
      }
      long usable = e.getKey().getUsableSpace();
      if (needed > usable) {
        throw new IOException("pmem cache: the filesystem " + e.getKey() + " holds "
            + (e.getValue().size() == 1 ? "the cache path " : "the cache paths ") + parts
            + " (bytes still to allocate, hbase.bucketcache.ioengine) and needs " + needed
            + " bytes for their part of hbase.bucketcache.size, but has only " + usable
            + " usable: " + (needed - usable) + " bytes missing. Lower hbase.bucketcache.size,"
            + " put the paths on other filesystems or free space");
      }
    }
  }

  /**
   * Allocates every byte of {@code f} up to {@code length}.
   * @param cold true when the file's content is not used, so it may be zero-filled
   * @return false when the file could not be preallocated without losing its content (no
   *     fallocate, not fully allocated, not cold): the caller must start it cold
   */
  static boolean preallocate(File f, FileChannel ch, long length, boolean cold)
      throws IOException {
    try {
      run(600, fallocateCommand, "-l", Long.toString(length), "--", f.getPath());
      return true;
    } catch (CommandMissing e) {
      LOG.debug("fallocate cannot run ({}), allocating {} by writing zeros", e.getMessage(), f);
    } catch (IOException e) {
      if (!isUnsupported(e)) {
        throw noSpace(f, length, e);
      }
      LOG.warn("pmem cache path {} (hbase.bucketcache.ioengine): its filesystem does not support"
          + " fallocate ({}); {} by writing zeros, as without the fallocate command. Put the cache"
          + " on a filesystem that supports fallocate (ext4, xfs, tmpfs) to keep a warm cache"
          + " whose file has holes", f, e.getMessage(),
          cold ? "allocating it" : "it can only be allocated");
    }
    if (!cold && allocatedBytes(f) >= length && ch.size() == length) {
      return true;
    }
    if (!cold) {
      return false;
    }
    zeroFill(f, ch, length);
    return true;
  }

  /** fallocate(2) failed with EOPNOTSUPP: the filesystem cannot preallocate at all. */
  static boolean isUnsupported(IOException e) {
    String m = e.getMessage();
    return m != null && m.contains("Operation not supported");
  }

  private static IOException noSpace(File f, long length, IOException e) {
    long usable = f.getParentFile().getUsableSpace();
    return new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine): cannot"
        + " allocate its " + length + " bytes (" + e.getMessage() + "); its filesystem has "
        + usable + " bytes usable, " + Math.max(0, length - allocatedBytes(f) - usable)
        + " bytes missing. Lower hbase.bucketcache.size or free space", e);
  }

  private static void zeroFill(File f, FileChannel ch, long length) throws IOException {
    ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
    long pos = 0;
    try {
      while (pos < length) {
        zeros.clear();
        zeros.limit((int) Math.min(zeros.capacity(), length - pos));
        while (zeros.hasRemaining()) {
          pos += ch.write(zeros, pos);
        }
      }
      ch.force(true);
    } catch (IOException e) {
      throw new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine): cannot"
          + " allocate its " + length + " bytes, " + (length - pos) + " missing (" + e.getMessage()
          + "). Lower hbase.bucketcache.size or free space", e);
    }
  }

  /** A command that is not installed. */
  static final class CommandMissing extends IOException {
    CommandMissing(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Runs a command, returns its output; an IOException carries its output when it fails. */
  static String run(long timeoutSeconds, String... command) throws IOException {
    Process p;
    try {
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
      // Untranslated messages: isUnsupported reads strerror's English text.
      pb.environment().put("LC_ALL", "C");
      p = pb.start();
    } catch (IOException e) {
      throw new CommandMissing(command[0] + ": " + e.getMessage(), e);
    }
    String out;
    try (InputStream in = p.getInputStream()) {
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      byte[] b = new byte[4096];
      int n;
      while ((n = in.read(b)) > 0) {
        buf.write(b, 0, n);
      }
      out = new String(buf.toByteArray(), StandardCharsets.UTF_8).trim();
    }
    try {
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(command[0] + " did not finish in " + timeoutSeconds + " s");
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException(command[0] + " interrupted", e);
    }
    if (p.exitValue() != 0) {
      throw new IOException(out.isEmpty() ? command[0] + " exited with " + p.exitValue() : out);
    }
    return out;
  }
}
