package dev.forkset.hbase.pmem.bench;

import dev.forkset.bench.Charts;
import dev.forkset.bench.ResultTable;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.PerformanceEvaluation;
import org.apache.hadoop.hbase.PerformanceEvaluationClients;
import org.apache.hadoop.hbase.StartMiniClusterOption;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.io.hfile.BlockCache;
import org.apache.hadoop.hbase.io.hfile.CombinedBlockCache;
import org.apache.hadoop.hbase.io.hfile.bucket.BucketCache;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.regionserver.HStore;
import org.apache.hadoop.hbase.util.JVMClusterUtil;
import org.apache.hadoop.util.ToolRunner;

/**
 * HBase's own benchmark tool, {@code PerformanceEvaluation --nomapred randomRead}, against a
 * minicluster whose table fits the L2 BucketCache but not the on-heap L1: stock {@code offheap},
 * stock {@code pmem:} and the module engine (two files) on tmpfs, in one run.
 *
 * <p>One minicluster (HDFS, ZooKeeper, master, one RegionServer, all in this JVM). PE's
 * {@code sequentialWrite} loads the table, which is flushed and major-compacted to one HFile per
 * region. Then, for each engine and round, the RegionServer is restarted with that engine, a scan
 * reads every block into L2, the BucketCache writers drain, an unmeasured {@code randomRead} of a
 * quarter of the requests warms the JIT and connections, and PE's {@code randomRead} runs with
 * {@code bench.pe.clients} client threads over the whole key space ({@link
 * PerformanceEvaluationClients}: PE's own client code, whose per-client latency samples
 * {@code hbase pe} only logs). Engines alternate order between rounds; the report gives the
 * median over rounds. The L2 hit ratio during each randomRead is recorded to show the reads were
 * served from L2.
 *
 * <p>Arguments: report file, throughput chart, latency chart. System properties (defaults):
 * {@code bench.scratch} (/dev/shm), {@code bench.pe.rows} (250000), {@code bench.pe.clients} (4),
 * {@code bench.pe.rounds} (3), {@code bench.pe.cache.mb} (512), {@code bench.pe.l1} (0.02 of the
 * heap).
 */
public final class PeRandomReadBench {
  static final String[] ENGINES = {"stock-offheap", "stock-pmem", "module-pmem"};
  static final TableName TABLE = TableName.valueOf(PerformanceEvaluation.TABLE_NAME);

  private static final String SCRATCH = System.getProperty("bench.scratch", "/dev/shm");
  private static final int ROWS = Integer.getInteger("bench.pe.rows", 250_000);
  private static final int CLIENTS = Integer.getInteger("bench.pe.clients", 4);
  private static final int ROUNDS = Integer.getInteger("bench.pe.rounds", 3);
  private static final int CACHE_MB = Integer.getInteger("bench.pe.cache.mb", 512);
  private static final float L1 = Float.parseFloat(System.getProperty("bench.pe.l1", "0.02"));

  private PeRandomReadBench() {}

  /** One randomRead run of one engine. */
  static final class Run {
    final String engine;
    double opsPerSecond;
    long ops;
    long[] latency; // sorted, microseconds
    double l2HitRatio;
    long l2Blocks;

    Run(String engine) {
      this.engine = engine;
    }

    double percentile(double q) {
      int i = (int) Math.ceil(q * latency.length) - 1;
      return latency[Math.max(0, Math.min(latency.length - 1, i))];
    }

    double mean() {
      return Arrays.stream(latency).average().orElse(0);
    }
  }

