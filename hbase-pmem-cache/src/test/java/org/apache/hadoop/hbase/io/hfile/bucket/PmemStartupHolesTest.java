package org.apache.hadoop.hbase.io.hfile.bucket;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.forkset.hbase.pmem.ProcSelf;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The start-up and durability holes of a pmem: cache, each walked through a real BucketCache
 * over the module engine: files that changed while the server was down, a persistence file on a
 * cache path, a start that fails on MAP_SYNC, the files and mappings a stopped cache leaves, a
 * map that cannot be used. Only configuration keys are used, so the same tests run against any
 * version of the engine.
 */
public class PmemStartupHolesTest {
  private static final long CAPACITY = 32L << 20;
  private static final int BLOCK = 8 * 1024;
  private static final int BLOCKS = 1000;
  private static final int[] BUCKET_SIZES = {9 * 1024, 17 * 1024};

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private File p0;
  private File p1;
  private String ioEngine;
  private String persistence;
  private Configuration conf;
  private long capacity = CAPACITY;

  @Before
  public void setUp() throws Exception {
    p0 = new File(tmp.newFolder("pmem0"), "cache");
    p1 = new File(tmp.newFolder("pmem1"), "cache");
    ioEngine = "pmem:" + p0 + "," + p1;
    persistence = tmp.getRoot() + "/bucket.persistence";
    conf = HBaseConfiguration.create();
    conf.set("hbase.bucketcache.pmem.mapping.size", String.valueOf(4L << 20));
    conf.set("hbase.bucketcache.pmem.lock.wait.ms", "0");
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    conf.setLong("hbase.bucketcache.persist.intervalinmillis", 3_600_000);
  }

  private BucketCache open() throws IOException {
    BucketCache cache = new BucketCache(ioEngine, capacity, BLOCK, BUCKET_SIZES, 3, 64, persistence, 60_000,
        conf);
    // Read in the background by default (HBASE-28804): wait until the map is in.
    assertTrue("the cache was not enabled within 60 s",
        cache.waitForCacheInitialization(60_000));
    return cache;
  }

  /** Caches the blocks and stops the cache cleanly. */
  private TestBlocks warm(long seed) throws Exception {
    TestBlocks blocks = TestBlocks.make(seed, BLOCKS, BLOCK);
    BucketCache cache = open();
    blocks.cacheAll(cache);
    cache.shutdown();
    return blocks;
  }

  private TestBlocks.Tally reopenAndCheck(TestBlocks blocks) throws Exception {
    BucketCache cache = open();
    try {
      return blocks.check(cache);
    } finally {
      cache.shutdown();
    }
  }

  @Test
  public void cleanRestart_servesEveryBlock() throws Exception {
    TestBlocks blocks = warm(1);
    TestBlocks.Tally t = reopenAndCheck(blocks);
    assertEquals(t.toString(), BLOCKS, t.correct);
  }

  @Test
  public void swappedCacheFiles_serveNoBlock() throws Exception {
    TestBlocks blocks = warm(2);
    File t = new File(tmp.getRoot(), "swap");
    Files.move(p0.toPath(), t.toPath());
    Files.move(p1.toPath(), p0.toPath());
    Files.move(t.toPath(), p1.toPath());
    BucketCache cache = open();
    try {
      assertEquals("entries kept over swapped files", 0, cache.backingMap.size());
      TestBlocks.Tally tally = blocks.check(cache);
      assertEquals(tally.toString(), 0, tally.wrong);
      assertEquals(tally.toString(), 0, tally.correct);
    } finally {
      cache.shutdown();
    }
  }

  @Test
  public void zeroedCacheFile_startsCold() throws Exception {
    warm(3);
    long length = p1.length();
    try (RandomAccessFile raf = new RandomAccessFile(p1, "rw")) {
      raf.setLength(0);
      raf.setLength(length);
    }
    BucketCache cache = open();
    try {
      assertEquals("entries kept over a zeroed file", 0, cache.backingMap.size());
    } finally {
      cache.shutdown();
    }
  }

  @Test
  public void recreatedCacheFile_startsCold() throws Exception {
    warm(4);
    assertTrue(p1.delete());
    BucketCache cache = open();
    try {
      assertEquals("entries kept over a recreated file", 0, cache.backingMap.size());
    } finally {
      cache.shutdown();
    }
  }

  @Test
  public void cacheFileOfAnotherCache_servesNoWrongByte() throws Exception {
    TestBlocks mine = warm(5);
    // Another cache with the same layout in other directories, then its second file over ours.
    String myEngine = ioEngine;
    String myPersistence = persistence;
    File o0 = new File(tmp.newFolder("other0"), "cache");
    File o1 = new File(tmp.newFolder("other1"), "cache");
    ioEngine = "pmem:" + o0 + "," + o1;
    persistence = tmp.getRoot() + "/other.persistence";
    TestBlocks theirs = warm(6);
    Files.copy(o1.toPath(), p1.toPath(), StandardCopyOption.REPLACE_EXISTING);
    ioEngine = myEngine;
    persistence = myPersistence;
    TestBlocks.Tally t = reopenAndCheck(mine);
    assertEquals(t.toString(), 0, t.wrong);
    assertEquals(t.toString(), 0, t.correct);
    assertTrue(theirs.keys.length > 0);
  }

