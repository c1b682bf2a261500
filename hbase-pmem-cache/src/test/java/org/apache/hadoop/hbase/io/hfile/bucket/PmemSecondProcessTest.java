package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.childjvm.ChildJvm;
import java.util.regex.Pattern;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.lang.management.ManagementFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** A second RegionServer process on the same cache paths must not start. */
public class PmemSecondProcessTest {
  private static final long CAPACITY = 16L << 20;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void secondProcessOnTheSamePaths_failsNamingThePathAndTheHolder() throws Exception {
    File p0 = new File(tmp.newFolder("pmem0"), "cache");
    File p1 = new File(tmp.newFolder("pmem1"), "cache");
    String io = "pmem:" + p0 + "," + p1;
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.bucketcache.pmem.mapping.size", String.valueOf(4L << 20));
    BucketCache mine = new BucketCache(io, CAPACITY, 8192, CacheProcess.BUCKET_SIZES, 1, 8,
        tmp.getRoot() + "/mine.persistence", 60_000, conf);
    try (ChildJvm other = CacheProcess.start(tmp.getRoot(), "open",
        // Its own persistence file; only the cache files are shared, in another order.
        "pmem:" + p1 + "," + p0, tmp.getRoot() + "/other.persistence", String.valueOf(CAPACITY),
        "hbase.bucketcache.pmem.mapping.size=" + (4L << 20),
        "hbase.bucketcache.pmem.lock.wait.ms=200")) {
      String line = other.await(Pattern.compile("^(STARTED|FAILED).*"), 60, SECONDS).group();
      int exit = other.waitFor(60, SECONDS);
      assertTrue("the second process started on the same cache files: " + line,
          line.startsWith("FAILED"));
      assertEquals(1, exit);
      String me = ManagementFactory.getRuntimeMXBean().getName();
      assertTrue(line, line.contains(p1.getPath()));
      assertTrue("the message does not name the holder " + me + ": " + line, line.contains(me));
    } finally {
      mine.shutdown();
    }
  }

  /**
   * A stock engine of the custom jar in another process, configured with one of the module's
   * files: it must be refused before it sets the file's length (stock pmem: and file: set it to
   * their own capacity, which truncates a module file; file: with persistence off deletes it).
   */
  @Test
  public void stockEnginesOfAnotherProcessOnTheModulesFiles_areRefusedAndLeaveThem()
      throws Exception {
    File p0 = new File(tmp.newFolder("pmem0"), "cache");
    File p1 = new File(tmp.newFolder("pmem1"), "cache");
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.bucketcache.pmem.mapping.size", String.valueOf(4L << 20));
    BucketCache mine = new BucketCache("pmem:" + p0 + "," + p1, CAPACITY, 8192,
        CacheProcess.BUCKET_SIZES, 1, 8, tmp.getRoot() + "/mine.persistence", 60_000, conf);
    try {
      // Nothing here opens p0: closing any descriptor of it in this JVM would release the
      // module's lock on it (POSIX locks belong to the process). File.length() is a stat.
      long length = p0.length();
      String[][] engines = {
        {"pmem:" + p0, "hbase.bucketcache.pmem.engine=stock"},
        {"file:" + p0, "hbase.bucketcache.pmem.engine=stock"},
        {"mmap:" + p0, "hbase.bucketcache.pmem.engine=stock"},
      };
      int n = 0;
      for (String[] engine : engines) {
        // The stock engines take a capacity that differs from the module file's length.
        try (ChildJvm other = CacheProcess.start(tmp.getRoot(), "open", engine[0],
            tmp.getRoot() + "/other" + (n++) + ".persistence", String.valueOf(CAPACITY / 2),
            engine[1])) {
          String line = other.await(Pattern.compile("^(STARTED|FAILED).*"), 60, SECONDS)
              .group();
          other.waitFor(60, SECONDS);
          assertTrue(engine[0] + " started on a file the module holds: " + line,
              line.startsWith("FAILED"));
          assertTrue(line, line.contains(p0.getPath()));
        }
        assertEquals(engine[0] + " changed the length of " + p0, length, p0.length());
      }
    } finally {
      mine.shutdown();
    }
  }
}
