package org.apache.hadoop.hbase.io.hfile.bucket;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.childjvm.ChildJvm;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import java.io.File;
import java.io.RandomAccessFile;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A cache file cut and grown back, again and again, under a cache that is writing (by a process
 * that ignores the lock: the stock jar's engines, an operator's tool; growing it back leaves
 * holes, as a punched hole does), on each JDK the module supports. With the default positional
 * writes ({@code hbase.bucketcache.pmem.write=copy}) the JVM keeps running, no read of the churn
 * is ever wrong, and once the cuts stop every new block is cached and served. With writes into
 * the mappings ({@code write=mapped}, the default before this test) a store into a page the cut
 * took away killed the writer thread with an asynchronous InternalError on JDK 17 and crashed
 * JDK 8 with SIGBUS (measured on this test).
 */
public class PmemCutUnderWritesTest {
  private static final int COUNT = 200;
  private static final int BLOCK = 8 * 1024;
  private static final long CAPACITY = 16L << 20;
  private static final int CUTS = 300;
  private static final Pattern BASE = Pattern.compile("^BASE (\\d+)$");

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void cutUnderCompiledWrites_thisJdk() throws Exception {
    cutUnderWrites(Jdk.current(), true);
  }

  /** Writes on the checker threads, as on JDK 9+ without sun.nio.ch exported. */
  @Test
  public void cutUnderCompiledWrites_thisJdkWithoutAddExports() throws Exception {
    cutUnderWrites(Jdk.current(), false);
  }

  @Test
  public void cutUnderCompiledWrites_jdk8() throws Exception {
    cutUnderWrites(Jdks.jdk8(), true);
  }

  private void cutUnderWrites(Jdk jdk, boolean opens) throws Exception {
    File cacheFile = new File(tmp.newFolder("pmem0"), "cache");
    try (ChildJvm child = CacheProcess.child(opens, tmp.getRoot(), "cutwrites",
        "pmem:" + cacheFile, "-", String.valueOf(CAPACITY), "11", String.valueOf(COUNT),
        String.valueOf(BLOCK), "hbase.bucketcache.pmem.mapping.size=" + (4L << 20),
        "hbase.bucketcache.pmem.write=" + System.getProperty("pmem.write", "copy")).jdk(jdk)
        .start()) {
      Matcher m = child.await(BASE, 300, SECONDS);
      long base = Long.parseLong(m.group(1));
      child.awaitLineStartingWith("CHURNING", 300, SECONDS);
      long full = cacheFile.length();
      // Cut just past the first page of the cache's bytes: the pages of nearly every block are
      // gone until the file is grown back (as holes).
      long cut = base + 4096;
      // At least CUTS cuts, and on until the churn has met one (a read that missed): the cuts
      // overlapped the writes and reads, whatever the box's load did to the two processes.
      long deadline = System.nanoTime() + SECONDS.toNanos(120);
      try (RandomAccessFile f = new RandomAccessFile(cacheFile, "rw")) {
        for (int i = 0; i < CUTS || !child.logText().contains("\nMISSED"); i++) {
          assertTrue(jdk + ": no read of the churn missed in 120 s of cuts\n" + child.logTail(40),
              System.nanoTime() < deadline);
          f.getChannel().truncate(cut);
          LockSupport.parkNanos(1_000_000);
          f.setLength(full);
          LockSupport.parkNanos(1_000_000);
        }
      }
      child.send("stop");
      String fresh = child.awaitLineStartingWith("NEW ", 120, SECONDS);
      StringBuilder all = new StringBuilder("NEW ");
      for (int i = 0; i < COUNT; i++) {
        all.append('0');
      }
      assertEquals(jdk + ": blocks cached after the cuts, per block 0 correct, 1 missing,"
          + " 2 wrong", all.toString(), fresh);
      assertEquals(jdk + ": wrong reads during the cuts", "WRONG 0",
          child.awaitLineStartingWith("WRONG ", 60, SECONDS));
      child.awaitLineStartingWith("DONE", 60, SECONDS);
      int exit = child.waitFor(60, SECONDS);
      assertEquals(jdk + " exit\n" + (exit == 0 ? "" : child.logTail(40)), 0, exit);
    }
  }
}
