package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class PmemStoreTest {
  private static final long MIB = 1L << 20;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private Configuration conf(long mappingSize) {
    Configuration c = new Configuration(false);
    c.setLong(PmemCacheConfig.MAPPING_SIZE_KEY, mappingSize);
    return c;
  }

  private String twoPaths() throws IOException {
    return "pmem:" + tmp.newFolder("p0") + "/cache," + tmp.newFolder("p1") + "/cache";
  }

  @Test
  public void segmentsAlternateBetweenPathsAtDeterministicFileOffsets() throws Exception {
    String io = twoPaths();
    long capacity = 10 * MIB + 4096;
    PmemStore store = new PmemStore(PmemCacheConfig.parse(io, capacity, conf(2 * MIB)));
    int segments = (int) ((capacity + 2 * MIB - 1) / (2 * MIB));
    assertEquals(segments, store.mappingCount());
    for (int s = 0; s < segments; s++) {
      ByteBuffer b = ByteBuffer.allocate(8);
      b.putLong(0, 1000 + s);
      store.write(ByteBuff.wrap(b), s * 2 * MIB);
    }
    store.sync();
    for (int s = 0; s < segments; s++) {
      File f = store.paths().get(s % 2);
      try (RandomAccessFile raf = new RandomAccessFile(f, "r")) {
        raf.seek((s / 2) * 2 * MIB);
        assertEquals("segment " + s + " in " + f, 1000 + s, raf.readLong());
      }
    }
    // The last segment holds only the 4 KiB beyond 10 MiB.
    assertEquals(4 * MIB + 4096, store.paths().get(1).length());
    assertEquals(6 * MIB, store.paths().get(0).length());
  }

  @Test
  public void mappingCountStaysWithinCapacityOverMappingSizePlusPaths() throws Exception {
    long capacity = 64 * MIB + 1;
    PmemStore store = new PmemStore(PmemCacheConfig.parse(twoPaths(), capacity, conf(8 * MIB)));
    long bound = (capacity + 8 * MIB - 1) / (8 * MIB) + 2;
    assertTrue(store.mappingCount() + " mappings", store.mappingCount() <= bound);
  }

  @Test
  public void writesAcrossAMappingBoundaryReadBackAsTwoSharedSlices() throws Exception {
    PmemStore store = new PmemStore(PmemCacheConfig.parse(twoPaths(), 8 * MIB, conf(2 * MIB)));
    byte[] data = new byte[10_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31 + 7);
    }
    long offset = 2 * MIB - 3000;
    store.write(ByteBuff.wrap(ByteBuffer.wrap(data)), offset);
    ByteBuffer[] slices = store.slices(offset, data.length);
    assertEquals(2, slices.length);
    assertEquals(3000, slices[0].remaining());
    byte[] back = new byte[data.length];
    slices[0].get(back, 0, 3000);
    slices[1].get(back, 3000, data.length - 3000);
    assertArrayEquals(data, back);
    // Zero copy: a later write is visible through the slices taken before it.
    store.write(ByteBuff.wrap(ByteBuffer.wrap(new byte[] {42})), offset);
    assertEquals(42, slices[0].get(0));
  }

  @Test
  public void sameLayoutReopenedAfterCleanTokenSeesTheSameBytes() throws Exception {
    String io = twoPaths();
    PmemCacheConfig cfg = PmemCacheConfig.parse(io, 8 * MIB, conf(2 * MIB));
    PmemStore first = new PmemStore(cfg);
    for (int s = 0; s < 4; s++) {
      first.write(ByteBuff.wrap(ByteBuffer.wrap(new byte[] {(byte) (s + 1)})), s * 2 * MIB + 5);
    }
    first.close();
    byte[] token = first.cleanToken("MD5");
    first.release();
    PmemStore second = new PmemStore(cfg);
    assertNull(second.coldReason());
    second.verify(token, "MD5");
    for (int s = 0; s < 4; s++) {
      assertEquals(s + 1, second.slices(s * 2 * MIB + 5, 1)[0].get(0));
    }
  }

  @Test
  public void aDigestTakenWhileRunningIsNeverAccepted() throws Exception {
    PmemCacheConfig cfg = PmemCacheConfig.parse(twoPaths(), 8 * MIB, conf(2 * MIB));
    PmemStore first = new PmemStore(cfg);
    byte[] running = first.cleanToken("MD5");
    first.release();
    PmemStore second = new PmemStore(cfg);
    try {
      second.verify(running, "MD5");
      fail("a map persisted while the cache ran was accepted");
    } catch (IOException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("not shut down cleanly"));
    }
  }

  @Test
  public void aWriteAfterTheCleanTokenMakesTheNextStartCold() throws Exception {
    PmemCacheConfig cfg = PmemCacheConfig.parse(twoPaths(), 8 * MIB, conf(2 * MIB));
    PmemStore first = new PmemStore(cfg);
    first.close();
    byte[] token = first.cleanToken("MD5");
    first.write(ByteBuff.wrap(ByteBuffer.wrap(new byte[] {1})), 0);
    first.release();
    PmemStore second = new PmemStore(cfg);
    try {
      second.verify(token, "MD5");
      fail("a clean token was accepted although the cache was written after it");
    } catch (IOException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("not shut down cleanly"));
    }
  }

  @Test
  public void changedPathListStartsColdNamingBothLayouts() throws Exception {
    File a = tmp.newFolder("a");
    File b = tmp.newFolder("b");
    Configuration c = conf(2 * MIB);
    PmemStore first = new PmemStore(PmemCacheConfig.parse("pmem:" + a + "/c," + b + "/c",
        8 * MIB, c));
    first.close();
    first.cleanToken("MD5");
    first.release();
    c.set(PmemCacheConfig.STATE_FILE_KEY, a + "/c.state");
    PmemStore second = new PmemStore(PmemCacheConfig.parse("pmem:" + a + "/c", 8 * MIB, c));
    assertTrue(second.coldReason(), second.coldReason().contains("layout changed"));
  }

  @Test
  public void corruptStateFileStartsCold() throws Exception {
    PmemCacheConfig cfg = PmemCacheConfig.parse(twoPaths(), 8 * MIB, conf(2 * MIB));
    PmemStore first = new PmemStore(cfg);
    first.close();
    first.cleanToken("MD5");
    first.release();
    try (RandomAccessFile raf = new RandomAccessFile(cfg.stateFile(), "rw")) {
      raf.seek(13);
      raf.write(raf.read() ^ 0x55);
    }
    PmemStore second = new PmemStore(cfg);
    assertTrue(second.coldReason(), second.coldReason().contains("corrupt"));
  }

  @Test
  public void missingDirectoryFailsNamingThePath() throws Exception {
    String missing = tmp.getRoot() + "/no-such-dir/cache";
    try {
      new PmemStore(PmemCacheConfig.parse("pmem:" + missing, 8 * MIB, conf(2 * MIB)));
      fail();
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(missing));
      assertTrue(e.getMessage(), e.getMessage().contains("does not exist"));
    }
  }

  @Test
  public void pathThatIsADirectoryFailsNamingThePath() throws Exception {
    File dir = tmp.newFolder("d");
    try {
      new PmemStore(PmemCacheConfig.parse("pmem:" + dir, 8 * MIB, conf(2 * MIB)));
      fail();
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(dir.getPath()));
      assertTrue(e.getMessage(), e.getMessage().contains("not a regular file"));
    }
  }

  @Test
  public void duplicatePathsFailNamingThePath() throws Exception {
    File dir = tmp.newFolder("d");
    try {
      PmemCacheConfig.parse("pmem:" + dir + "/c," + dir + "/../d/c", 8 * MIB, conf(2 * MIB));
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("twice"));
      assertTrue(e.getMessage(), e.getMessage().contains(dir + "/../d/c"));
    }
  }

  @Test
  public void relativeOrEmptyPathsFailNamingTheSetting() {
    for (String io : new String[] {"pmem:cache", "pmem:/a/c,", "pmem:"}) {
      try {
        PmemCacheConfig.parse(io, 8 * MIB, conf(2 * MIB));
        fail(io);
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("hbase.bucketcache.ioengine"));
      }
    }
  }

  @Test
  public void capacityBeyondTheFreeSpaceFailsNamingPathAndSetting() throws Exception {
    File dir = tmp.newFolder("d");
    long tooMuch = (dir.getUsableSpace() / MIB + 1024) * MIB;
    try {
      new PmemStore(PmemCacheConfig.parse("pmem:" + dir + "/c", tooMuch, conf(2 * MIB)));
      fail();
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(dir + "/c"));
      assertTrue(e.getMessage(), e.getMessage().contains("hbase.bucketcache.size"));
    }
    assertFalse("no cache file is left behind", new File(dir, "c").exists());
  }

  @Test
  public void invalidSettingsFailNamingTheKey() {
    String[][] cases = {
        {PmemCacheConfig.MAPPING_SIZE_KEY, "3000000"},
        {PmemCacheConfig.MAPPING_SIZE_KEY, String.valueOf(2L << 30)},
        {PmemCacheConfig.MAP_SYNC_KEY, "sometimes"},
        {PmemCacheConfig.STATE_FILE_KEY, "relative/state"}};
    for (String[] kv : cases) {
      Configuration c = new Configuration(false);
      c.set(kv[0], kv[1]);
      try {
        PmemCacheConfig.parse("pmem:/tmp/x", 8 * MIB, c);
        fail(kv[0] + "=" + kv[1]);
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains(kv[0]));
      }
    }
    Configuration c = new Configuration(false);
    c.set(PmemCacheConfig.ENGINE_KEY, "other");
    try {
      PmemCacheConfig.moduleSelected(c);
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(PmemCacheConfig.ENGINE_KEY));
    }
  }

  @Test
  public void requiredMapSyncFailsOnAPageCacheFilesystemNamingTheKey() throws Exception {
    Configuration c = conf(2 * MIB);
    c.set(PmemCacheConfig.MAP_SYNC_KEY, "require");
    File dir = tmp.newFolder("d");
    try {
      new PmemStore(PmemCacheConfig.parse("pmem:" + dir + "/c", 8 * MIB, c));
      fail("MAP_SYNC granted on " + dir + ": is the test directory on a DAX mount?");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(PmemCacheConfig.MAP_SYNC_KEY));
      assertTrue(e.getMessage(), e.getMessage().contains(dir + "/c"));
    }
  }

  @Test
  public void autoMapSyncFallsBackToThePageCache() throws Exception {
    PmemStore store = new PmemStore(PmemCacheConfig.parse(twoPaths(), 8 * MIB, conf(2 * MIB)));
    assertFalse(store.mapSync(0));
    assertFalse(store.mapSync(1));
  }
}
