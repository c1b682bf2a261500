package dev.forkset.hbase.memstore.bench;

import dev.forkset.bench.Charts;
import dev.forkset.bench.ResultTable;
import dev.forkset.childjvm.Jdk;
import dev.forkset.hbase21.Hbase21Cluster;
import dev.forkset.hbase21.ServerJar;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The field report's measurement with HBase's own tool, on JDK 8: single-row autoflush puts
 * ({@code PerformanceEvaluation randomWrite --nomapred --autoFlush=true --latency}, 100-byte
 * values as in the report) against an HBase 2.1.2 minicluster with 256 MB memstore flushes, for
 * the stock jar, the custom jar, and the custom jar with CompactingMemStore BASIC, one after the
 * other in one run. Each cluster and PE run in JVMs of their own on JDK 8 (harness:
 * {@code hbase21}); beside the put latencies, every flush's update-lock hold, timed by the same
 * probe in each cluster JVM.
 *
 * <p>Per variant: a fresh cluster; a PE warm-up run (not counted), a flush, then the measured PE
 * run. Percentiles are over every put of every PE thread (PE keeps them all: see
 * {@code PerformanceEvaluationMain}).
 *
 * <p>System properties: {@code bench.jdk8} (a JDK 8 home; the custom
 * hbase-server-2.1.2-fork.<n>.jar comes from the hbase21 module's class path), {@code bench.dir} (work and result folder), {@code bench.img}
 * (folder of the PNG), {@code bench.pe.threads}, {@code bench.pe.rows} (puts per thread, at
 * most 524,288 so that PE keeps every latency), {@code bench.pe.warmup.rows},
 * {@code bench.variants} (comma list of stock, custom, custom-basic).
 */
public final class PeLatencyBench {
  private static final String TABLE = "TestTable";
  private static final String FAMILY = "info0";
  private static final long FLUSH_SIZE = 256L << 20;
  private static final int VALUE_SIZE = 100;
  /** How full the memstore is when the measured run starts (fraction of the flush size). */
  private static final double PREFILL = 0.95;

  private PeLatencyBench() {}

  /** One cluster configuration. */
  enum Variant {
    STOCK("stock", "stock 2.1.2", ServerJar.STOCK, false),
    CUSTOM("custom", "custom 2.1.2", ServerJar.CUSTOM, false),
    CUSTOM_BASIC("custom-basic", "custom 2.1.2, BASIC", ServerJar.CUSTOM, true);

    final String id;
    final String label;
    final ServerJar jar;
    final boolean basic;

    Variant(String id, String label, ServerJar jar, boolean basic) {
      this.id = id;
      this.label = label;
      this.jar = jar;
      this.basic = basic;
    }
  }

  /** What one variant measured. */
  static final class Result {
    final Variant variant;
    Map<String, String> pe;
    long prefilledCells;
    String memstore;
    String javaVersion;
    long[] holdNanos = new long[0];
    long[] waitNanos = new long[0];
    long[] flushedBytes = new long[0];
    /** Stop-the-world pauses of the cluster JVM during the measured run, ms, from its GC log. */
    double[] pausesMs = new double[0];
    /** The custom jar's RegionServer metrics over the measured run; null on the stock jar. */
    RegionServerLockMetrics metric;

    Result(Variant variant) {
      this.variant = variant;
    }

    double ms(String key) {
      return Long.parseLong(pe.get(key)) / 1000.0;
    }
  }

  public static void main(String[] args) throws Exception {
    Jdk jdk8 = Jdk.at(Paths.get(required("bench.jdk8")));
    if (!Files.isExecutable(jdk8.java())) {
      throw new IllegalStateException("No JDK 8 at bench.jdk8=" + jdk8 + ": run .ci/install-jdk8"
          + " or pass -Dforkset.jdk8.home=<a JDK 8>");
    }
    Path dir = Paths.get(required("bench.dir"));
    Path img = Paths.get(required("bench.img"));
    int threads = Integer.getInteger("bench.pe.threads", 16);
    int rows = Integer.getInteger("bench.pe.rows", 90_000);
    int warmupRows = Integer.getInteger("bench.pe.warmup.rows", 5_000);
    List<Result> results = new ArrayList<>();
    for (String id : System.getProperty("bench.variants", "stock,custom,custom-basic")
        .split(",")) {
      Variant v = variant(id.trim());
      results.add(run(v, jdk8, dir.resolve("pe-" + v.id), threads, rows,
          warmupRows));
    }
    report(results, threads, rows, dir, img);
  }

  private static String required(String key) {
    String v = System.getProperty(key);
    if (v == null || v.isEmpty()) {
      throw new IllegalArgumentException("System property " + key + " is not set: run the"
          + " benchmark through the bench profile (docs/hbase-memstore-fix.md)");
    }
    return v;
  }

  private static Variant variant(String id) {
    for (Variant v : Variant.values()) {
      if (v.id.equals(id)) {
        return v;
      }
    }
    throw new IllegalArgumentException("bench.variants: unknown variant '" + id + "'. Known: "
        + "stock, custom, custom-basic");
  }

  private static Result run(Variant v, Jdk jdk8, Path work,
      int threads, int rows, int warmupRows) throws Exception {
    Hbase21Cluster.Builder b = Hbase21Cluster.builder(jdk8, work).heap("3g")
        // The field report's RegionServer settings (256 MB flushes).
        .site("hbase.hregion.memstore.flush.size", Long.toString(FLUSH_SIZE))
        .site("hbase.hregion.memstore.block.multiplier", "5")
        .site("hbase.regionserver.global.memstore.size", "0.4")
        .site("hbase.regionserver.global.memstore.size.lower.limit", "0.625")
        // One region throughout: a split would move the load to regions without the probe.
        .site("hbase.regionserver.region.split.policy",
            "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy");
    if (v.jar == ServerJar.CUSTOM) {
      // No memstore setting: the custom jar counts cells for every memstore type by default.
      b.custom();
    }
    if (v.basic) {
      // As the field report set it: for every table, in hbase-site.xml.
      b.site("hbase.hregion.compacting.memstore.type", "BASIC");
    }
    Result r = new Result(v);
    try (Hbase21Cluster cluster = b.start()) {
      r.javaVersion = cluster.info().get("java.version");
      // The table exists before PE runs, with no in-memory compaction of its own, so the
      // server's setting applies (PE would write NONE into the family it creates). PE keeps
      // an existing table whose family count, split policy and replicas match.
      r.memstore = cluster.createTable(TABLE, "default", FAMILY).get("memstore");
      String region = cluster.store(TABLE).get("region");
      // PE gives each thread eight histograms of 524,288 longs (32 MB).
      String clientHeap = (512 + 40 * threads) + "m";
      cluster.performanceEvaluation("pe-warmup", clientHeap, peArgs(threads, warmupRows),
          900_000);
      cluster.flush(TABLE);
      // A flush every ~1.1M puts at 256 MB is a few minutes of this machine's put rate: start
      // the measured run with the memstore nearly full (the same cells, loaded fast), so that
      // it sees two flushes rather than one.
      Map<String, String> fill = cluster.fillLikePe(TABLE, PREFILL, VALUE_SIZE, threads * rows);
      r.prefilledCells = Long.parseLong(fill.get("cells"));
      // The metric first (its start waits out the JMX cache, letting in-memory flushes that
      // the fill set off finish), then the probe's holds are reset: both count from here.
      RegionServerLockMetrics metric = new RegionServerLockMetrics(cluster);
      metric.start();
      cluster.holds(TABLE);
      int gcLinesBefore = lines(cluster.gcLogFile()).size();
      System.out.printf(Locale.ROOT, "%s: measuring %,d puts (%d threads)%n", v.label,
          (long) threads * rows, threads);
      Hbase21Cluster.PeResult pe;
      try {
        pe = cluster.performanceEvaluation("pe-run", clientHeap, peArgs(threads, rows),
            3_600_000);
      } finally {
        metric.stop();
      }
      r.metric = metric.present() ? metric : null;
      r.pe = pe.values;
      Map<String, String> store = cluster.store(TABLE);
      if (!region.equals(store.get("region")) || !"true".equals(store.get("probed"))) {
        throw new IllegalStateException("PE recreated " + TABLE + " or the probe is gone: "
            + store);
      }
      r.pausesMs = pauses(lines(cluster.gcLogFile()), gcLinesBefore);
      Map<String, String> holds = cluster.holds(TABLE);
      r.holdNanos = longs(holds.get("holdNanos"));
      r.waitNanos = longs(holds.get("waitNanos"));
      r.flushedBytes = longs(holds.get("dataSize"));
      System.out.printf(Locale.ROOT, "%s: %s; holds (ms) %s%n", v.label, r.pe,
          Arrays.toString(Arrays.stream(r.holdNanos).mapToObj(h -> ms(h)).toArray()));
    }
    return r;
  }

  /**
   * The custom jar's flush updates-lock histograms (RegionServer metrics in microseconds, kept
   * here in ms; every region of the RegionServer), followed over a run. HBase resets a histogram's percentiles, min and max each
   * time its source is snapshotted (a JMX read after the cache expired, or a metrics period with
   * a sink), so this reads the bean every 2 s and keeps the largest max it saw; _num_ops counts
   * from the start of the RegionServer.
   *
   * <p>The flushes before the run (warm-up, fill) must not reach the maxima. Hadoop's
   * MetricsSourceAdapter serves JMX reads from a cache that lives one metrics period (10 s by
   * default; the cluster sets none), and only a read past it snapshots, and so resets, the
   * histograms. {@link #start()} therefore reads, waits out the cache, reads again (a snapshot
   * that takes in every flush so far, as nothing writes meanwhile) and only then starts keeping
   * maxima.
   */
  static final class RegionServerLockMetrics {
    private static final String BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Server";
    /** Hadoop metrics2's default period, which is also how long a JMX read is cached. */
    private static final long JMX_CACHE_MILLIS = 10_000;
    private final Hbase21Cluster cluster;
    private final Thread poller;
    private volatile boolean running = true;
    private long opsBefore = -1;
    private long opsAfter = -1;
    private double holdMax;
    private double waitMax;
    private IOException failure;

    RegionServerLockMetrics(Hbase21Cluster cluster) {
      this.cluster = cluster;
      this.poller = new Thread(() -> {
        while (running) {
          poll();
          try {
            Thread.sleep(2_000);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "rs-metrics-poller");
      this.poller.setDaemon(true);
    }

    void start() throws IOException, InterruptedException {
      poll();
      Thread.sleep(JMX_CACHE_MILLIS + 2_000);
      poll();
      synchronized (this) {
        if (failure != null) {
          throw failure;
        }
        holdMax = 0;
        waitMax = 0;
        opsBefore = opsAfter;
      }
      poller.start();
    }

    void stop() throws IOException, InterruptedException {
      running = false;
      poller.interrupt();
      poller.join();
      poll();
      if (failure != null) {
        throw failure;
      }
    }

    boolean present() {
      return opsBefore >= 0;
    }

    long flushes() {
      return opsAfter - opsBefore;
    }

    private synchronized void poll() {
      try {
        Map<String, String> m = cluster.jmx(BEAN);
        for (Map.Entry<String, String> e : m.entrySet()) {
          String k = e.getKey().toLowerCase(Locale.ROOT);
          double v = Double.parseDouble(e.getValue());
          if (k.endsWith(":flushupdateslockholdtime_num_ops")) {
            opsAfter = (long) v;
          } else if (k.endsWith(":flushupdateslockholdtime_max")) {
            holdMax = Math.max(holdMax, v / 1000.0);
          } else if (k.endsWith(":flushupdateslockwaittime_max")) {
            waitMax = Math.max(waitMax, v / 1000.0);
          }
        }
      } catch (IOException e) {
        failure = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static List<String> lines(Path file) throws IOException {
    return Files.readAllLines(file, StandardCharsets.ISO_8859_1);
  }

  /** JDK 8 GC log: "Total time for which application threads were stopped: 0.0123 seconds". */
  static double[] pauses(List<String> gcLog, int from) {
    Pattern p = Pattern.compile("threads were stopped: ([0-9.]+) seconds");
    List<Double> out = new ArrayList<>();
    for (String line : gcLog.subList(Math.min(from, gcLog.size()), gcLog.size())) {
      Matcher m = p.matcher(line);
      if (m.find()) {
        out.add(Double.parseDouble(m.group(1)) * 1000);
      }
    }
    return out.stream().mapToDouble(Double::doubleValue).toArray();
  }

  private static List<String> peArgs(int threads, int rows) {
    return Arrays.asList("--nomapred", "--autoFlush=true", "--latency", "--valueSize=" + VALUE_SIZE,
        "--rows=" + rows, "randomWrite", Integer.toString(threads));
  }

  private static long[] longs(String csv) {
    if (csv == null || csv.isEmpty()) {
      return new long[0];
    }
    return Arrays.stream(csv.split(",")).mapToLong(Long::parseLong).toArray();
  }

  private static String ms(long nanos) {
    return ResultTable.num(nanos / 1e6, 2);
  }

  private static void report(List<Result> results, int threads, int rows, Path dir, Path img)
      throws IOException {
    ResultTable t = new ResultTable("server", "memstore", "puts", "puts/s", "P50 ms", "P99 ms",
        "P99.9 ms", "P99.99 ms", "P99.999 ms", "max ms", "update-lock holds",
        "hold ms, median / max", "memstore data MB at the longest hold", "lock wait max ms",
        "RegionServer metric: holds, hold max ms, wait max ms", "GC pauses over 100 ms (longest ms)");
    Map<String, double[]> chart = new LinkedHashMap<>();
    for (Result r : results) {
      int longest = 0;
      for (int i = 1; i < r.holdNanos.length; i++) {
        longest = r.holdNanos[i] > r.holdNanos[longest] ? i : longest;
      }
      long[] holds = r.holdNanos.clone();
      Arrays.sort(holds);
      long longPauses = Arrays.stream(r.pausesMs).filter(p -> p > 100).count();
      double maxPause = Arrays.stream(r.pausesMs).max().orElse(0);
      t.row(r.variant.label, r.memstore.substring(r.memstore.lastIndexOf('.') + 1),
          String.format(Locale.ROOT, "%,d", Long.parseLong(r.pe.get("puts"))),
          String.format(Locale.ROOT, "%,.0f", Long.parseLong(r.pe.get("puts"))
              / Double.parseDouble(r.pe.get("seconds"))),
          ResultTable.num(r.ms("p50"), 2), ResultTable.num(r.ms("p99"), 1),
          ResultTable.num(r.ms("p999"), 1), ResultTable.num(r.ms("p9999"), 1),
          ResultTable.num(r.ms("p99999"), 0), ResultTable.num(r.ms("max"), 0), holds.length,
          holds.length == 0 ? "-" : ms(holds[(holds.length - 1) / 2]) + " / "
              + ms(holds[holds.length - 1]),
          holds.length == 0 ? "-" : ResultTable.num(r.flushedBytes[longest] / 1048576.0, 0),
          r.waitNanos.length == 0 ? "-" : ms(Arrays.stream(r.waitNanos).max().getAsLong()),
          r.metric == null ? "- (stock)" : r.metric.flushes() + ", "
              + ResultTable.num(r.metric.holdMax, 0) + ", " + ResultTable.num(r.metric.waitMax, 0),
          longPauses + " (" + ResultTable.num(maxPause, 0) + ")");
      chart.put(r.variant.label, new double[] {r.ms("p99"), r.ms("p999"), r.ms("p9999"),
          holds.length == 0 ? 0 : holds[holds.length - 1] / 1e6});
    }
    String header = String.format(Locale.ROOT, "PerformanceEvaluation randomWrite --nomapred"
        + " --autoFlush=true --latency --valueSize=100 --rows=%,d, %d client threads (%,d puts"
        + " per server; before them a warm-up PE run, a flush, and the memstore filled to %.0f%%"
        + " of the flush size with the same kind of cells), 1 RegionServer minicluster (HDFS WAL)"
        + " with 256 MB memstore flushes, -Xmx3g G1, all JVMs on Java %s.%n%n", rows, threads,
        (long) rows * threads, PREFILL * 100, results.get(0).javaVersion);
    String md = header + t.toMarkdown();
    Files.createDirectories(dir);
    Files.write(dir.resolve("pe-latency.md"), md.getBytes(StandardCharsets.UTF_8));
    System.out.print(md);
    Charts.bar(new File(img.toFile(), "memstore-pe-latency-jdk8.png"),
        "HBase 2.1.2 put latency (PerformanceEvaluation, JDK 8) and flush lock hold",
        "milliseconds", Arrays.asList("put P99", "put P99.9", "put P99.99",
            "max flush lock hold"), chart);
  }
}
