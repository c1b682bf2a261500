package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.hbase.pmem.PmemCacheConfig;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.hadoop.conf.Configuration;

/**
 * Maps a 64 GiB sparse cache file with the module engine and with stock pmem: and counts the
 * lines of /proc/self/maps that name it. Prints "RESULT engine mappings".
 */
public final class MappingCountBench {
  static final long CAPACITY = 64L << 30;

  public static void main(String[] args) throws Exception {
    File dir = new File(args[0] + "/forkset-pmem-maps");
    BenchFiles.delete(dir);
    dir.mkdirs();
    Configuration conf = new Configuration(false);
    String module = dir + "/module-cache";
    PmemIOEngine m = new PmemIOEngine(PmemCacheConfig.parse("pmem:" + module, CAPACITY, conf));
    System.out.println("RESULT module-pmem " + count(module));
    String stock = dir + "/stock-cache";
    SharedMemoryMmapIOEngine s = new SharedMemoryMmapIOEngine(stock, CAPACITY);
    System.out.println("RESULT stock-pmem " + count(stock));
    m.shutdown();
    s.shutdown();
    BenchFiles.delete(dir);
  }

  static long count(String path) throws Exception {
    return Files.readAllLines(Paths.get("/proc/self/maps"), StandardCharsets.UTF_8).stream()
        .filter(l -> l.endsWith(path)).count();
  }
}
