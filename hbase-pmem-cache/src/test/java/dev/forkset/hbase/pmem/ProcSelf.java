package dev.forkset.hbase.pmem;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * This process's mappings (/proc/self/maps) and open descriptors (/proc/self/fd) of a file; used
 * by the engine's tests in both packages.
 */
public final class ProcSelf {
  private ProcSelf() {}

  /** Lines of /proc/self/maps that map {@code f}. */
  public static int mappings(File f) throws IOException {
    int n = 0;
    for (String line : Files.readAllLines(new File("/proc/self/maps").toPath(),
        StandardCharsets.UTF_8)) {
      if (line.endsWith(" " + f.getPath()) || line.endsWith(" " + f.getPath() + " (deleted)")) {
        n++;
      }
    }
    return n;
  }

  /** This process's open descriptors of {@code f}. */
  public static int descriptors(File f) throws IOException {
    int n = 0;
    try (Stream<Path> fds = Files.list(new File("/proc/self/fd").toPath())) {
      for (Object o : fds.toArray()) {
        try {
          String target = Files.readSymbolicLink((Path) o).toString();
          if (target.equals(f.getPath()) || target.equals(f.getPath() + " (deleted)")) {
            n++;
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    }
    return n;
  }

  /** Collects garbage until no mapping of {@code f} is left or {@code millis} pass. */
  public static int mappingsAfterGc(File f, long millis) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + millis;
    int n = mappings(f);
    while (n > 0 && System.currentTimeMillis() < deadline) {
      System.gc();
      Thread.sleep(50);
      n = mappings(f);
    }
    return n;
  }
}
