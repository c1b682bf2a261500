package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** Bad paths stop the start naming the setting and the path, before anything is created. */
public class StartupChecksTest {
  private static final long MIB = 1L << 20;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static Configuration conf() {
    Configuration c = new Configuration(false);
    c.set(PmemCacheConfig.MAPPING_SIZE.name, "2m");
    c.set(PmemCacheConfig.LOCK_WAIT.name, "0");
    return c;
  }

  private String failure(String io, String map) {
    try {
      PmemStore.open(PmemCacheConfig.parse(io, 8 * MIB, map, conf())).close();
      fail(io + " with map " + map + " started");
      return null;
    } catch (IOException e) {
      return e.getMessage();
    }
  }

  private void assertNothingCreated(File dir, String... existing) {
    String[] names = dir.list();
    java.util.Arrays.sort(names);
    java.util.Arrays.sort(existing);
    assertEquals(java.util.Arrays.toString(existing), java.util.Arrays.toString(names));
  }

  @Test
  public void missingDirectory_failsNamingThePath() {
    String missing = tmp.getRoot() + "/no-such-dir/cache";
    String m = failure("pmem:" + missing, null);
    assertTrue(m, m.contains(missing) && m.contains("does not exist"));
  }

  @Test
  public void directoryAsPath_failsNamingThePath() throws IOException {
    File dir = tmp.newFolder("d");
    String m = failure("pmem:" + dir, null);
    assertTrue(m, m.contains(dir.getPath()) && m.contains("not a regular file"));
  }

  @Test
  public void hardLinkedCachePaths_failNamingBoth() throws IOException {
    File dir = tmp.newFolder("d");
    File a = new File(dir, "a");
    Files.write(a.toPath(), new byte[0]);
    File b = new File(dir, "b");
    Files.createLink(b.toPath(), a.toPath());
    String m = failure("pmem:" + a + "," + b, null);
    assertTrue(m, m.contains(a.getPath()) && m.contains(b.getPath()) && m.contains("hard link"));
  }

  @Test
  public void persistencePathEqualToACachePath_failsNamingBothSettings() throws IOException {
    File dir = tmp.newFolder("d");
    String m = failure("pmem:" + dir + "/a," + dir + "/b", dir + "/b");
    assertTrue(m, m.contains("hbase.bucketcache.persistent.path") && m.contains(dir + "/b")
        && m.contains("hbase.bucketcache.ioengine"));
    assertNothingCreated(dir);
  }

  @Test
  public void persistencePathThatIsAHardLinkOfACachePath_fails() throws IOException {
    File dir = tmp.newFolder("d");
    File cache = new File(dir, "cache");
    Files.write(cache.toPath(), new byte[0]);
    File map = new File(dir, "map");
    Files.createLink(map.toPath(), cache.toPath());
    String m = failure("pmem:" + cache, map.getPath());
    assertTrue(m, m.contains("hard link") && m.contains(map.getPath()));
    assertNothingCreated(dir, "cache", "map");
  }

  @Test
  public void persistencePathThatIsASymlinkToACachePath_fails() throws IOException {
    File dir = tmp.newFolder("d");
    File cache = new File(dir, "cache");
    Files.write(cache.toPath(), new byte[0]);
    File map = new File(dir, "map");
    Files.createSymbolicLink(map.toPath(), cache.toPath());
    String m = failure("pmem:" + cache, map.getPath());
    assertTrue(m, m.contains("hbase.bucketcache.persistent.path") && m.contains("cache file"));
  }

  @Test
  public void persistencePathWhoseAsideNameIsACachePath_fails() throws IOException {
    File dir = tmp.newFolder("d");
    String m = failure("pmem:" + dir + "/map.discarded", dir + "/map");
    assertTrue(m, m.contains("moves a map it cannot use"));
  }

  @Test
  public void capacityBeyondTheFreeSpace_failsNamingPathAndSettingAndCreatesNothing()
      throws IOException {
    File dir = tmp.newFolder("d");
    long tooMuch = (dir.getUsableSpace() / MIB + 1024) * MIB;
    Configuration c = conf();
    try {
      PmemStore.open(PmemCacheConfig.parse("pmem:" + dir + "/c", tooMuch, c)).close();
      fail();
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(dir + "/c"));
      assertTrue(e.getMessage(), e.getMessage().contains("hbase.bucketcache.size"));
      assertTrue(e.getMessage(), e.getMessage().contains("bytes missing"));
    }
    assertNothingCreated(dir);
  }
}
