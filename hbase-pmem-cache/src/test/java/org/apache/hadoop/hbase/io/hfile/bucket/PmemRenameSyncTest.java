package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.childjvm.ChildJvm;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Every rename the engine and BucketCache make in the cache's directories is followed by a sync
 * of the directory, so a power loss cannot bring the old name back. Checked on the system calls
 * of a RegionServer-like JVM (strace).
 */
public class PmemRenameSyncTest {

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void everyRenameInTheCacheDirectories_isFollowedByADirectorySync() throws Exception {
    File p0 = new File(tmp.newFolder("pmem0"), "cache");
    File p1 = new File(tmp.newFolder("pmem1"), "cache");
    File map = new File(tmp.newFolder("map"), "bucket.persistence");
    // A persisted map the new files cannot use: it is moved aside at start.
    Files.write(map.toPath(), new byte[] {'V', '2', 'U', 'F', 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
        0, 0, 0, 0, 1, 5, 1, 2, 3, 4, 5});
    ChildJvm.Builder child = CacheProcess.child(tmp.getRoot(), "open",
        "pmem:" + p0 + "," + p1, map.getPath(), String.valueOf(16L << 20),
        "hbase.bucketcache.pmem.mapping.size=" + (4L << 20))
        .systemProperty("cacheprocess.shutdown", "true");
    StringBuilder out = new StringBuilder();
    List<Strace.Event> events = Strace.run(child, tmp.getRoot(), out);
    assertTrue(out.toString(), out.toString().contains("STOPPED"));
    int renames = 0;
    for (Strace.Event e : events) {
      if (e.call.equals("rename") && e.to.startsWith(tmp.getRoot().getPath())) {
        renames++;
      }
    }
    assertTrue("no rename traced: " + events, renames >= 2);
    assertEquals("renames without a sync of their directory, of " + events, "[]",
        Strace.renamesWithoutDirectorySync(events, tmp.getRoot()).toString());
  }
}