  public static void main(String[] args) throws Exception {
    File report = new File(args[0]);
    File throughputPng = new File(args[1]);
    File latencyPng = new File(args[2]);
    File scratch = new File(SCRATCH, "forkset-pe-randomread");
    delete(scratch);

    Configuration conf = HBaseConfiguration.create();
    conf.setFloat("hfile.block.cache.size", L1);
    conf.setInt("hbase.bucketcache.size", CACHE_MB);
    // A full writer queue would drop blocks instead of caching them: the warm-up scan waits.
    conf.setLong("hbase.bucketcache.queue.addition.waittime", 5_000);
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    engine(conf, "stock-offheap", scratch);
    HBaseTestingUtility util = new HBaseTestingUtility(conf);
    util.startMiniCluster(StartMiniClusterOption.builder().numMasters(1).numRegionServers(1)
        .numDataNodes(1).build());
    List<Run> runs = new ArrayList<>();
    String setup;
    try {
      long t0 = System.nanoTime();
      int rc = ToolRunner.run(util.getConfiguration(),
          new PerformanceEvaluation(util.getConfiguration()), new String[] {"--nomapred",
              "--rows=" + ROWS, "sequentialWrite", "1"});
      if (rc != 0) {
        throw new IllegalStateException("PerformanceEvaluation sequentialWrite failed: " + rc);
      }
      Admin admin = util.getAdmin();
      admin.flush(TABLE);
      admin.majorCompact(TABLE);
      util.waitFor(600_000, 500, () -> storeFiles(util) == 1);
      long tableBytes = tableBytes(util);
      long l1 = (long) (L1 * Runtime.getRuntime().maxMemory());
      setup = String.format("%,d rows of 1,000 bytes (PE sequentialWrite, 1 region, 1 HFile of"
          + " %,d MiB after a major compaction), L1 %.0f%% of a %,d MiB heap (%,d MiB), L2 %,d"
          + " MiB; load %.0f s", ROWS, tableBytes >> 20, 100 * L1,
          Runtime.getRuntime().maxMemory() >> 20, l1 >> 20, CACHE_MB,
          (System.nanoTime() - t0) / 1e9);
      if (tableBytes >= (long) CACHE_MB << 20 || tableBytes <= l1) {
        throw new IllegalStateException("The table (" + tableBytes + " bytes) must fit L2 ("
            + CACHE_MB + " MiB) but not L1 (" + l1 + " bytes): " + setup);
      }
      System.out.println("PE randomRead bench: " + setup);

      for (int round = 0; round < ROUNDS; round++) {
        List<String> order = new ArrayList<>(Arrays.asList(ENGINES));
        if (round % 2 == 1) {
          java.util.Collections.reverse(order);
        }
        for (String e : order) {
          runs.add(run(util, e, scratch));
          Run r = runs.get(runs.size() - 1);
          System.out.printf("PE randomRead round %d %s: %.0f ops/s, p50 %.0f us, p99 %.0f us,"
              + " L2 hit ratio %.4f, L2 blocks %d%n", round + 1, e, r.opsPerSecond,
              r.percentile(0.50), r.percentile(0.99), r.l2HitRatio, r.l2Blocks);
        }
      }
    } finally {
      util.shutdownMiniCluster();
      delete(scratch);
    }
    String md = report(runs, setup, throughputPng, latencyPng);
    File dir = report.getAbsoluteFile().getParentFile();
    if (dir != null) {
      dir.mkdirs();
    }
    Files.write(report.toPath(), md.getBytes(StandardCharsets.UTF_8));
    System.out.println(md);
  }

  /** Sets {@code conf}'s BucketCache engine, with cache files under {@code scratch}. */
  static void engine(Configuration conf, String engine, File scratch) {
    File dir = new File(scratch, engine);
    delete(dir);
    switch (engine) {
      case "stock-offheap":
        conf.set("hbase.bucketcache.ioengine", "offheap");
        break;
      case "stock-pmem":
        new File(dir, "p0").mkdirs();
        conf.set("hbase.bucketcache.ioengine", "pmem:" + dir + "/p0/cache");
        conf.set("hbase.bucketcache.pmem.engine", "stock");
        break;
      case "module-pmem":
        new File(dir, "p0").mkdirs();
        new File(dir, "p1").mkdirs();
        conf.set("hbase.bucketcache.ioengine", "pmem:" + dir + "/p0/cache," + dir + "/p1/cache");
        conf.set("hbase.bucketcache.pmem.engine", "module");
        break;
      default:
        throw new IllegalArgumentException(engine);
    }
  }

