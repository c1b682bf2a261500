package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

/** Lines of /proc/self/maps that map a given file: this process's mappings of it. */
final class ProcMaps {
  private ProcMaps() {}

  static int count(File f) throws IOException {
    int n = 0;
    for (String line : Files.readAllLines(new File("/proc/self/maps").toPath(),
        StandardCharsets.UTF_8)) {
      if (line.endsWith(" " + f.getPath()) || line.endsWith(" " + f.getPath() + " (deleted)")) {
        n++;
      }
    }
    return n;
  }

  /** Collects garbage until no mapping of {@code f} is left or {@code millis} pass. */
  static int countAfterGc(File f, long millis) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + millis;
    int n = count(f);
    while (n > 0 && System.currentTimeMillis() < deadline) {
      System.gc();
      Thread.sleep(50);
      n = count(f);
    }
    return n;
  }

  /** This process's open descriptors of {@code f}. */
  static int descriptors(File f) throws IOException {
    int n = 0;
    File[] fds = new File("/proc/self/fd").listFiles();
    for (File fd : fds == null ? new File[0] : fds) {
      try {
        String target = Files.readSymbolicLink(fd.toPath()).toString();
        if (target.equals(f.getPath()) || target.equals(f.getPath() + " (deleted)")) {
          n++;
        }
      } catch (IOException e) {
        // closed meanwhile
      }
    }
    return n;
  }
}
