package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.childjvm.ChildJvm;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.Rule;
import org.junit.Test;

/**
 * A full filesystem must never turn a cache write into a SIGBUS: what the cache files need is
 * checked per filesystem at start and the files are preallocated. Uses a small tmpfs mount
 * (skipped where mounting is not permitted).
 */
public class PmemFullFilesystemTest {
  private static final long MIB = 1L << 20;

  @Rule
  public SmallTmpfs fs = new SmallTmpfs(24 * MIB);

  private static Configuration conf() {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.bucketcache.pmem.mapping.size", String.valueOf(2 * MIB));
    c.set("hbase.bucketcache.pmem.lock.wait.ms", "0");
    return c;
  }

  @Test
  public void twoPathsThatEachFitButNotTogether_failAtStartNamingTheMissingBytes()
      throws Exception {
    File a = new File(fs.dir(), "a");
    File b = new File(fs.dir(), "b");
    a.mkdir();
    b.mkdir();
    // 40 MiB over two paths: 20 MiB each fits the 24 MiB filesystem, both do not.
    String io = "pmem:" + a + "/cache," + b + "/cache";
    try {
      new BucketCache(io, 40 * MIB, 8192, CacheProcess.BUCKET_SIZES, 1, 8, null, 60_000, conf())
          .shutdown();
      fail("two cache files that do not fit their filesystem together were accepted");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("bytes missing"));
      assertTrue(e.getMessage(), e.getMessage().contains(a + "/cache"));
      assertTrue(e.getMessage(), e.getMessage().contains(b + "/cache"));
    }
    assertEquals("a failed start leaves no file", 0, a.list().length + b.list().length);
  }

  @Test
  public void filesystemFilledAfterStart_neverFaultsACacheWrite() throws Exception {
    File dir = new File(fs.dir(), "c");
    dir.mkdir();
    File go = new File(fs.dir(), "go");
    try (ChildJvm child = CacheProcess.start(fs.dir(), "fill", "pmem:" + dir + "/cache",
        "-", String.valueOf(16 * MIB), go.getPath(),
        "hbase.bucketcache.pmem.mapping.size=" + (2 * MIB))) {
      child.awaitLineStartingWith("OPEN", 60, SECONDS);
      File filler = fs.fill();
      assertTrue(filler.length() > 0);
      assertTrue(go.createNewFile() || go.exists());
      int exit = child.waitFor(60, SECONDS);
      assertEquals("the writer died writing into a full filesystem:\n" + child.logTail(40), 0,
          exit);
      assertTrue(child.logText(), child.logText().contains("WROTE"));
    }
  }
}