  /** Restarts the RegionServer on {@code engine}, warms L2, runs PE randomRead. */
  private static Run run(HBaseTestingUtility util, String engine, File scratch) throws Exception {
    MiniHBaseCluster cluster = util.getMiniHBaseCluster();
    for (JVMClusterUtil.RegionServerThread t : cluster.getLiveRegionServerThreads()) {
      t.getRegionServer().stop("PE bench: next engine");
      t.join();
    }
    // Frees the direct memory of an offheap cache that was just shut down.
    System.gc();
    engine(cluster.getConf(), engine, scratch);
    JVMClusterUtil.RegionServerThread t = cluster.startRegionServer();
    t.waitForServerOnline();
    util.waitUntilNoRegionsInTransition(300_000);
    util.waitTableAvailable(TABLE, 300_000);
    HRegionServer rs = t.getRegionServer();
    BucketCache l2 = bucketCache(rs);
    if (!engineName(l2).equals(expectedEngineClass(engine))) {
      throw new IllegalStateException(engine + " runs on " + engineName(l2));
    }

    // Every block into L2, then let the writers drain (block count steady for 2 s).
    try (Table table = util.getConnection().getTable(TABLE);
        ResultScanner scanner = table.getScanner(new Scan().setCacheBlocks(true))) {
      for (Result ignored : scanner) {
        // reading is enough
      }
    }
    long last = -1;
    long steadySince = System.currentTimeMillis();
    while (System.currentTimeMillis() - steadySince < 2_000) {
      long n = l2.getBlockCount();
      if (n != last) {
        last = n;
        steadySince = System.currentTimeMillis();
      }
      Thread.sleep(100);
    }

    // An unmeasured randomRead of a quarter of the requests: the JIT compiles the read path
    // (the first engine of the JVM would otherwise pay for it) and the RPC connections warm up.
    PerformanceEvaluationClients.run(util.getConfiguration(), "--nomapred",
        "--rows=" + ROWS / CLIENTS / 4, "randomRead", Integer.toString(CLIENTS));

    Run run = new Run(engine);
    run.l2Blocks = l2.getBlockCount();
    long hits = l2.getStats().getHitCount();
    long misses = l2.getStats().getMissCount();
    List<PerformanceEvaluationClients.Client> clients =
        PerformanceEvaluationClients.run(util.getConfiguration(), "--nomapred",
            "--rows=" + ROWS / CLIENTS, "randomRead", Integer.toString(CLIENTS));
    long dh = l2.getStats().getHitCount() - hits;
    long dm = l2.getStats().getMissCount() - misses;
    run.l2HitRatio = dh + dm == 0 ? 0 : (double) dh / (dh + dm);
    List<Long> all = new ArrayList<>();
    for (PerformanceEvaluationClients.Client c : clients) {
      // PE's "Avg TPS": the sum over clients of each client's requests per second
      run.opsPerSecond += c.ops * 1000.0 / c.durationMs;
      run.ops += c.ops;
      for (long l : c.latencyMicros) {
        all.add(l);
      }
    }
    run.latency = all.stream().mapToLong(Long::longValue).sorted().toArray();
    return run;
  }

  private static String expectedEngineClass(String engine) {
    switch (engine) {
      case "stock-offheap":
        return "ByteBufferIOEngine";
      case "stock-pmem":
        return "SharedMemoryMmapIOEngine";
      default:
        return "PmemIOEngine";
    }
  }

  private static String engineName(BucketCache cache) throws Exception {
    java.lang.reflect.Field f = BucketCache.class.getDeclaredField("ioEngine");
    f.setAccessible(true);
    return f.get(cache).getClass().getSimpleName();
  }

  private static BucketCache bucketCache(HRegionServer rs) {
    BlockCache bc = rs.getBlockCache().get();
    return (BucketCache) ((CombinedBlockCache) bc).getBlockCaches()[1];
  }

  private static int storeFiles(HBaseTestingUtility util) {
    int n = 0;
    for (HRegion r : util.getMiniHBaseCluster().getRegions(TABLE)) {
      for (HStore s : r.getStores()) {
        n += s.getStorefilesCount();
      }
    }
    return n;
  }

