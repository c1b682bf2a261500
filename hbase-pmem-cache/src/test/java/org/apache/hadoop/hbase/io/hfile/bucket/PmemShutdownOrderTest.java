package org.apache.hadoop.hbase.io.hfile.bucket;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * BucketCache's final checkpoint of its backing map at shutdown happens while the engine still
 * holds its lock and its files still say "running": the clean-stop record and the lock release
 * come after the map they vouch for, so a second RegionServer cannot take the cache while the
 * first still writes its map, and a crash during that write leaves no clean-stop record over a
 * stale map.
 */
public class PmemShutdownOrderTest {
  private static final int BLOCK = 8 * 1024;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private File p0;
  private File p1;
  private String persistence;
  private Configuration conf;

  @Before
  public void setUp() throws Exception {
    p0 = new File(tmp.newFolder("pmem0"), "cache");
    p1 = new File(tmp.newFolder("pmem1"), "cache");
    persistence = tmp.getRoot() + "/bucket.persistence";
    conf = HBaseConfiguration.create();
    conf.set("hbase.bucketcache.pmem.mapping.size", String.valueOf(4L << 20));
    conf.set("hbase.bucketcache.pmem.lock.wait.ms", "0");
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    conf.setLong("hbase.bucketcache.persist.intervalinmillis", 3_600_000);
  }

  /** What a cache file looked like while BucketCache wrote its final map. */
  private static final class Seen {
    final boolean lockFree;
    final String holder;

    Seen(boolean lockFree, String holder) {
      this.lockFree = lockFree;
      this.holder = holder;
    }
  }

  /** The file's lock is free for this JVM (OverlappingFileLockException: this JVM holds it). */
  private static boolean lockFree(File f) throws IOException {
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ,
      StandardOpenOption.WRITE)) {
      FileLock lock = ch.tryLock();
      if (lock == null) {
        return false;
      }
      lock.release();
      return true;
    } catch (OverlappingFileLockException e) {
      return false;
    }
  }

  /** The printable text of the holder record (4 KiB into the file). */
  private static String holder(File f) throws IOException {
    byte[] b = new byte[4096];
    try (RandomAccessFile raf = new RandomAccessFile(f, "r")) {
      raf.seek(4096);
      raf.readFully(b);
    }
    return new String(b, StandardCharsets.ISO_8859_1).replaceAll("[^ -~]", "");
  }

  @Test
  public void shutdown_persistsTheMapBeforeRecordingACleanStopAndReleasingTheLock()
    throws Exception {
    List<Seen> seen = new ArrayList<>();
    BucketCache cache = new BucketCache("pmem:" + p0 + "," + p1, 32L << 20, BLOCK,
      new int[] { 9 * 1024, 17 * 1024 }, 3, 64, persistence, 60_000, conf) {
      @Override
      void persistToFile() throws IOException {
        for (File f : new File[] { p0, p1 }) {
          seen.add(new Seen(lockFree(f), holder(f)));
        }
        super.persistToFile();
      }
    };
    // Read in the background by default (HBASE-28804): wait until the map is in.
    assertTrue("the cache was not enabled within 60 s",
        cache.waitForCacheInitialization(60_000));
    TestBlocks.make(13, 50, BLOCK).cacheAll(cache);
    cache.shutdown();
    assertEquals("final persists", 2, seen.size());
    for (Seen s : seen) {
      assertFalse("the lock was released before the final map was written", s.lockFree);
      assertTrue("a clean stop was recorded before the final map was written: " + s.holder,
        s.holder.contains("running"));
      assertFalse(s.holder, s.holder.contains("stopped cleanly"));
    }
    assertTrue(new File(persistence).exists());
    assertTrue(holder(p0), holder(p0).contains("stopped cleanly"));
    assertTrue(lockFree(p0));
    assertTrue(lockFree(p1));
  }

  @Test
  public void shutdown_recordsNoCleanStopWhenTheFinalPersistFails() throws Exception {
    BucketCache cache = new BucketCache("pmem:" + p0 + "," + p1, 32L << 20, BLOCK,
      new int[] { 9 * 1024, 17 * 1024 }, 3, 64, persistence, 60_000, conf) {
      @Override
      void persistToFile() throws IOException {
        throw new IOException("No space left on device (injected)");
      }
    };
    // Read in the background by default (HBASE-28804): wait until the map is in.
    assertTrue("the cache was not enabled within 60 s",
        cache.waitForCacheInitialization(60_000));
    TestBlocks.make(14, 50, BLOCK).cacheAll(cache);
    cache.shutdown();
    // The files stay "running", so the next start verifies every block; the engine still
    // closes its files and releases its locks.
    for (File f : new File[] { p0, p1 }) {
      assertTrue(holder(f), holder(f).contains("running"));
      assertFalse("a clean stop was recorded though the final map was not written: " + holder(f),
        holder(f).contains("stopped cleanly"));
      assertTrue(lockFree(f));
    }
  }
}
