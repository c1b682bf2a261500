package dev.forkset.hbase.pmem;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** This process's mappings (/proc/self/maps) and open descriptors (/proc/self/fd) of a file. */
final class ProcSelf {
  private ProcSelf() {}

  static int mappings(File f) throws IOException {
    int n = 0;
    for (String line : Files.readAllLines(new File("/proc/self/maps").toPath(),
        StandardCharsets.UTF_8)) {
      if (line.endsWith(" " + f.getPath()) || line.endsWith(" " + f.getPath() + " (deleted)")) {
        n++;
      }
    }
    return n;
  }

  static int descriptors(File f) throws IOException {
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
}
