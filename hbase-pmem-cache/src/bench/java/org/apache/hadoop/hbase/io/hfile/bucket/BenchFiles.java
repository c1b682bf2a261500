package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.File;

/** Deletes benchmark scratch directories. */
final class BenchFiles {
  private BenchFiles() {
  }

  static void delete(File f) {
    File[] children = f.listFiles();
    if (children != null) {
      for (File c : children) {
        delete(c);
      }
    }
    f.delete();
  }
}
