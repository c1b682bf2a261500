package dev.forkset.it.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.it.harness.ForksetJars;
import dev.forkset.it.harness.MiniHBase;
import dev.forkset.it.harness.RegionServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.master.HMaster;
import org.apache.hadoop.hbase.master.procedure.ServerCrashProcedure;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * kill -9 of a RegionServer process with a warm BucketCache, then a new RegionServer process on
 * the same cache paths: how much of the cache is served again, and whether any row comes back
 * wrong. Module engine (two paths) vs stock {@code pmem:} (HBase's SharedMemoryMmapIOEngine) vs
 * stock {@code file:} with persistence, in one run on one minicluster.
 *
 * <p>The minicluster (HDFS, ZooKeeper, master, one in-JVM RegionServer that keeps hbase:meta)
 * runs in the test JVM. Each engine gets its own RegionServer process ({@link
 * RegionServerProcess}) and its own table, moved to that process. Per engine: load, a first scan
 * that fills L2, a warm scan (L2 hit ratio; repeated, up to {@value
 * #MAX_WARM_SCANS} times, until one is served from L2 entirely, as a read does not wait for a full
 * writer queue and may leave a block uncached), then a wait until the persisted map ({@code
 * hbase.bucketcache.persist.intervalinmillis} = {@value #CHECKPOINT_MS} ms) names every block
 * cached, SIGKILL, a new process on the same paths, the
 * table moved back to it, and one scan of every row: first-pass L2 hit ratio (deltas of
 * l2CacheHitCount / l2CacheMissCount) and rows correct / missing / wrong. A block the cache does
 * not serve is read from HDFS, so no engine may return a wrong or missing row.
 *
 * <p>The module's target: at least 99% of the blocks cached one checkpoint interval before the
 * kill are served again from L2 by the first pass after the restart
 * ({@link #moduleServesAgainAfterKillNine_theBlocksOfItsLastCheckpoint}).
 */
public class PmemKillNineIT {
  private static final byte[] CF = Bytes.toBytes("f");
  private static final byte[] Q = Bytes.toBytes("q");
  /** 8,000 rows of 1 KiB in 8 KiB blocks: about 1,100 data blocks per table. */
  private static final int ROWS = 8_000;
  private static final int VALUE = 1024;
  private static final int BLOCK_SIZE = 8 * 1024;
  private static final String CACHE_MB = "64";
  /** BucketCache persister interval of every engine (upstream's default). */
  static final long CHECKPOINT_MS = 1000;
  /** Scans after the fill scan to get one served from L2 entirely (usually one). */
  static final int MAX_WARM_SCANS = 4;
  /** The module's target: share of the blocks cached before the kill that are served again. */
  static final double MODULE_TARGET = 0.99;

  /** The three engines, each on its own RegionServer process and table. */
  enum Engine {
    MODULE("module pmem: (2 paths)"),
    STOCK_PMEM("stock pmem:"),
    STOCK_FILE("stock file:");

    final String label;

    Engine(String label) {
      this.label = label;
    }

    TableName table() {
      return TableName.valueOf("kill9_" + name().toLowerCase());
    }

    /** Cache settings of this engine's RegionServer, with its cache files under {@code dir}. */
    void configure(RegionServerProcess.Builder b, Path dir) throws Exception {
      Path persistence = dir.resolve("bucket.persistence");
      switch (this) {
        case MODULE:
          Files.createDirectories(dir.resolve("pmem0"));
          Files.createDirectories(dir.resolve("pmem1"));
          b.set("hbase.bucketcache.ioengine", "pmem:" + dir.resolve("pmem0/cache") + ","
              + dir.resolve("pmem1/cache"));
          b.set("hbase.bucketcache.pmem.engine", "module");
          // 2 MiB mappings alternate between the two files, so both hold blocks of this small
          // cache (with the default 1 GiB, all 64 MB would sit in the first file).
          b.set("hbase.bucketcache.pmem.mapping.size", Long.toString(2L << 20));
          break;
        case STOCK_PMEM:
          Files.createDirectories(dir.resolve("pmem0"));
          b.set("hbase.bucketcache.ioengine", "pmem:" + dir.resolve("pmem0/cache"));
          b.set("hbase.bucketcache.pmem.engine", "stock");
          break;
        case STOCK_FILE:
          Files.createDirectories(dir.resolve("file0"));
          b.set("hbase.bucketcache.ioengine", "file:" + dir.resolve("file0/cache"));
          break;
        default:
          throw new IllegalStateException(name());
      }
      b.set("hbase.bucketcache.size", CACHE_MB);
      b.set("hbase.bucketcache.persistent.path", persistence.toString());
      b.set("hbase.bucketcache.persist.intervalinmillis", Long.toString(CHECKPOINT_MS));
      // A full writer queue would drop blocks instead of caching them: wait instead, so one
      // scan caches every block.
      b.set("hbase.bucketcache.queue.addition.waittime", "5000");
      b.set("hfile.block.cache.size", "0.1");
    }
  }

  /** One scan of every row of a table: L2 hits and misses, rows correct / missing / wrong. */
  static final class Pass {
    long hits;
    long misses;
    long correct;
    long missing;
    long wrong;
    String failure;

    /** Sets the L2 hits and misses from the counters before and after the scan. */
    void count(Map<String, Long> before, Map<String, Long> after) {
      hits = after.get("l2CacheHitCount") - before.get("l2CacheHitCount");
      misses = after.get("l2CacheMissCount") - before.get("l2CacheMissCount");
    }

    double hitRatio() {
      return hits + misses == 0 ? 0 : (double) hits / (hits + misses);
    }

    @Override
    public String toString() {
      return String.format("L2 hit ratio %.4f (hits %d, misses %d), rows correct %d, missing %d,"
          + " wrong %d%s", hitRatio(), hits, misses, correct, missing, wrong,
          failure == null ? "" : ", scan failed: " + failure);
    }
  }

  /** What one engine went through. */
  static final class Run {
    final Engine engine;
    RegionServerProcess rs;
    ServerName before;
    ServerName after;
    int exitStatus;
    Pass fill;
    Pass warm;
    int warmScans;
    long blocksBeforeKill;
    long blocksAtStart;
    String persistenceAtKill;
    Pass afterKill;
    /** Every scan of the engine's table, checked row by row. */
    final List<Pass> passes = new ArrayList<>();

    /**
     * Share of the warm pass's L2 hits that the first pass after the kill also gets from L2: the
     * blocks served again. (HBase counts a data block miss twice, once before and once under the
     * block's read lock, so hits / (hits + misses) understates a partly warm cache.)
     */
    double servedAgain() {
      return warm.hits == 0 ? 0 : (double) afterKill.hits / warm.hits;
    }

    Run(Engine engine) {
      this.engine = engine;
    }
  }

  private static final String[] L2 = {"l2CacheHitCount", "l2CacheMissCount", "l2CacheCount"};

  private static MiniHBase hbase;
  private static final Map<Engine, Run> RUNS = new LinkedHashMap<>();
  private static long seconds;

  @BeforeClass
  public static void killNineEveryEngineOnce() throws Exception {
    long t0 = System.nanoTime();
    hbase = MiniHBase.start(HBaseConfiguration.create());
    hbase.util().getAdmin().balancerSwitch(false, true);
    phase("minicluster up");

    // One RegionServer process per engine; they start while the tables load.
    for (Engine e : Engine.values()) {
      Run r = new Run(e);
      RegionServerProcess.Builder b =
          RegionServerProcess.builder("kill9-" + e.name().toLowerCase(), hbase).heap("512m");
      e.configure(b, b.dir().resolve("cache"));
      r.rs = b.launch();
      RUNS.put(e, r);
    }
    for (Engine e : Engine.values()) {
      load(e.table());
    }
    phase("tables loaded");
    for (Run r : RUNS.values()) {
      r.before = r.rs.awaitOnline();
    }
    phase("RegionServer processes online");
    for (Run r : RUNS.values()) {
      moveTo(r.engine.table(), r.before);
    }
    phase("tables moved to them");

    // Warm: the first scan fills L2 (a block counts as cached, and is served, from the moment it
    // is queued for the writers). A read does not wait for a full writer queue, so a block can
    // be dropped instead of cached (a slow sync of a disk-backed file); scans repeat until one is
    // served from L2 entirely: that scan is the warm pass. The counters are read live
    // (RegionServerProcess#counters), so each pass's hits and misses are its own.
    Map<Run, Map<String, Long>> before = counters();
    for (Run r : RUNS.values()) {
      r.fill = scan(r);
    }
    Map<Run, Map<String, Long>> after = counters();
    for (Run r : RUNS.values()) {
      r.fill.count(before.get(r), after.get(r));
    }
    for (int i = 0; i < MAX_WARM_SCANS; i++) {
      before = after;
      List<Run> cold = new ArrayList<>();
      for (Run r : RUNS.values()) {
        if (r.warm == null || r.warm.misses > 0) {
          cold.add(r);
          r.warm = scan(r);
          r.warmScans++;
        }
      }
      if (cold.isEmpty()) {
        break;
      }
      after = counters();
      for (Run r : cold) {
        r.warm.count(before.get(r), after.get(r));
      }
    }
    for (Run r : RUNS.values()) {
      r.blocksBeforeKill = after.get(r).get("l2CacheCount");
    }
    phase("warm");
    // The kill comes once the last checkpoint names every block cached (the block count includes
    // blocks still queued for the writers: they must be written and checkpointed too). Stock
    // pmem: persists nothing.
    for (Run r : RUNS.values()) {
      if (r.engine != Engine.STOCK_PMEM) {
        Path file = r.rs.dir().resolve("cache/bucket.persistence");
        long deadline = System.currentTimeMillis() + 120_000;
        while (PersistedMaps.blocks(file) < r.blocksBeforeKill) {
          assertTrue(r.engine.label + ": no checkpoint names the " + r.blocksBeforeKill
              + " blocks cached within 120 s (" + describe(file) + ", names "
              + PersistedMaps.blocks(file) + ")", System.currentTimeMillis() < deadline);
          Thread.sleep(100);
        }
      }
    }
    phase("checkpointed");

    for (Run r : RUNS.values()) {
      r.persistenceAtKill = describe(r.rs.dir().resolve("cache/bucket.persistence"));
      r.exitStatus = r.rs.kill();
    }
    for (Run r : RUNS.values()) {
      r.rs.relaunch();
    }
    for (Run r : RUNS.values()) {
      r.after = r.rs.awaitOnline();
    }
    phase("killed and restarted");
    // Each new process expired its dead predecessor when it reported for duty (same host and
    // port); a move before that server's crash procedure has reassigned its regions races it.
    HMaster master = hbase.cluster().getMaster();
    hbase.util().waitFor(180_000, 250, () -> master.getMasterProcedureExecutor().getProcedures()
        .stream().noneMatch(p -> p instanceof ServerCrashProcedure && !p.isFinished()));
    hbase.util().waitUntilNoRegionsInTransition(180_000);
    for (Run r : RUNS.values()) {
      moveTo(r.engine.table(), r.after);
    }
    phase("tables moved back");
    Map<Run, Map<String, Long>> s3 = counters();
    for (Run r : RUNS.values()) {
      r.blocksAtStart = s3.get(r).get("l2CacheCount");
      r.afterKill = scan(r);
    }
    Map<Run, Map<String, Long>> s4 = counters();
    for (Run r : RUNS.values()) {
      r.afterKill.count(s3.get(r), s4.get(r));
    }
    phase("first pass after the kill");
    seconds = (System.nanoTime() - t0) / 1_000_000_000L;
    System.out.println(report());
  }

  private static final List<String> PHASES = new ArrayList<>();
  private static long phaseStart = System.nanoTime();

  private static void phase(String name) {
    long now = System.nanoTime();
    PHASES.add(String.format("%s %.1f s", name, (now - phaseStart) / 1e9));
    phaseStart = now;
  }

  /** The L2 counters of every engine's RegionServer as they are now. */
  private static Map<Run, Map<String, Long>> counters() throws Exception {
    Map<Run, Map<String, Long>> out = new LinkedHashMap<>();
    for (Run r : RUNS.values()) {
      out.put(r, r.rs.counters(L2));
    }
    return out;
  }

  @AfterClass
  public static void stopCluster() throws Exception {
    for (Run r : RUNS.values()) {
      if (r.rs != null) {
        r.rs.close();
        RegionServerProcess.deleteTree(r.rs.dir().resolve("cache"));
      }
    }
    if (hbase != null) {
      hbase.close();
    }
  }

  private static String describe(Path file) throws Exception {
    if (!Files.exists(file)) {
      return "no persistence file";
    }
    long age = System.currentTimeMillis() - Files.getLastModifiedTime(file).toMillis();
    return "persistence file " + Files.size(file) + " bytes, written " + age + " ms before";
  }

  static String report() {
    StringBuilder sb = new StringBuilder("kill -9 of a warm RegionServer process, new process on"
        + " the same cache paths (" + ROWS + " rows, " + BLOCK_SIZE / 1024 + " KiB blocks, "
        + CACHE_MB + " MB BucketCache, persister every " + CHECKPOINT_MS + " ms; " + seconds
        + " s)\n");
    sb.append("| engine | warm L2 hit ratio | blocks cached before the kill | blocks at restart |"
        + " first pass: L2 hit ratio (hits / misses) | blocks served again |"
        + " rows correct / missing / wrong |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (Run r : RUNS.values()) {
      sb.append(String.format("| %s | %.4f | %d | %d | %.4f (%d / %d) | %.1f%% | %d / %d / %d |%n",
          r.engine.label, r.warm.hitRatio(), r.blocksBeforeKill, r.blocksAtStart,
          r.afterKill.hitRatio(), r.afterKill.hits, r.afterKill.misses, 100 * r.servedAgain(),
          r.afterKill.correct, r.afterKill.missing, r.afterKill.wrong));
    }
    sb.append("phases: ").append(String.join(", ", PHASES)).append("\n");
    for (Run r : RUNS.values()) {
      sb.append(r.engine.label).append(": ").append(r.before).append(" killed (exit ")
          .append(r.exitStatus).append(", ").append(r.persistenceAtKill).append("), restarted as ")
          .append(r.after).append("\n  fill pass:  ").append(r.fill).append("\n  warm pass:  ")
          .append(r.warm).append(" (scan ").append(r.warmScans).append(" after the fill)")
          .append("\n  after kill: ").append(r.afterKill).append("\n");
    }
    return sb.toString();
  }

  private static byte[] row(int i) {
    return Bytes.toBytes(String.format("row%08d", i));
  }

  private static byte[] value(TableName t, int row) {
    byte[] v = new byte[VALUE];
    new Random(row * 31L + t.getNameAsString().hashCode()).nextBytes(v);
    return v;
  }

  private static void load(TableName t) throws Exception {
    Admin admin = hbase.util().getAdmin();
    admin.createTable(TableDescriptorBuilder.newBuilder(t).setColumnFamily(
        ColumnFamilyDescriptorBuilder.newBuilder(CF).setBlocksize(BLOCK_SIZE).build()).build());
    try (Table table = hbase.util().getConnection().getTable(t)) {
      List<Put> batch = new ArrayList<>();
      for (int i = 0; i < ROWS; i++) {
        batch.add(new Put(row(i)).addColumn(CF, Q, value(t, i)));
        if (batch.size() == 500) {
          table.put(batch);
          batch.clear();
        }
      }
      table.put(batch);
    }
    admin.flush(t);
  }

  /**
   * Moves every region of {@code t} to {@code server} and waits until it is open there, asking
   * again if a move ends elsewhere (a move can lose to a concurrent assignment).
   */
  private static void moveTo(TableName t, ServerName server) throws Exception {
    Admin admin = hbase.util().getAdmin();
    long deadline = System.currentTimeMillis() + 120_000;
    while (true) {
      List<RegionInfo> missing = new ArrayList<>(admin.getRegions(t));
      missing.removeAll(admin.getRegions(server));
      if (missing.isEmpty()) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError(t + ": regions " + missing + " not on " + server
            + " after 120 s");
      }
      hbase.util().waitUntilNoRegionsInTransition(120_000);
      for (RegionInfo region : missing) {
        try {
          admin.move(region.getEncodedNameAsBytes(), server);
        } catch (java.io.IOException e) {
          // in transition after all, or the target not ready: look again
          System.out.println("move of " + region.getEncodedName() + " to " + server + ": " + e);
        }
      }
      hbase.util().waitUntilNoRegionsInTransition(120_000);
    }
  }

  /** Scans every row of the engine's table once, checking each value. */
  private static Pass scan(Run r) {
    TableName t = r.engine.table();
    Pass p = new Pass();
    r.passes.add(p);
    boolean[] seen = new boolean[ROWS];
    Scan scan = new Scan().setCacheBlocks(true).setCaching(500);
    try (Table table = hbase.util().getConnection().getTable(t);
        ResultScanner scanner = table.getScanner(scan)) {
      for (Result res : scanner) {
        String key = Bytes.toString(res.getRow());
        int i = key.startsWith("row") ? Integer.parseInt(key.substring(3)) : -1;
        if (i < 0 || i >= ROWS || seen[i]) {
          p.wrong++;
          continue;
        }
        seen[i] = true;
        if (Arrays.equals(res.getValue(CF, Q), value(t, i))) {
          p.correct++;
        } else {
          p.wrong++;
        }
      }
    } catch (Exception e) {
      p.failure = e.toString();
    }
    for (boolean s : seen) {
      if (!s) {
        p.missing++;
      }
    }
    return p;
  }

  /**
   * Each RegionServer process, started as an operator starts one, logs the hbase-server jar it
   * runs with the jar's Implementation-Version (patch 0102 of the 2.6.4 series): the custom jar
   * and its fork version, while VersionInfo still reports hbase-common's version.
   */
  @Test
  public void regionServerProcess_logsTheCustomJarAndItsForkVersionAtStart() throws Exception {
    Path custom = ForksetJars.jar("forkset.hbase.custom.jar");
    String version = ForksetJars.manifestAttribute(custom, "Implementation-Version");
    assertTrue("the custom jar's Implementation-Version is a fork version: " + version,
        version != null && version.matches(".+-fork\\.\\d+"));
    String expected = custom.getFileName() + ": Implementation-Title=Apache HBase - Server,"
        + " Implementation-Version=" + version + ", Implementation-Vendor=forkset";
    for (Run r : RUNS.values()) {
      List<String> log = Files.readAllLines(r.rs.logFile());
      assertTrue(r.engine.label + ": " + r.rs.logFile() + " has the line '... hbase-server jar"
          + " .../" + expected + "'", log.stream().anyMatch(
              l -> l.contains("hbase-server jar ") && l.endsWith("/" + expected)));
    }
  }

  @Test
  public void killNine_isASigkillAndANewProcessOnTheSamePaths() {
    for (Run r : RUNS.values()) {
      assertEquals(r.engine.label + " was killed by SIGKILL", RegionServerProcess.EXIT_SIGKILL,
          r.exitStatus);
      assertEquals(r.engine.label + " restarted on the same port", r.before.getPort(),
          r.after.getPort());
      assertNotEquals(r.engine.label + " restarted as a new process", r.before.getStartcode(),
          r.after.getStartcode());
    }
  }

  @Test
  public void warmCache_isServedFromL2BeforeTheKill() {
    for (Run r : RUNS.values()) {
      assertTrue(r.engine.label + " fill pass caches blocks: " + r.fill, r.fill.misses > 0);
      assertTrue(r.engine.label + " is warm within " + MAX_WARM_SCANS + " scans after the fill: "
          + r.warm, r.warm.misses == 0 && r.warm.hits > 0);
    }
  }

  @Test
  public void killNine_noEngineServesAWrongOrMissingRow() {
    for (Run r : RUNS.values()) {
      for (Pass p : r.passes) {
        assertEquals(r.engine.label + ": " + p, null, p.failure);
        assertEquals(r.engine.label + ": wrong rows: " + p, 0, p.wrong);
        assertEquals(r.engine.label + ": missing rows: " + p, 0, p.missing);
        assertEquals(r.engine.label + ": correct rows: " + p, ROWS, p.correct);
      }
    }
  }

  @Test
  public void moduleServesAgainAfterKillNine_theBlocksOfItsLastCheckpoint() {
    Run m = RUNS.get(Engine.MODULE);
    assertTrue("module keeps at least " + MODULE_TARGET + " of the " + m.blocksBeforeKill
        + " blocks cached before the kill: " + m.blocksAtStart + " at restart",
        m.blocksAtStart >= MODULE_TARGET * m.blocksBeforeKill);
    assertTrue("module first pass after kill -9 serves at least " + MODULE_TARGET + " of the"
        + " blocks again from L2: " + m.servedAgain() + " (" + m.afterKill + "; warm " + m.warm
        + ")", m.servedAgain() >= MODULE_TARGET);
  }
}
