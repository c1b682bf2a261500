package org.apache.hadoop.hbase.io.hfile.bucket;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.childjvm.ChildJvm;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import java.io.File;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A cache file truncated under a running cache, after its blocks were cached and read (by a
 * process that ignores the lock: the stock jar's engines, an operator's tool), on each JDK the
 * module supports. The blocks whose bytes are gone are evicted at their first read and read as
 * missing (the RegionServer goes to HDFS), every other block is still served correctly, blocks
 * cached after the cut are never served wrong (writes to the cut file are refused), a block
 * below the cut with a hole punched into its body (zeros, no fault) is a miss too, and the JVM
 * keeps running: with reads of the mappings (main before this test, and the opt-in
 * {@code hbase.bucketcache.pmem.read=mapped}) the first touch of a gone page crashed JDK 8
 * (exit 139, SIGBUS in {@code StubRoutines::jlong_disjoint_arraycopy}) and threw an asynchronous
 * InternalError on JDK 17 (exit 1, measured on this test before the change).
 *
 * <p>The cache process reads every block 40 times before the truncation, so the read path is
 * compiled when it meets the gone pages (the interpreter reports such a fault at once; compiled
 * code is where it crashes or is delivered late).
 */
public class PmemTruncatedUnderReadsTest {
  private static final int COUNT = 300;
  private static final int BLOCK = 8 * 1024;
  private static final long CAPACITY = 16L << 20;
  private static final Pattern ENTRY = Pattern.compile("^ENTRY (\\d+) (\\d+) (\\d+) (\\d+)$");

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void truncatedUnderCompiledReads_thisJdk() throws Exception {
    truncateUnderReads(Jdk.current(), true);
  }

  /**
   * Without --add-exports java.base/sun.nio.ch the channels cannot be made uninterruptible on
   * JDK 9+, and reads run on the checker threads: as safe, slower.
   */
  @Test
  public void truncatedUnderCompiledReads_thisJdkWithoutAddExports() throws Exception {
    truncateUnderReads(Jdk.current(), false);
  }

  @Test
  public void truncatedUnderCompiledReads_jdk8() throws Exception {
    truncateUnderReads(Jdks.jdk8(), true);
  }

  @Test
  public void truncatedUnderCompiledReads_jdk25() throws Exception {
    truncateUnderReads(Jdks.jdk25(), true);
  }

  private static byte[] readAll(java.io.InputStream in) throws java.io.IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    byte[] b = new byte[4096];
    for (int n; (n = in.read(b)) >= 0;) {
      out.write(b, 0, n);
    }
    return out.toByteArray();
  }

  private void truncateUnderReads(Jdk jdk, boolean opens) throws Exception {
    // The parent's flags are what a child can inherit: a JDK 8 parent has none to give.
    boolean exported = opens && java.lang.management.ManagementFactory.getRuntimeMXBean()
        .getInputArguments().stream()
        .anyMatch(a -> a.matches("--add-(opens|exports)[= ]java.base/sun.nio.ch=.*"));
    File cacheFile = new File(tmp.newFolder("pmem0"), "cache");
    try (ChildJvm child = CacheProcess.child(opens, tmp.getRoot(), "gone", "pmem:" + cacheFile, "-",
        String.valueOf(CAPACITY), "7", String.valueOf(COUNT), String.valueOf(BLOCK),
        "hbase.bucketcache.pmem.mapping.size=" + (4L << 20)).jdk(jdk).start()) {
      long[] position = new long[COUNT];
      long[] length = new long[COUNT];
      for (int i = 0; i < COUNT; i++) {
        Matcher m = child.await(ENTRY, 300, SECONDS);
        int n = Integer.parseInt(m.group(1));
        assertEquals("file of block " + n, 0, Long.parseLong(m.group(2)));
        position[n] = Long.parseLong(m.group(3));
        length[n] = Long.parseLong(m.group(4));
      }
      child.awaitLineStartingWith("CACHED", 60, SECONDS);
      // Which read path the cache took: on the caller's thread (uninterruptible channels: JDK 8
      // always, JDK 9+ with sun.nio.ch exported) or on the checker threads.
      boolean fallback = child.logText().contains("cannot be made immune to interrupts");
      if (jdk.isJava8() || exported) {
        assertTrue(jdk + ": reads fell back to the checker threads\n" + child.logTail(40),
            !fallback);
      } else {
        assertTrue(jdk + ": no fallback without --add-exports\n" + child.logTail(40), fallback);
      }
      // Cut at a page boundary in the middle of the blocks: those ending past it are gone.
      long[] sorted = position.clone();
      java.util.Arrays.sort(sorted);
      long cut = sorted[COUNT / 2] / 4096 * 4096;
      List<Integer> gone = new ArrayList<>();
      for (int i = 0; i < COUNT; i++) {
        if (position[i] + length[i] > cut) {
          gone.add(i);
        }
      }
      assertTrue("gone: " + gone.size(), gone.size() >= COUNT / 3 && gone.size() < COUNT);
      // Below the cut, a hole punched into the body of one block (its header page kept): the
      // page reads as zeros, through the mapping and the file alike, so only the block's
      // checksum tells; that block must be a miss too, never served with zeros in it.
      int holed = -1;
      long hole = -1;
      for (int i = 0; i < COUNT && holed < 0; i++) {
        long page = (position[i] + 32 + 4095) / 4096 * 4096;
        if (!gone.contains(i) && page + 4096 <= position[i] + length[i]) {
          holed = i;
          hole = page;
        }
      }
      assertTrue("no block below the cut spans a whole body page", holed >= 0);
      gone.add(holed);
      Process punch = new ProcessBuilder("fallocate", "--punch-hole", "--offset",
          String.valueOf(hole), "--length", "4096", cacheFile.getPath()).redirectErrorStream(true)
          .start();
      String punchOut = new String(readAll(punch.getInputStream()), "UTF-8");
      assertEquals("fallocate --punch-hole: " + punchOut, 0, punch.waitFor());
      try (RandomAccessFile f = new RandomAccessFile(cacheFile, "rw")) {
        f.getChannel().truncate(cut);
      }
      child.send("go");
      for (int r = 0; r < 3; r++) {
        String line = child.awaitLineStartingWith("ROUND " + r + " ", 120, SECONDS);
        String outcomes = line.substring(("ROUND " + r + " ").length());
        StringBuilder expected = new StringBuilder();
        for (int i = 0; i < COUNT; i++) {
          expected.append(gone.contains(i) ? '1' : '0');
        }
        assertEquals(jdk + ": round " + r + ", per block 0 correct, 1 missing, 2 wrong; blocks "
            + gone + " are past the cut", expected.toString(), outcomes);
      }
      String inMap = child.awaitLineStartingWith("INMAP ", 60, SECONDS).substring(6);
      StringBuilder expectedInMap = new StringBuilder();
      for (int i = 0; i < COUNT; i++) {
        expectedInMap.append(gone.contains(i) ? '0' : '1');
      }
      assertEquals(jdk + ": per block 1 while in the backing map", expectedInMap.toString(),
          inMap);
      // Blocks cached after the cut: never a wrong byte (writes to the cut file are refused).
      String fresh = child.awaitLineStartingWith("NEW ", 120, SECONDS);
      assertTrue(jdk + ": a block cached after the cut read wrong: " + fresh,
          fresh.indexOf('2') < 0);
      child.awaitLineStartingWith("DONE", 120, SECONDS);
      int exit = child.waitFor(60, SECONDS);
      assertEquals(jdk + " exit\n" + (exit == 0 ? "" : child.logTail(40)), 0, exit);
    }
  }
}
