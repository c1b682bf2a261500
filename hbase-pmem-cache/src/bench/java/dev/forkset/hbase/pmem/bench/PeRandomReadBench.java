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
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.RegionInfo;
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
 * minicluster whose tables fit the L2 BucketCache but not the on-heap L1: stock {@code offheap},
 * stock {@code pmem:} and the module engine (two files) on tmpfs, in one run.
 *
 * <p>One minicluster (HDFS, ZooKeeper, master, all in this JVM) with one RegionServer per engine,
 * each started with that engine's {@code hbase.bucketcache.ioengine}, and one table per engine
 * ({@code pe_<engine>}, PE's {@code sequentialWrite}, flushed and major-compacted to one HFile)
 * moved to its RegionServer. A scan reads every block into each L2, the BucketCache writers
 * drain, and an unmeasured {@code randomRead} per table warms the JIT and the connections. Then
 * {@code bench.pe.rounds} rounds, each running PE's {@code randomRead} with
 * {@code bench.pe.clients} client threads over each table's whole key space (a
 * {@code --sampleRate} share of it), engines in alternating order. Runs are short and
 * interleaved, so a change of the shared machine's load hits every engine alike; the report gives
 * medians over rounds and the median of each round's ratio to offheap. The L2 hit ratio of every
 * run shows the reads were served from L2. {@link PerformanceEvaluationClients} runs PE's own
 * client code and returns the per-client latency samples that {@code hbase pe} only logs.
 *
 * <p>Arguments: report file, throughput chart, latency chart. System properties (defaults):
 * {@code bench.scratch} (/dev/shm), {@code bench.pe.rows} (250000 per table),
 * {@code bench.pe.clients} (4), {@code bench.pe.rounds} (7), {@code bench.pe.sampleRate} (0.5),
 * {@code bench.pe.cache.mb} (512 per RegionServer), {@code bench.pe.l1} (0.02 of the heap).
 */
public final class PeRandomReadBench {
  static final String[] ENGINES = {"stock-offheap", "stock-pmem", "module-pmem"};

  private static final String SCRATCH = System.getProperty("bench.scratch", "/dev/shm");
  private static final int ROWS = Integer.getInteger("bench.pe.rows", 250_000);
  private static final int CLIENTS = Integer.getInteger("bench.pe.clients", 4);
  private static final int ROUNDS = Integer.getInteger("bench.pe.rounds", 7);
  private static final String SAMPLE_RATE = System.getProperty("bench.pe.sampleRate", "0.5");
  private static final int CACHE_MB = Integer.getInteger("bench.pe.cache.mb", 512);
  private static final float L1 = Float.parseFloat(System.getProperty("bench.pe.l1", "0.02"));

  private PeRandomReadBench() {}

  static TableName table(String engine) {
    return TableName.valueOf("pe_" + engine.replace('-', '_'));
  }

  /** One randomRead run of one engine. */
  static final class Run {
    final String engine;
    final int round;
    double opsPerSecond;
    long ops;
    long[] latency; // sorted, microseconds
    double l2HitRatio;
    long l2Blocks;