  private static long tableBytes(HBaseTestingUtility util) {
    long n = 0;
    for (HRegion r : util.getMiniHBaseCluster().getRegions(TABLE)) {
      for (HStore s : r.getStores()) {
        n += s.getStorefilesSize();
      }
    }
    return n;
  }

  /** The median of the rounds' values of one engine. */
  private static double median(List<Run> runs, String engine,
      java.util.function.ToDoubleFunction<Run> f) {
    double[] v = runs.stream().filter(r -> r.engine.equals(engine)).mapToDouble(f).sorted()
        .toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static String report(List<Run> runs, String setup, File throughputPng,
      File latencyPng) throws Exception {
    double offheap = median(runs, "stock-offheap", r -> r.opsPerSecond);
    ResultTable table = new ResultTable("engine", "randomRead ops/s (median)", "min - max",
        "vs offheap", "p50 us", "p95 us", "p99 us", "p99.9 us", "mean us", "L2 hit ratio");
    Map<String, double[]> throughput = new LinkedHashMap<>();
    Map<String, double[]> latency = new LinkedHashMap<>();
    double[] tput = new double[ENGINES.length];
    int i = 0;
    for (String e : ENGINES) {
      double ops = median(runs, e, r -> r.opsPerSecond);
      double min = runs.stream().filter(r -> r.engine.equals(e)).mapToDouble(r -> r.opsPerSecond)
          .min().orElse(0);
      double max = runs.stream().filter(r -> r.engine.equals(e)).mapToDouble(r -> r.opsPerSecond)
          .max().orElse(0);
      double[] pct = {median(runs, e, r -> r.percentile(0.50)),
          median(runs, e, r -> r.percentile(0.95)), median(runs, e, r -> r.percentile(0.99)),
          median(runs, e, r -> r.percentile(0.999))};
      table.row(e, String.format("%,.0f", ops), String.format("%,.0f - %,.0f", min, max),
          ResultTable.num(ops / offheap, 3) + "x", ResultTable.num(pct[0], 0),
          ResultTable.num(pct[1], 0), ResultTable.num(pct[2], 0), ResultTable.num(pct[3], 0),
          ResultTable.num(median(runs, e, Run::mean), 0),
          ResultTable.num(median(runs, e, r -> r.l2HitRatio), 4));
      tput[i++] = ops;
      latency.put(e, pct);
    }
    throughput.put("randomRead ops/s (median of " + ROUNDS + " rounds)", tput);
    Charts.bar(throughputPng, "PerformanceEvaluation randomRead, " + CLIENTS + " clients",
        "requests/s", Arrays.asList(ENGINES), throughput);
    Charts.bar(latencyPng, "PerformanceEvaluation randomRead latency, " + CLIENTS + " clients",
        "microseconds", Arrays.asList("p50", "p95", "p99", "p99.9"), latency);

    ResultTable each = new ResultTable("round", "engine", "ops/s", "requests", "p50 us",
        "p99 us", "L2 hit ratio", "L2 blocks");
    int n = 0;
    for (Run r : runs) {
      each.row(n++ / ENGINES.length + 1, r.engine, String.format("%,.0f", r.opsPerSecond),
          r.ops, ResultTable.num(r.percentile(0.50), 0), ResultTable.num(r.percentile(0.99), 0),
          ResultTable.num(r.l2HitRatio, 4), r.l2Blocks);
    }
    return "### PerformanceEvaluation randomRead (" + CLIENTS + " clients, --nomapred)\n\n"
        + "Measured on " + Runtime.getRuntime().availableProcessors() + " cores, "
        + System.getProperty("java.vm.name") + " " + System.getProperty("java.version")
        + ", cache files in " + SCRATCH + ". " + setup + ". Median of " + ROUNDS
        + " rounds per engine (order alternating).\n\n" + table.toMarkdown() + "\nEach run:\n\n"
        + each.toMarkdown();
  }

  private static void delete(File f) {
    File[] children = f.listFiles();
    if (children != null) {
      for (File c : children) {
        delete(c);
      }
    }
    f.delete();
  }
}
