package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.childjvm.ChildJvm;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Paths;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;

/**
 * A JVM that runs a BucketCache over the pmem engine, as a RegionServer would, for tests that
 * kill it, run a second one beside it or fill its filesystem. Talks through stdout lines; started
 * by {@link #child} through the child-jvm launcher, which reaps it whatever ends the test.
 *
 * <pre>
 * CacheProcess warm   ioengine persistence capacity seed count blockSize tailSeed tailCount [k=v]...
 *   caches count blocks, prints ENTRY i offset length for each and CACHED, then caches tailCount
 *   more blocks slowly and prints CHECKPOINT n whenever the persistence file is replaced; runs
 *   until killed.
 * CacheProcess churn  ioengine persistence capacity seed count blockSize churnSeed churnCount [k=v]...
 *   caches count blocks and prints CACHED, then prints CHURNING and, until killed, caches the
 *   churnCount blocks of churnSeed and evicts them again one every 0.5 ms (as closed files and
 *   freed space evict), printing CHECKPOINT n whenever the persistence file is replaced, and
 *   CHECKPOINT n evicting when that happens after 100 ms of evictions.
 * CacheProcess open   ioengine persistence capacity [k=v]...
 *   prints STARTED (then, with -Dcacheprocess.shutdown=true, stops the cache and prints
 *   STOPPED), or FAILED message and exits 1; then exits 0.
 * CacheProcess fill   ioengine persistence capacity goFile [k=v]...
 *   prints OPEN, waits for goFile, writes every byte of the cache, syncs, prints WROTE.
 * CacheProcess gone   ioengine persistence capacity seed count blockSize [k=v]...
 *   caches count blocks, reads every block 40 times (so the read path, BucketCache's and the
 *   caller's, is compiled), prints ENTRY i file position length for each and CACHED, waits for a
 *   line from the parent (which punches a hole into one block and truncates the file meanwhile), then reads every block three
 *   times, printing ROUND r and one outcome digit per block (0 correct, 1 missing, 2 wrong),
 *   then INMAP and one digit per block (1 while its entry is in the backing map), reads the
 *   blocks 40 more times, caches count other blocks and prints NEW and their outcomes, then
 *   DONE. Anything thrown (an InternalError from a page that is
 *   gone) ends it with a stack trace and exit code 1.
 * CacheProcess cutwrites ioengine persistence capacity seed count blockSize [k=v]...
 *   prints BASE and the file position of the cache's first byte, then, on a thread of its own,
 *   caches batches of count blocks (seeds seed, seed + 1, ...), reads and evicts each batch; after
 *   40 batches (the write path compiled) prints CHURNING, and MISSED at the first read of the churn
 *   that misses; keeps going until a line from the parent (which cuts the file and grows it back
 *   meanwhile), then caches count more blocks and
 *   prints NEW and their outcomes, WRONG and the number of wrong reads of the churn, then DONE.
 *   A Throwable in any thread (an InternalError from a store into a page that is gone) prints
 *   FAULT and halts the JVM with exit code 1.
 * </pre>
 */
public final class CacheProcess {
  private CacheProcess() {}

  static final int[] BUCKET_SIZES = {9 * 1024, 17 * 1024, 33 * 1024, 65 * 1024};
  private static final AtomicInteger CHILDREN = new AtomicInteger();

  /**
   * A CacheProcess JVM like this one (same JDK, class path and module opens, 512 MB heap) running
   * {@code args}; its working directory is {@code dir}, its log goes to target/children/.
   */
  static ChildJvm.Builder child(File dir, String... args) {
    return child(true, dir, args);
  }

  /**
   * {@link #child}; {@code opens} false starts it without this JVM's --add-opens/--add-exports
   * flags (as a RegionServer started without them on JDK 9+).
   */
  static ChildJvm.Builder child(boolean opens, File dir, String... args) {
    String name = "cacheprocess-" + args[0] + "-" + CHILDREN.incrementAndGet();
    ChildJvm.Builder b = ChildJvm.builder(name, CacheProcess.class.getName())
        .classPathOfThisJvm();
    if (opens) {
      b.inheritOpens();
    }
    return b.jvmArgs("-Xmx512m").args(args).dir(dir.toPath())
        .log(Paths.get("target", "children",
            ManagementFactory.getRuntimeMXBean().getName().split("@")[0] + "-" + name + ".log"));
  }