  @Test
  public void persistencePathOnACachePath_failsAtStartNamingIt() throws Exception {
    persistence = p1.getPath();
    try {
      open().shutdown();
      fail("a persistence path equal to a cache path was accepted");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(p1.getPath()));
      assertTrue(e.getMessage(), e.getMessage().contains("hbase.bucketcache.persistent.path"));
    }
  }

  @Test
  public void persistencePathThatIsAHardLinkOfACacheFile_failsAtStart() throws Exception {
    warm(7);
    File link = new File(tmp.getRoot(), "link");
    Files.createLink(link.toPath(), p0.toPath());
    persistence = link.getPath();
    try {
      open().shutdown();
      fail("a persistence path that is a hard link of a cache file was accepted");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(link.getPath()));
    }
  }

  @Test
  public void shutdown_closesTheFilesAndLetsTheMappingsGo() throws Exception {
    BucketCache cache = open();
    TestBlocks.make(9, 10, BLOCK).cacheAll(cache);
    assertTrue(ProcSelf.mappings(p0) > 0);
    cache.shutdown();
    // The RegionServer keeps its BucketCache object; the engine must not pin the memory.
    assertEquals("mappings of " + p0 + " left after shutdown", 0,
        ProcSelf.mappingsAfterGc(p0, 10_000));
    assertEquals(0, ProcSelf.mappingsAfterGc(p1, 1_000));
    try (FileChannel ch = FileChannel.open(p1.toPath(), StandardOpenOption.WRITE)) {
      FileLock lock = ch.tryLock();
      assertTrue("the stopped cache still holds its file", lock != null);
      lock.release();
    }
    assertTrue(cache.ioEngine.toString(), cache.ioEngine != null);
  }

  @Test
  public void mapThatCannotBeUsed_isMovedAsideUnreadAndLeavesNoKey() throws Exception {
    warm(10);
    byte[] map = Files.readAllBytes(new File(persistence).toPath());
    capacity = CAPACITY + (4L << 20);
    BucketCache cache = open();
    try {
      assertEquals(0, cache.backingMap.size());
      assertEquals(0, cache.blocksByHFile.size());
      File aside = new File(persistence + ".discarded");
      assertTrue("the map was not moved aside to " + aside, aside.exists());
      assertArrayEquals(map, Files.readAllBytes(aside.toPath()));
    } finally {
      cache.shutdown();
    }
    assertFalse(new File(tmp.getRoot(), "unused").exists());
  }

  /** Name, length, modification time and content hash of every file under the test root. */
  private String snapshot() throws IOException {
    StringBuilder sb = new StringBuilder();
    try (java.util.stream.Stream<java.nio.file.Path> all = Files.walk(tmp.getRoot().toPath())) {
      for (Object o : all.sorted().toArray()) {
        File f = ((java.nio.file.Path) o).toFile();
        sb.append(f);
        if (f.isFile()) {
          // A directory's time may change (the MAP_SYNC probe's temporary file); a file's not.
          sb.append(' ').append(f.lastModified()).append(' ').append(f.length()).append(' ')
            .append(java.util.Arrays.hashCode(Files.readAllBytes(f.toPath())));
        }
        sb.append('\n');
      }
    }
    return sb.toString();
  }

  private void assertRequiredMapSyncRefused() {
    conf.set("hbase.bucketcache.pmem.map.sync", "require");
    try {
      open().shutdown();
      fail("MAP_SYNC granted here: is the test directory on a DAX mount?");
    } catch (IOException expected) {
      assertTrue(expected.getMessage(),
        expected.getMessage().contains("hbase.bucketcache.pmem.map.sync"));
      assertTrue(expected.getMessage(), expected.getMessage().contains(p0.getPath()));
    }
  }

  @Test
  public void requiredMapSyncOnAPageCacheFilesystem_leavesAValidCacheAsItWas() throws Exception {
    TestBlocks blocks = warm(11);
    String before = snapshot();
    Thread.sleep(1_100); // so that a write or an fallocate shows in the modification times
    assertRequiredMapSyncRefused();
    assertEquals("a start refused for MAP_SYNC changed the cache directories", before,
      snapshot());
    conf.set("hbase.bucketcache.pmem.map.sync", "auto");
    TestBlocks.Tally t = reopenAndCheck(blocks);
    assertEquals(t.toString(), BLOCKS, t.correct);
  }

  @Test
  public void requiredMapSyncOnAPageCacheFilesystem_createsNoFile() throws Exception {
    String before = snapshot();
    assertRequiredMapSyncRefused();
    assertFalse(p0.exists());
    assertFalse(p1.exists());
    assertEquals(0, p0.getParentFile().list().length);
    assertEquals(0, p1.getParentFile().list().length);
    assertFalse(new File(persistence).exists());
    // Directory times may change (the probe's temporary file); names and contents may not.
    assertEquals(before.replaceAll(" \\d+\n", "\n"), snapshot().replaceAll(" \\d+\n", "\n"));
  }

  @Test
  public void shutdown_closesTheFilesAndABlockAReaderHoldsStaysReadable() throws Exception {
    BucketCache cache = open();
    TestBlocks blocks = TestBlocks.make(12, 10, BLOCK);
    blocks.cacheAll(cache);
    Cacheable held = cache.getBlock(blocks.keys[3], false, false, false);
    assertTrue("block 3 not served", held != null);
    cache.shutdown();
    // A scanner keeps its current block across RPCs, and a RegionServer shuts its block cache
    // down before it closes its regions: the held block must still read right (an explicit
    // unmap at shutdown crashed the JVM here).
    try {
      assertTrue("block 3 changed after shutdown", blocks.sameAs(held, 3));
    } finally {
      held.release();
    }
    assertEquals("descriptors of " + p0 + " left after shutdown", 0, ProcSelf.descriptors(p0));
    assertEquals("descriptors of " + p1 + " left after shutdown", 0, ProcSelf.descriptors(p1));
    assertTrue(cache.ioEngine.toString(), cache.ioEngine != null);
  }
}
