package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.junit.Assume;
import org.junit.rules.ExternalResource;

/**
 * A tmpfs of a given size mounted for one test, for real "filesystem full" faults. Needs the
 * right to mount (root, as in this project's CI); elsewhere the test is skipped with that reason.
 */
final class SmallTmpfs extends ExternalResource {
  private final long bytes;
  private File dir;

  SmallTmpfs(long bytes) {
    this.bytes = bytes;
  }

  File dir() {
    return dir;
  }

  @Override
  protected void before() throws Throwable {
    dir = Files.createTempDirectory("pmem-small-fs").toFile();
    String out = run("mount", "-t", "tmpfs", "-o", "size=" + bytes, "tmpfs", dir.getPath());
    Assume.assumeTrue("cannot mount a " + bytes + "-byte tmpfs here (" + out + "): the"
        + " full-filesystem test needs root, as in CI", out == null);
  }

  @Override
  protected void after() {
    if (dir != null) {
      run("umount", "-l", dir.getPath());
      dir.delete();
    }
  }

  /** Null on success, else the command's output or error. */
  private static String run(String... cmd) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      byte[] out = readAll(p);
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "timed out";
      }
      return p.exitValue() == 0 ? null : new String(out, "UTF-8").trim();
    } catch (IOException | InterruptedException e) {
      return e.toString();
    }
  }

  private static byte[] readAll(Process p) throws IOException {
    java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
    byte[] b = new byte[4096];
    int n;
    while ((n = p.getInputStream().read(b)) > 0) {
      buf.write(b, 0, n);
    }
    return buf.toByteArray();
  }

  /** Fills the filesystem with a file until a write fails; returns that file. */
  File fill() throws IOException {
    File filler = new File(dir, "filler");
    try (java.io.RandomAccessFile out = new java.io.RandomAccessFile(filler, "rw")) {
      for (int size : new int[] {64 * 1024, 4096}) {
        byte[] chunk = new byte[size];
        try {
          while (true) {
            out.write(chunk);
          }
        } catch (IOException full) {
          // ENOSPC at this chunk size; try a smaller one.
        }
      }
    }
    return filler;
  }
}