  /** {@link #child}, started. */
  static ChildJvm start(File dir, String... args) throws java.io.IOException {
    return child(dir, args).start();
  }

  private static Configuration conf(String[] args, int firstKv) {
    Configuration conf = HBaseConfiguration.create();
    conf.setLong(BucketCache.QUEUE_ADDITION_WAIT_TIME, 10_000);
    for (int i = firstKv; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      conf.set(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    return conf;
  }

  private static BucketCache open(String io, String persistence, long capacity, int blockSize,
      Configuration conf) throws Exception {
    BucketCache cache = new BucketCache(io, capacity, blockSize, BUCKET_SIZES, 3, 64,
        persistence.equals("-") ? null : persistence, 60_000, conf);
    // Read in the background by default (HBASE-28804): wait until the map is in.
    if (!cache.waitForCacheInitialization(60_000)) {
      // A cache still reading (or reset, or disabled) would be used half-loaded: fail the child.
      throw new IllegalStateException("the bucket cache was not enabled within 60 s");
    }
    return cache;
  }

  public static void main(String[] args) throws Exception {
    System.out.println("PID " + ManagementFactory.getRuntimeMXBean().getName());
    String mode = args[0];
    String io = args[1];
    String persistence = args[2];
    long capacity = Long.parseLong(args[3]);
    if (mode.equals("open")) {
      try {
        BucketCache cache = open(io, persistence, capacity, 8192, conf(args, 4));
        System.out.println("STARTED");
        System.out.flush();
        if (Boolean.getBoolean("cacheprocess.shutdown")) {
          cache.shutdown();
          System.out.println("STOPPED");
        }
      } catch (Exception e) {
        System.out.println("FAILED " + e.getMessage());
        System.out.flush();
        System.exit(1);
      }
      System.out.flush();
      System.exit(0);
    } else if (mode.equals("fill")) {
      File go = new File(args[4]);
      BucketCache cache = open(io, persistence, capacity, 8192, conf(args, 5));
      System.out.println("OPEN");
      while (!go.exists()) {
        Thread.sleep(10);
      }
      ByteBuffer chunk = ByteBuffer.allocate(1 << 20);
      try {
        for (long off = 0; off < capacity; off += chunk.capacity()) {
          ByteBuffer b = chunk.duplicate();
          b.limit((int) Math.min(b.capacity(), capacity - off));
          cache.ioEngine.write(b, off);
        }
        cache.ioEngine.sync();
      } catch (Throwable t) {
        // A SIGBUS inside a copy into the mapping surfaces as an InternalError.
        System.out.println("FAULT " + t);
        System.out.flush();
        System.exit(3);
      }
      System.out.println("WROTE");
      System.out.flush();
      System.exit(0);
    } else if (mode.equals("gone")) {
      long seed = Long.parseLong(args[4]);
      int count = Integer.parseInt(args[5]);
      int blockSize = Integer.parseInt(args[6]);
      BucketCache cache = open(io, persistence, capacity, blockSize, conf(args, 7));
      TestBlocks blocks = TestBlocks.make(seed, count, blockSize);
      blocks.cacheAll(cache);
      int[] outcomes = new int[3];
      for (int r = 0; r < 40; r++) {
        for (int i = 0; i < count; i++) {
          outcomes[blocks.read(cache, i)]++;
        }
      }
      if (outcomes[0] != 40 * count) {
        throw new AssertionError("before the truncation: " + java.util.Arrays.toString(outcomes));
      }
      dev.forkset.hbase.pmem.PmemStore store = ((PmemIOEngine) cache.ioEngine).store();
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < count; i++) {
        BucketEntry e = cache.backingMap.get(blocks.keys[i]);
        long[] at = dev.forkset.hbase.pmem.PmemTestAccess.filePosition(store, e.offset());
        sb.append("ENTRY ").append(i).append(' ').append(at[0]).append(' ').append(at[1])
          .append(' ').append(e.getLength()).append('\n');
      }
      System.out.print(sb);
      System.out.println("CACHED");
      System.out.flush();
      if (dev.forkset.childjvm.ChildMain.nextLine(120, java.util.concurrent.TimeUnit.SECONDS)
          == null) {
        throw new AssertionError("no line from the parent");
      }
      try {
        readAfterTheCut(cache, blocks, count, sb);
      } catch (Throwable t) {
        // Without copies read from the files: an InternalError from a page that is gone.
        System.out.println("FAULT " + t);
        t.printStackTrace(System.out);
        System.out.flush();
        System.exit(1);
      }
      System.out.println("DONE");
      System.out.flush();
      System.exit(0);
    } else if (mode.equals("warm")) {
      long seed = Long.parseLong(args[4]);
      int count = Integer.parseInt(args[5]);
      int blockSize = Integer.parseInt(args[6]);
      long tailSeed = Long.parseLong(args[7]);
      int tailCount = Integer.parseInt(args[8]);
      BucketCache cache = open(io, persistence, capacity, blockSize, conf(args, 9));
      TestBlocks blocks = TestBlocks.make(seed, count, blockSize);
      blocks.cacheAll(cache);
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < count; i++) {
        BucketEntry e = cache.backingMap.get(blocks.keys[i]);
        sb.append("ENTRY ").append(i).append(' ').append(e.offset()).append(' ')
            .append(e.getLength()).append('\n');
      }
      System.out.print(sb);
      System.out.println("CACHED");
      System.out.flush();
      watchCheckpoints(new File(persistence));
      TestBlocks tail = TestBlocks.make(tailSeed, tailCount, blockSize);
      for (int i = 0; i < tailCount; i++) {
        tail.cache(cache, i, i + 1);
        Thread.sleep(2);
      }
      System.out.println("TAIL");
      System.out.flush();
      Thread.sleep(Long.MAX_VALUE);
    } else if (mode.equals("churn")) {
      long seed = Long.parseLong(args[4]);
      int count = Integer.parseInt(args[5]);
      int blockSize = Integer.parseInt(args[6]);
      long churnSeed = Long.parseLong(args[7]);
      int churnCount = Integer.parseInt(args[8]);
      BucketCache cache = open(io, persistence, capacity, blockSize, conf(args, 9));
      TestBlocks.make(seed, count, blockSize).cacheAll(cache);
      System.out.println("CACHED");
      System.out.flush();
      TestBlocks churn = TestBlocks.make(churnSeed, churnCount, blockSize);
      watchCheckpoints(new File(persistence));
      System.out.println("CHURNING");
      System.out.flush();
      while (true) {
        churn.cacheAll(cache);
        evictingSince = System.nanoTime();
        for (int i = 0; i < churnCount; i++) {
          cache.evictBlock(churn.keys[i]);
          java.util.concurrent.locks.LockSupport.parkNanos(500_000);
        }
        evictingSince = 0;
      }
    } else if (mode.equals("cutwrites")) {
      cutWrites(args, io, persistence, capacity);
    } else {
      throw new IllegalArgumentException(mode);
    }
  }

