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
}