    Run(String engine, int round) {
      this.engine = engine;
      this.round = round;
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
    engine(conf, ENGINES[0], scratch);
    HBaseTestingUtility util = new HBaseTestingUtility(conf);
    util.startMiniCluster(StartMiniClusterOption.builder().numMasters(1).numRegionServers(1)
        .numDataNodes(1).build());
    List<Run> runs = new ArrayList<>();
    String setup;
    try {
      MiniHBaseCluster cluster = util.getMiniHBaseCluster();
      Admin admin = util.getAdmin();
      admin.balancerSwitch(false, true);
      // One RegionServer per engine: the first started with the cluster, the others with the
      // cluster's configuration switched to their engine.
      Map<String, HRegionServer> servers = new LinkedHashMap<>();
      servers.put(ENGINES[0], cluster.getRegionServer(0));
      for (int i = 1; i < ENGINES.length; i++) {
        engine(cluster.getConf(), ENGINES[i], scratch);
        JVMClusterUtil.RegionServerThread t = cluster.startRegionServer();
        t.waitForServerOnline();
        servers.put(ENGINES[i], t.getRegionServer());
      }
      long t0 = System.nanoTime();
      long tableBytes = 0;
      for (String e : ENGINES) {
        int rc = ToolRunner.run(util.getConfiguration(),
            new PerformanceEvaluation(util.getConfiguration()), new String[] {"--nomapred",
                "--table=" + table(e), "--rows=" + ROWS, "sequentialWrite", "1"});
        if (rc != 0) {
          throw new IllegalStateException("PerformanceEvaluation sequentialWrite failed: " + rc);
        }
        admin.flush(table(e));
        admin.majorCompact(table(e));
        util.waitFor(600_000, 500, () -> storeFiles(util, table(e)) == 1);
        tableBytes = Math.max(tableBytes, tableBytes(util, table(e)));
        ServerName target = servers.get(e).getServerName();
        for (RegionInfo r : admin.getRegions(table(e))) {
          admin.move(r.getEncodedNameAsBytes(), target);
        }
        util.waitFor(120_000, 250,
            () -> admin.getRegions(target).containsAll(admin.getRegions(table(e))));
      }
      long l1 = (long) (L1 * Runtime.getRuntime().maxMemory());
      setup = String.format("%,d rows of 1,000 bytes per table (PE sequentialWrite; 1 region, 1"
          + " HFile of %,d MiB after a major compaction), one table and RegionServer per engine,"
          + " L1 %.0f%% of the %,d MiB heap (%,d MiB) and L2 %,d MiB per RegionServer; load %.0f"
          + " s", ROWS, tableBytes >> 20, 100 * L1, Runtime.getRuntime().maxMemory() >> 20,
          l1 >> 20, CACHE_MB, (System.nanoTime() - t0) / 1e9);
      if (tableBytes >= (long) CACHE_MB << 20 || tableBytes <= l1) {
        throw new IllegalStateException("A table (" + tableBytes + " bytes) must fit L2 ("
            + CACHE_MB + " MiB) but not L1 (" + l1 + " bytes): " + setup);
      }
      System.out.println("PE randomRead bench: " + setup);

      for (String e : ENGINES) {
        warm(util, e, servers.get(e));
      }
      for (int round = 1; round <= ROUNDS; round++) {
        List<String> order = new ArrayList<>(Arrays.asList(ENGINES));
        if (round % 2 == 0) {
          java.util.Collections.reverse(order);
        }
        for (String e : order) {
          Run r = randomRead(util, e, round, bucketCache(servers.get(e)));
          runs.add(r);
          System.out.printf("PE randomRead round %d %s: %.0f ops/s, p50 %.0f us, p99 %.0f us,"
              + " L2 hit ratio %.4f, L2 blocks %d%n", round, e, r.opsPerSecond,
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

  /**
   * Reads every block of the engine's table into its RegionServer's L2, waits for the writers
   * to drain, then runs an unmeasured randomRead of a quarter of a measured run's requests.
   */
  private static void warm(HBaseTestingUtility util, String engine, HRegionServer rs)
      throws Exception {
    BucketCache l2 = bucketCache(rs);
    if (!engineName(l2).equals(expectedEngineClass(engine))) {
      throw new IllegalStateException(engine + " runs on " + engineName(l2));
    }
    try (Table table = util.getConnection().getTable(table(engine));
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
    float warmRate = Float.parseFloat(SAMPLE_RATE) / 4;
    PerformanceEvaluationClients.run(util.getConfiguration(), "--nomapred",
        "--table=" + table(engine), "--rows=" + ROWS / CLIENTS, "--sampleRate=" + warmRate,
        "randomRead", Integer.toString(CLIENTS));
  }

  /** One measured randomRead of the engine's table. */
  private static Run randomRead(HBaseTestingUtility util, String engine, int round,
      BucketCache l2) throws Exception {
    Run run = new Run(engine, round);
    run.l2Blocks = l2.getBlockCount();
    long hits = l2.getStats().getHitCount();
    long misses = l2.getStats().getMissCount();
    List<PerformanceEvaluationClients.Client> clients =
        PerformanceEvaluationClients.run(util.getConfiguration(), "--nomapred",
            "--table=" + table(engine), "--rows=" + ROWS / CLIENTS, "--sampleRate=" + SAMPLE_RATE,
            "randomRead", Integer.toString(CLIENTS));
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

  private static int storeFiles(HBaseTestingUtility util, TableName t) {
    int n = 0;
    for (HRegion r : util.getMiniHBaseCluster().getRegions(t)) {
      for (HStore s : r.getStores()) {
        n += s.getStorefilesCount();
      }
    }
    return n;
  }

  private static long tableBytes(HBaseTestingUtility util, TableName t) {
    long n = 0;
    for (HRegion r : util.getMiniHBaseCluster().getRegions(t)) {
      for (HStore s : r.getStores()) {
        n += s.getStorefilesSize();
      }
    }
    return n;
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  /** The median of the rounds' values of one engine. */
  private static double median(List<Run> runs, String engine,
      java.util.function.ToDoubleFunction<Run> f) {
    return median(runs.stream().filter(r -> r.engine.equals(engine)).mapToDouble(f).toArray());
  }

  /** The median over rounds of the engine's throughput divided by offheap's in the same round. */
  private static double medianRatioToOffheap(List<Run> runs, String engine) {
    List<Double> ratios = new ArrayList<>();
    for (Run r : runs) {
      if (r.engine.equals(engine)) {
        for (Run o : runs) {
          if (o.round == r.round && o.engine.equals(ENGINES[0])) {
            ratios.add(r.opsPerSecond / o.opsPerSecond);
          }
        }
      }
    }
    return median(ratios.stream().mapToDouble(Double::doubleValue).toArray());
  }

  private static String report(List<Run> runs, String setup, File throughputPng,
      File latencyPng) throws Exception {
    ResultTable table = new ResultTable("engine", "randomRead ops/s (median)", "min - max",
        "vs offheap (median of rounds)", "p50 us", "p95 us", "p99 us", "p99.9 us", "mean us",
        "L2 hit ratio");
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
          ResultTable.num(medianRatioToOffheap(runs, e), 3) + "x", ResultTable.num(pct[0], 0),
          ResultTable.num(pct[1], 0), ResultTable.num(pct[2], 0), ResultTable.num(pct[3], 0),
          ResultTable.num(median(runs, e, Run::mean), 0),
          ResultTable.num(runs.stream().filter(r -> r.engine.equals(e))
              .mapToDouble(r -> r.l2HitRatio).min().orElse(0), 4));
      tput[i++] = ops;
      latency.put(e, pct);
    }
    throughput.put("randomRead requests/s (median of " + ROUNDS + " rounds)", tput);
    Charts.bar(throughputPng, "PerformanceEvaluation randomRead, " + CLIENTS + " clients",
        "requests/s", Arrays.asList(ENGINES), throughput);
    Charts.bar(latencyPng, "PerformanceEvaluation randomRead latency, " + CLIENTS + " clients",
        "microseconds (median of rounds)", Arrays.asList("p50", "p95", "p99", "p99.9"), latency);

    ResultTable each = new ResultTable("round", "engine", "ops/s", "requests", "p50 us",
        "p99 us", "L2 hit ratio", "L2 blocks");
    for (Run r : runs) {
      each.row(r.round, r.engine, String.format("%,.0f", r.opsPerSecond), r.ops,
          ResultTable.num(r.percentile(0.50), 0), ResultTable.num(r.percentile(0.99), 0),
          ResultTable.num(r.l2HitRatio, 4), r.l2Blocks);
    }
    return "### PerformanceEvaluation randomRead (" + CLIENTS + " clients, --nomapred)\n\n"
        + "Measured on " + Runtime.getRuntime().availableProcessors() + " cores, "
        + System.getProperty("java.vm.name") + " " + System.getProperty("java.version")
        + ", cache files in " + SCRATCH + ". " + setup + ". " + ROUNDS + " rounds, engines in"
        + " alternating order, --sampleRate=" + SAMPLE_RATE + " of each table's " + ROWS
        + " rows per run; the L2 hit ratio column is the lowest of the rounds.\n\n"
        + table.toMarkdown() + "\nEach run:\n\n" + each.toMarkdown();
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