  /** Mode cutwrites. */
  private static void cutWrites(String[] args, String io, String persistence, long capacity)
      throws Exception {
    long seed = Long.parseLong(args[4]);
    int count = Integer.parseInt(args[5]);
    int blockSize = Integer.parseInt(args[6]);
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
      System.out.println("FAULT in " + t.getName() + ": " + e);
      e.printStackTrace(System.out);
      System.out.flush();
      Runtime.getRuntime().halt(1);
    });
    BucketCache cache = open(io, persistence, capacity, blockSize, conf(args, 7));
    dev.forkset.hbase.pmem.PmemStore store = ((PmemIOEngine) cache.ioEngine).store();
    System.out.println("BASE " + dev.forkset.hbase.pmem.PmemTestAccess.filePosition(store, 0)[1]);
    System.out.flush();
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.atomic.AtomicLong wrong = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicLong missed = new java.util.concurrent.atomic.AtomicLong();
    Thread churner = new Thread(() -> {
      try {
        for (long batch = 0; !stop.get(); batch++) {
          TestBlocks b = TestBlocks.make(seed + batch, count, blockSize);
          for (int i = 0; i < count; i++) {
            cache.cacheBlockWithWait(b.keys[i], b.blocks[i], false, true);
          }
          drain(cache);
          for (int i = 0; i < count; i++) {
            int outcome = b.read(cache, i);
            if (outcome == 2) {
              wrong.incrementAndGet();
            } else if (outcome == 1 && missed.getAndIncrement() == 0) {
              System.out.println("MISSED"); // a block the cuts took: they reached the churn
              System.out.flush();
            }
            cache.evictBlock(b.keys[i]);
          }
          if (batch == 40) {
            System.out.println("CHURNING");
            System.out.flush();
          }
        }
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }, "churner");
    churner.start();
    if (dev.forkset.childjvm.ChildMain.nextLine(300, java.util.concurrent.TimeUnit.SECONDS)
        == null) {
      throw new AssertionError("no line from the parent");
    }
    stop.set(true);
    churner.join();
    TestBlocks more = TestBlocks.make(seed - 1, count, blockSize);
    for (int i = 0; i < count; i++) {
      cache.cacheBlockWithWait(more.keys[i], more.blocks[i], false, true);
    }
    drain(cache);
    StringBuilder sb = new StringBuilder("NEW ");
    for (int i = 0; i < count; i++) {
      sb.append(more.read(cache, i));
    }
    System.out.println(sb);
    System.out.println("WRONG " + wrong.get());
    System.out.println("DONE");
    System.out.flush();
    System.exit(0);
  }

  /** Waits until the writers took every queued block (written, skipped or dropped). */
  private static void drain(BucketCache cache) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 60_000;
    while (!cache.ramCache.isEmpty()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("the writers did not drain the RAM cache within 60 s");
      }
      Thread.sleep(1);
    }
  }

  /** The reads of mode gone after the parent cut the file. */
  private static void readAfterTheCut(BucketCache cache, TestBlocks blocks, int count,
      StringBuilder sb) {
    for (int r = 0; r < 3; r++) {
      sb.setLength(0);
      sb.append("ROUND ").append(r).append(' ');
      for (int i = 0; i < count; i++) {
        sb.append(blocks.read(cache, i));
      }
      System.out.println(sb);
      System.out.flush();
    }
    sb.setLength(0);
    sb.append("INMAP ");
    for (int i = 0; i < count; i++) {
      sb.append(cache.backingMap.containsKey(blocks.keys[i]) ? 1 : 0);
    }
    System.out.println(sb);
    for (int r = 0; r < 40; r++) {
      for (int i = 0; i < count; i++) {
        blocks.read(cache, i);
      }
    }
    // New blocks, some into the buckets the evictions freed past the cut.
    TestBlocks more = TestBlocks.make(blocks.keys[0].getHfileName().hashCode() + 1L, count,
        blocks.blocks[0].getOnDiskSizeWithHeader());
    for (int i = 0; i < count; i++) {
      try {
        cache.cacheBlockWithWait(more.keys[i], more.blocks[i], false, true);
      } catch (RuntimeException e) {
        throw new AssertionError("caching block " + i, e);
      }
    }
    long deadline = System.currentTimeMillis() + 60_000;
    while (!cache.ramCache.isEmpty()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("the writers did not drain the RAM cache within 60 s");
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
    sb.setLength(0);
    sb.append("NEW ");
    for (int i = 0; i < count; i++) {
      sb.append(more.read(cache, i));
    }
    System.out.println(sb);
  }

  /** System.nanoTime() when the churn's current run of evictions started, 0 outside one. */
  private static volatile long evictingSince;

  private static void watchCheckpoints(File persistence) {
    Thread t = new Thread(() -> {
      long last = persistence.lastModified();
      Object lastKey = key(persistence);
      int n = 0;
      while (true) {
        Object k = key(persistence);
        long m = persistence.lastModified();
        if (k != null && (!k.equals(lastKey) || m != last)) {
          lastKey = k;
          last = m;
          long since = evictingSince;
          boolean evicting = since != 0 && System.nanoTime() - since > 100_000_000L;
          System.out.println("CHECKPOINT " + (++n) + (evicting ? " evicting" : ""));
          System.out.flush();
        }
        try {
          Thread.sleep(5);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "checkpoint-watch");
    t.setDaemon(true);
    t.start();
  }

  /** The inode of the file: a new checkpoint is a new file renamed over the old one. */
  private static Object key(File f) {
    try {
      return java.nio.file.Files.readAttributes(f.toPath(),
          java.nio.file.attribute.BasicFileAttributes.class).fileKey();
    } catch (java.io.IOException e) {
      return null;
    }
  }
}
