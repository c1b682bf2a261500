package dev.forkset.it.hazelcast;

import com.hazelcast.client.impl.clientside.HazelcastClientInstanceImpl;
import com.hazelcast.client.impl.clientside.HazelcastClientProxy;
import com.hazelcast.client.impl.protocol.ClientMessage;
import com.hazelcast.client.impl.protocol.codec.MCUpdateMapConfigCodec;
import com.hazelcast.client.impl.spi.impl.ClientInvocation;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.forkset.bench.Charts;
import dev.forkset.bench.ResultTable;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.MemberProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.junit.Test;

/**
 * Benchmark, not part of the test command: its sources are compiled only with {@code -Pbench}
 * and its name does not end in IT. Run it with {@code ./mvnw -B -Pbench verify -pl it}, one part
 * with {@code -Dbench.only=cost}, {@code throughput}, {@code cluster}, {@code histogram},
 * {@code loss}, {@code configupdate}, {@code chunked} or {@code chunked5m}.
 * Stock and custom in one run:
 * <ol>
 * <li>cost: reported map cost against the heap the entries really occupy (heap after full GC
 *     with the map filled minus with it empty) per value size and GC;
 * <li>throughput: puts per second under eviction and LRU accuracy on one member at sample counts
 *     15, 64 and 1000;
 * <li>cluster: puts per second under eviction on three members with backups at sample 64, from
 *     one client thread and from four, stock and custom alternating over three rounds;
 * <li>histogram: evicted keys per batch of consecutive keys after sequential puts (the field
 *     report's check-eviction charts);
 * <li>loss: a member of three lost by kill -9 (below the limit, while evicting) and by graceful
 *     shutdown of a full member: the runs {@code MemberLossIT} asserts on custom members, here
 *     on stock and custom members side by side;
 * <li>configupdate: puts per second under eviction before and after a map-config update
 *     (Management Center's {@code MC.UpdateMapConfig}, the same limit), one member;
 * <li>chunked: chunked stored copies (issue 21, {@link ChunkedValuesBench}): entries held with
 *     one array per value and in pieces, per collector and value size, and seed scenario 3's
 *     humongous regions;
 * <li>chunked5m: puts/s, gets/s, member allocation and GC time per operation at 5 MB, stock vs
 *     the fork jar with chunking off and on ({@link ChunkedValuesBench}).
 * </ol>
 * Writes it/target/bench/hazelcast-eviction.md and docs/img/hazelcast-*.png, the charts drawn by
 * bench-support ({@link Charts}), the tables by {@link ResultTable}.
 */
public class EvictionBench {
  private static final long MB = 1 << 20;
  private static final long[] SIZES = {100, 10_000, MB, 5 * MB, 16 * MB, 64 * MB};
  /** Values of {@code -Dbench.only}; unset or empty runs every part. */
  private static final List<String> PARTS =
      Arrays.asList("cost", "throughput", "cluster", "histogram", "loss", "configupdate",
          "chunked", "chunked5m");
  /** Histogram: sequential keys put into the map. */
  private static final int HIST_KEYS = 50_000;
  /** Histogram: batches of consecutive keys counted (HIST_KEYS / HIST_BATCHES keys each). */
  private static final int HIST_BATCHES = 50;
  /** Histogram: value size in bytes. */
  private static final int HIST_VALUE = 1000;
  /** Histogram: the map's USED_HEAP_SIZE limit in MB (holds roughly a quarter of the keys). */
  private static final int HIST_LIMIT_MB = 16;
  /** Cluster part: rounds of (stock, custom) runs; the order alternates between rounds. */
  private static final int CLUSTER_ROUNDS = 3;
  /** Cluster part: puts timed per phase, after {@link #CLUSTER_WARM} puts that fill the map. */
  private static final int CLUSTER_PUTS = 60_000;
  private static final int CLUSTER_WARM = 30_000;
  private static final int CLUSTER_SAMPLE = 64;
  private final StringBuilder report = new StringBuilder();

  @Test
  public void run() throws Exception {
    Path out = Paths.get("target/bench");
    Files.createDirectories(out);
    Path img = Paths.get(System.getProperty("forkset.docs.img", "../docs/img"));
    Files.createDirectories(img);
    String only = System.getProperty("bench.only", "").trim();
    if (!only.isEmpty() && !PARTS.contains(only)) {
      throw new IllegalArgumentException("-Dbench.only=" + only + " is not a part of this benchmark."
          + " Accepted values: " + String.join(", ", PARTS) + " (or leave it unset to run all).");
    }
    if (only.isEmpty() || "cost".equals(only)) {
      costs(img);
    }
    if (only.isEmpty() || "throughput".equals(only)) {
      throughput(img);
    }
    if (only.isEmpty() || "cluster".equals(only)) {
      cluster(img);
    }
    if (only.isEmpty() || "histogram".equals(only)) {
      histogram(img);
    }
    if (only.isEmpty() || "loss".equals(only)) {
      loss();
    }
    if (only.isEmpty() || "configupdate".equals(only)) {
      configUpdate();
    }
    if (only.isEmpty() || "chunked".equals(only)) {
      new ChunkedValuesBench(report).entriesHeld(img);
    }
    if (only.isEmpty() || "chunked5m".equals(only)) {
      new ChunkedValuesBench(report).throughput(img);
    }
    String name = only.isEmpty() ? "hazelcast-eviction.md" : "hazelcast-eviction-" + only + ".md";
    Files.write(out.resolve(name), report.toString().getBytes(StandardCharsets.UTF_8));
    System.out.println(report);
  }

  /** MemberLossIT's runs, stock members (reported) beside custom ones (asserted there). */
  private void loss() throws Exception {
    report.append("\n## Losing a member of three (backup-count 1)\n\n");
    ResultTable table = new ResultTable("run", "stock", "custom")
        .row("kill -9 below the limit (1 KB to 16 MB values, 64 MB modelled)",
            MemberLossIT.killRun(Flavor.STOCK, false), MemberLossIT.killRun(Flavor.CUSTOM, true))
        .row("kill -9 while evicting (16 MB limit, backups follow the owner)",
            MemberLossIT.killUnderEvictionRun(Flavor.STOCK, false),
            MemberLossIT.killUnderEvictionRun(Flavor.CUSTOM, true))
        .row("graceful shutdown of a full member (100 MB limit, 10 KB to 1 MB values)",
            MemberLossIT.shutdownFullRun(Flavor.STOCK, false),
            MemberLossIT.shutdownFullRun(Flavor.CUSTOM, true));
    report.append(table.toMarkdown());
  }

  /** Config-update part: puts timed per phase, after {@link #UPDATE_FILL} that fill the map. */
  private static final int UPDATE_PUTS = 35_000;
  private static final int UPDATE_FILL = 20_000;
  private static final int UPDATE_ROUNDS = 3;
  private static final int UPDATE_THREADS = 4;

  /**
   * A map-config update gives the map a new evictor ({@code MapContainer#initEvictor}); the puts
   * per second before and after it, on stock and custom members, {@value #UPDATE_ROUNDS} rounds
   * with the order alternating.
   */
  private void configUpdate() throws Exception {
    report.append(String.format("%n## Puts per second before and after a map-config update"
        + " (1 member, 1 KB values, USED_HEAP_SIZE 8 MB, %d client threads, %d puts per phase"
        + " after %d that fill the map; the update is Management Center's MC.UpdateMapConfig"
        + " with the same limit)%n%n", UPDATE_THREADS, UPDATE_PUTS, UPDATE_FILL));
    ResultTable table = new ResultTable("round", "stock before", "stock after",
        "stock after/before", "custom before", "custom after", "custom after/before");
    for (int r = 0; r < UPDATE_ROUNDS; r++) {
      Flavor first = r % 2 == 0 ? Flavor.STOCK : Flavor.CUSTOM;
      double[] a = configUpdateRun(first, r);
      double[] b = configUpdateRun(first == Flavor.STOCK ? Flavor.CUSTOM : Flavor.STOCK, r);
      double[] s = first == Flavor.STOCK ? a : b;
      double[] c = first == Flavor.STOCK ? b : a;
      table.row(r + 1, ResultTable.num(s[0], 0), ResultTable.num(s[1], 0),
          ResultTable.num(s[1] / s[0], 2), ResultTable.num(c[0], 0), ResultTable.num(c[1], 0),
          ResultTable.num(c[1] / c[0], 2));
    }
    report.append(table.toMarkdown());
  }

  /** {puts/s before the update, puts/s after it}, both under eviction. */
  private double[] configUpdateRun(Flavor flavor, int round) throws Exception {
    String config = EvictionMaps.usedHeapMap("upd", 8, 0, "");
    try (HazelcastCluster c = HazelcastCluster.builder("bench-update-"
        + flavor.name().toLowerCase() + "-" + round).members(1).flavor(flavor).heap("256m")
        .jvmArgs("-XX:+UseG1GC").config(config).start()) {
      HazelcastInstance client = c.client();
      IMap<Integer, byte[]> map = client.getMap("upd");
      byte[] v = new byte[1000];
      timedSets(map, 0, UPDATE_FILL, v);
      double before = timedSets(map, UPDATE_FILL, UPDATE_PUTS, v);
      // What Management Center sends; the one member runs UpdateMapConfigOperation.
      ClientMessage update = MCUpdateMapConfigCodec.encodeRequest("upd", 0, 0,
          EvictionPolicy.LRU.getId(), false, 8, MaxSizePolicy.USED_HEAP_SIZE.getId(), null);
      HazelcastClientInstanceImpl impl = ((HazelcastClientProxy) client).client;
      new ClientInvocation(impl, update, null).invoke().get();
      double after = timedSets(map, UPDATE_FILL + UPDATE_PUTS, UPDATE_PUTS, v);
      c.assertAllAlive();
      System.out.printf("[bench update] round %d %s: %.0f puts/s before, %.0f after%n",
          round + 1, flavor, before, after);
      return new double[] {before, after};
    }
  }

  /**
   * Sets keys {@code from} to {@code from + count - 1} from {@value #UPDATE_THREADS} client
   * threads (the member's CPU, not the round trip, bounds the rate); returns the sets per second.
   */
  private static double timedSets(IMap<Integer, byte[]> map, int from, int count, byte[] v)
      throws Exception {
    AtomicLong next = new AtomicLong(from);
    long start = System.nanoTime();
    onThreads(UPDATE_THREADS, t -> {
      for (long k = next.getAndIncrement(); k < from + count; k = next.getAndIncrement()) {
        map.set((int) k, v);
      }
    });
    return count / ((System.nanoTime() - start) / 1e9);
  }

  /** What one of {@link #onThreads}'s threads runs, given its index. */
  private interface Worker {
    void run(int thread) throws Exception;
  }

  /** Runs {@code worker} on {@code threads} threads and waits for them; throws if one failed. */
  private static void onThreads(int threads, Worker worker) throws InterruptedException {
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      final int thread = t;
      Thread w = new Thread(() -> {
        try {
          worker.run(thread);
        } catch (Throwable e) {
          errors.add(e);
        }
      });
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    if (!errors.isEmpty()) {
      throw new AssertionError("writes failed: " + errors);
    }
  }

  private void costs(Path img) throws Exception {
    report.append("## Reported cost vs real heap\n\n")
        .append("error = (reported - real) / real; real = heap after full GC with the map filled"
            + " minus with it empty, same member.\n\n");
    ResultTable table = new ResultTable("GC", "value size", "entries", "stock real MB",
        "stock reported MB", "stock error", "custom real MB", "custom reported MB", "custom error");
    String[][] gcs = {
        {"G1 1 MB regions", "g1-1m", "-XX:+UseG1GC", "-XX:G1HeapRegionSize=1m"},
        {"G1 4 MB regions", "g1-4m", "-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m"},
        {"G1 32 MB regions", "g1-32m", "-XX:+UseG1GC", "-XX:G1HeapRegionSize=32m"},
        {"ZGC (JDK 17)", "zgc", "-XX:+UseZGC"},
    };
    List<String> sizes = new ArrayList<>();
    for (long size : SIZES) {
      sizes.add(human(size));
    }
    for (String[] gc : gcs) {
      String[] flags = Arrays.copyOfRange(gc, 2, gc.length);
      double[] stockError = new double[SIZES.length];
      double[] customError = new double[SIZES.length];
      Map<Long, long[]> stock = costRun(Flavor.STOCK, gc[1], flags);
      Map<Long, long[]> custom = costRun(Flavor.CUSTOM, gc[1], flags);
      for (int i = 0; i < SIZES.length; i++) {
        long[] s = stock.get(SIZES[i]);
        long[] c = custom.get(SIZES[i]);
        stockError[i] = 100.0 * (s[1] - s[0]) / s[0];
        customError[i] = 100.0 * (c[1] - c[0]) / c[0];
        table.row(gc[0], human(SIZES[i]), s[2], mb(s[0]), mb(s[1]), pct(stockError[i]), mb(c[0]),
            mb(c[1]), pct(customError[i]));
      }
      Map<String, double[]> series = new LinkedHashMap<>();
      series.put("stock", stockError);
      series.put("custom", customError);
      Charts.bar(img.resolve("hazelcast-cost-error-" + gc[1] + ".png").toFile(),
          "Reported map cost vs real heap, " + gc[0], "error (%)", sizes, series);
    }
    report.append(table.toMarkdown());
  }

  private void throughput(Path img) throws Exception {
    report.append("\n## Puts per second under eviction and LRU accuracy (1 member, 1 KB values,"
        + " 8 MB limit, 60000 sequential keys)\n\n");
    ResultTable table = new ResultTable("sample count", "stock puts/s", "custom puts/s",
        "custom/stock", "stock accuracy", "custom accuracy");
    int[] samples = {15, 64, 1000};
    List<String> categories = new ArrayList<>();
    double[] stockRate = new double[samples.length];
    double[] customRate = new double[samples.length];
    for (int i = 0; i < samples.length; i++) {
      double[] s = throughputRun(Flavor.STOCK, samples[i]);
      double[] c = throughputRun(Flavor.CUSTOM, samples[i]);
      stockRate[i] = s[0];
      customRate[i] = c[0];
      categories.add("sample " + samples[i]);
      table.row(samples[i], ResultTable.num(s[0], 0), ResultTable.num(c[0], 0),
          ResultTable.num(c[0] / s[0], 2), percent(s[1] * 100),
          percent(c[1] * 100));
    }
    report.append(table.toMarkdown());
    Map<String, double[]> series = new LinkedHashMap<>();
    series.put("stock", stockRate);
    series.put("custom", customRate);
    Charts.bar(img.resolve("hazelcast-throughput.png").toFile(),
        "Puts/s under eviction, 1 member, 1 KB values", "puts/s", categories, series);
  }

  /**
   * Three members, backup-count 1, USED_HEAP_SIZE 8 MB per member, 1 KB values, sample 64 (stock
   * {@code sample.count}, the module's {@code pool.sample.count}): puts/s once the map evicts,
   * from one client thread (sequential keys, the field report's setting) and from four (member
   * CPU the bottleneck). Stock and custom alternate over {@value #CLUSTER_ROUNDS} rounds; the
   * table gives every round and the medians.
   */
  private void cluster(Path img) throws Exception {
    double[][] stock = new double[2][CLUSTER_ROUNDS];
    double[][] custom = new double[2][CLUSTER_ROUNDS];
    for (int r = 0; r < CLUSTER_ROUNDS; r++) {
      Flavor first = r % 2 == 0 ? Flavor.STOCK : Flavor.CUSTOM;
      Flavor second = first == Flavor.STOCK ? Flavor.CUSTOM : Flavor.STOCK;
      double[] a = clusterRun(first, r);
      double[] b = clusterRun(second, r);
      double[] s = first == Flavor.STOCK ? a : b;
      double[] c = first == Flavor.STOCK ? b : a;
      for (int k = 0; k < 2; k++) {
        stock[k][r] = s[k];
        custom[k][r] = c[k];
      }
    }
    report.append(String.format("%n## Puts per second under eviction, 3 members (backup-count 1,"
        + " USED_HEAP_SIZE 8 MB per member, 1 KB values, sample %d)%n%n", CLUSTER_SAMPLE))
        .append(String.format("Each run: %d puts to fill, then %d timed puts; stock and custom"
            + " alternate, the first of each round alternating too.%n%n", CLUSTER_WARM,
            CLUSTER_PUTS));
    ResultTable table = new ResultTable("client threads", "round", "stock puts/s",
        "custom puts/s", "custom/stock");
    String[] threads = {"1", "4"};
    List<String> categories = new ArrayList<>();
    double[] stockMedian = new double[2];
    double[] customMedian = new double[2];
    for (int k = 0; k < 2; k++) {
      for (int r = 0; r < CLUSTER_ROUNDS; r++) {
        table.row(threads[k], r + 1, ResultTable.num(stock[k][r], 0),
            ResultTable.num(custom[k][r], 0), ResultTable.num(custom[k][r] / stock[k][r], 2));
      }
      stockMedian[k] = median(stock[k]);
      customMedian[k] = median(custom[k]);
      table.row(threads[k], "**median**", ResultTable.num(stockMedian[k], 0),
          ResultTable.num(customMedian[k], 0),
          "**" + ResultTable.num(customMedian[k] / stockMedian[k], 2) + "**");
      categories.add(threads[k] + (k == 0 ? " client thread" : " client threads"));
    }
    report.append(table.toMarkdown());
    Map<String, double[]> series = new LinkedHashMap<>();
    series.put("stock", stockMedian);
    series.put("custom", customMedian);
    Charts.bar(img.resolve("hazelcast-cluster-throughput.png").toFile(),
        "Puts/s under eviction, 3 members, backups, sample " + CLUSTER_SAMPLE + " (median of "
            + CLUSTER_ROUNDS + ")", "puts/s", categories, series);
    // LruAccuracyIT asserts the custom run alone; this sets it beside stock's.
    // 150,000 keys, about 14 times the map's capacity: long enough for the keys that tie with the
    // last evicted one (access times are whole seconds) to be few against the evicted count, as in
    // the field report's 3 million keys.
    LruAccuracyIT.Result lruStock = LruAccuracyIT.run(Flavor.STOCK, 150_000);
    LruAccuracyIT.Result lruCustom = LruAccuracyIT.run(Flavor.CUSTOM, 150_000);
    report.append(String.format("%n## LRU accuracy, 3 members (LruAccuracyIT's run: backup-count"
        + " 1, 8 MB per member, 1 KB values, sample 64, 150,000 sequential keys)%n%n"))
        .append(new ResultTable("", "stock", "custom")
            .row("accuracy (evicted / (last evicted index + 1))",
                percent(lruStock.accuracy * 100), percent(lruCustom.accuracy * 100))
            .row("evicted keys that no kept key precedes by over 1 s",
                percent(lruStock.inOrder * 100), percent(lruCustom.inOrder * 100))
            .row("evicted keys that under a quarter of the kept keys precede by over 1 s",
                percent(lruStock.withinQuarter * 100), percent(lruCustom.withinQuarter * 100))
            .row("most kept keys preceding one evicted key (share of the kept keys)",
                percent(lruStock.worst * 100), percent(lruCustom.worst * 100))
            .row("puts/s before eviction", ResultTable.num(lruStock.beforeEviction, 0),
                ResultTable.num(lruCustom.beforeEviction, 0))
            .row("puts/s under eviction", ResultTable.num(lruStock.underEviction, 0),
                ResultTable.num(lruCustom.underEviction, 0))
            .toMarkdown());
  }

  /** {puts/s from one client thread, puts/s from four}, both after the map started evicting. */
  private double[] clusterRun(Flavor flavor, int round) throws Exception {
    String config = EvictionMaps.usedHeapMap("tput", 8, 1, "");
    try (HazelcastCluster c = HazelcastCluster.builder("bench-cluster-"
        + flavor.name().toLowerCase() + "-" + round).members(3).flavor(flavor).heap("256m")
        .jvmArgs("-XX:+UseG1GC").config(config)
        .systemProperty("hazelcast.map.eviction.sample.count", String.valueOf(CLUSTER_SAMPLE))
        .systemProperty("hazelcast.map.eviction.pool.sample.count", String.valueOf(CLUSTER_SAMPLE))
        .start()) {
      byte[] v = new byte[1000];
      IMap<Integer, byte[]> warm = c.client().getMap("warm");
      for (int i = 0; i < 20_000; i++) {
        warm.put(i, v);
      }
      warm.destroy();
      double one = timedPuts(c.client().getMap("tput"), 1, v);
      c.client().getMap("tput").destroy();
      double four = timedPuts(c.client().getMap("tput"), 4, v);
      c.assertAllAlive();
      System.out.printf("[bench cluster] round %d %s: %.0f puts/s (1 thread), %.0f (4 threads)%n",
          round + 1, flavor, one, four);
      return new double[] {one, four};
    }
  }

  /**
   * {@code threads} client threads put sequential keys of their own: {@link #CLUSTER_WARM} puts
   * in all to fill the map, then {@link #CLUSTER_PUTS} timed ones; returns the timed puts/s.
   */
  private static double timedPuts(IMap<Integer, byte[]> map, int threads, byte[] v)
      throws Exception {
    AtomicLong done = new AtomicLong();
    long total = CLUSTER_WARM + CLUSTER_PUTS;
    long[] window = new long[2];
    onThreads(threads, t -> {
      int base = t * 10_000_000;
      for (int i = 0; ; i++) {
        long n = done.incrementAndGet();
        if (n > total) {
          return;
        }
        if (n == CLUSTER_WARM + 1) {
          window[0] = System.nanoTime();
        }
        map.put(base + i, v);
        if (n == total) {
          window[1] = System.nanoTime();
        }
      }
    });
    // The last put may finish after others started later ones: end at the last to finish.
    long end = Math.max(window[1], System.nanoTime());
    return CLUSTER_PUTS / ((end - window[0]) / 1e9);
  }

  private void histogram(Path img) throws Exception {
    int perBatch = HIST_KEYS / HIST_BATCHES;
    Histogram stock = histogramRun(Flavor.STOCK);
    Histogram custom = histogramRun(Flavor.CUSTOM);
    report.append(String.format("%n## Evicted keys per batch of %d consecutive keys (1 member, %d B"
        + " values, %d MB USED_HEAP_SIZE limit, LRU, %d sequential keys)%n%n", perBatch,
        HIST_VALUE, HIST_LIMIT_MB, HIST_KEYS))
        .append("Stock: `hazelcast.map.eviction.sample.count` default (15). Custom: `pool.sample.count` 64,"
            + " `pool.size` 4. Ideal LRU evicts the oldest batches entirely and none of the newest.\n\n");
    ResultTable summary = new ResultTable("", "stock", "custom")
        .row("keys evicted", stock.evicted + " of " + HIST_KEYS, custom.evicted + " of " + HIST_KEYS)
        .row("puts/s (keys sharing one LRU second)", ResultTable.num(stock.rate, 0),
            ResultTable.num(custom.rate, 0))
        .row("LRU precision: evicted keys among the oldest `evicted` keys",
            percent(stock.precision() * 100), percent(custom.precision() * 100))
        .row("accuracy (evicted / (last evicted index + 1))",
            percent(stock.accuracy() * 100), percent(custom.accuracy() * 100))
        .row("share of evictions in the oldest 20% of keys",
            percent(stock.share(0, HIST_KEYS / 5) * 100),
            percent(custom.share(0, HIST_KEYS / 5) * 100))
        .row("share of evictions in the newest 20% of keys",
            percent(stock.share(HIST_KEYS - HIST_KEYS / 5, HIST_KEYS) * 100),
            percent(custom.share(HIST_KEYS - HIST_KEYS / 5, HIST_KEYS) * 100))
        .row("batches fully evicted / with no eviction",
            stock.batches(perBatch) + " / " + stock.batches(0),
            custom.batches(perBatch) + " / " + custom.batches(0));
    report.append(summary.toMarkdown()).append('\n');
    ResultTable batches = new ResultTable("batch (keys)", "stock evicted", "custom evicted");
    double[] x = new double[HIST_BATCHES];
    double[] s = new double[HIST_BATCHES];
    double[] c = new double[HIST_BATCHES];
    for (int b = 0; b < HIST_BATCHES; b++) {
      batches.row((b * perBatch) + "-" + ((b + 1) * perBatch - 1), stock.perBatch[b],
          custom.perBatch[b]);
      x[b] = b * perBatch;
      s[b] = stock.perBatch[b];
      c[b] = custom.perBatch[b];
    }
    report.append(batches.toMarkdown());
    Map<String, double[]> series = new LinkedHashMap<>();
    series.put("stock", s);
    series.put("custom", c);
    Charts.lines(img.resolve("hazelcast-eviction-histogram.png").toFile(),
        "Evicted keys per batch of " + perBatch + " sequential keys (oldest first)",
        "first key of the batch", "evicted keys", x, series, false, false);
  }

  /** Which of the sequential keys were evicted, per key and per batch. */
  private static final class Histogram {
    final boolean[] evictedKey;
    final int[] perBatch;
    final int evicted;
    final double rate;

    Histogram(boolean[] evictedKey, double rate) {
      this.evictedKey = evictedKey;
      this.rate = rate;
      this.perBatch = new int[HIST_BATCHES];
      int n = 0;
      for (int i = 0; i < evictedKey.length; i++) {
        if (evictedKey[i]) {
          n++;
          perBatch[i / (evictedKey.length / HIST_BATCHES)]++;
        }
      }
      this.evicted = n;
    }

    /** Evicted keys in [from, to) over all evicted keys. */
    double share(int from, int to) {
      int n = 0;
      for (int i = from; i < to; i++) {
        n += evictedKey[i] ? 1 : 0;
      }
      return evicted == 0 ? 0 : n / (double) evicted;
    }

    /** Share of evicted keys that are among the {@code evicted} oldest keys (1.0 = exact LRU). */
    double precision() {
      return share(0, evicted);
    }

    /** The field report's metric: evicted count / (index of the last evicted key + 1). */
    double accuracy() {
      for (int i = evictedKey.length - 1; i >= 0; i--) {
        if (evictedKey[i]) {
          return evicted / (double) (i + 1);
        }
      }
      return 0;
    }

    /** Number of batches with exactly {@code count} evicted keys. */
    int batches(int count) {
      int n = 0;
      for (int c : perBatch) {
        n += c == count ? 1 : 0;
      }
      return n;
    }
  }

  private Histogram histogramRun(Flavor flavor) throws Exception {
    String config = EvictionMaps.usedHeapMap("hist", HIST_LIMIT_MB, 0, "");
    HazelcastCluster.Builder builder = HazelcastCluster.builder("bench-hist-"
        + flavor.name().toLowerCase()).members(1).flavor(flavor).heap("256m")
        .jvmArgs("-XX:+UseG1GC").config(config);
    if (flavor == Flavor.CUSTOM) {
      builder.systemProperty("hazelcast.map.eviction.pool.sample.count", "64")
          .systemProperty("hazelcast.map.eviction.pool.size", "4");
    }
    try (HazelcastCluster c = builder.start()) {
      IMap<Integer, byte[]> map = c.client().getMap("hist");
      byte[] v = new byte[HIST_VALUE];
      long t = System.nanoTime();
      for (int i = 0; i < HIST_KEYS; i++) {
        map.put(i, v);
      }
      double rate = HIST_KEYS / ((System.nanoTime() - t) / 1e9);
      // A put's eviction step runs after its response: wait until the size settles.
      int size = -1;
      for (int settled = 0; settled < 3; ) {
        Thread.sleep(200);
        int now = map.size();
        settled = now == size ? settled + 1 : 0;
        size = now;
      }
      Set<Integer> present = map.keySet();
      boolean[] evicted = new boolean[HIST_KEYS];
      for (int i = 0; i < HIST_KEYS; i++) {
        evicted[i] = !present.contains(i);
      }
      c.assertAllAlive();
      return new Histogram(evicted, rate);
    }
  }

  /** Per size: {real bytes, reported bytes, entries}. */
  private Map<Long, long[]> costRun(Flavor flavor, String name, String... flags) throws Exception {
    Map<Long, long[]> result = new LinkedHashMap<>();
    String config = "properties:\n  hazelcast.jmx: true\n  hazelcast.jmx.update.interval.seconds: 0\n";
    try (HazelcastCluster c = HazelcastCluster.builder("bench-cost-" + flavor.name().toLowerCase()
        + "-" + name).members(1).flavor(flavor).heap("1g").jvmArgs(flags).config(config).start()) {
      MemberProcess m = c.member(0);
      for (long size : SIZES) {
        int n = (int) Math.max(2, Math.min(20_000, 160 * MB / size));
        String mapName = "cost" + size;
        IMap<Integer, byte[]> map = c.client().getMap(mapName);
        map.put(-1, new byte[1]);
        map.remove(-1);
        long empty = m.heapUsedAfterFullGc();
        byte[] v = new byte[(int) size];
        for (int i = 0; i < n; i++) {
          map.put(i, v);
        }
        long filled = m.heapUsedAfterFullGc();
        long reported = reportedCost(m, mapName);
        result.put(size, new long[] {filled - empty, reported, n});
        map.destroy();
      }
      c.assertAllAlive();
    }
    return result;
  }

  private static long reportedCost(MemberProcess m, String map) throws Exception {
    MBeanServerConnection c = m.jmx();
    Set<ObjectName> names = c.queryNames(new ObjectName("com.hazelcast:type=IMap,name=" + map + ",*"), null);
    ObjectName n = names.iterator().next();
    return (Long) c.getAttribute(n, "localOwnedEntryMemoryCost");
  }

  /** {puts per second after eviction started, LRU accuracy}. */
  private double[] throughputRun(Flavor flavor, int sample) throws Exception {
    String config = EvictionMaps.usedHeapMap("tput", 8, 0, "");
    try (HazelcastCluster c = HazelcastCluster.builder("bench-tput-" + flavor.name().toLowerCase() + "-" + sample)
        .members(1).flavor(flavor).heap("256m").jvmArgs("-XX:+UseG1GC").config(config)
        .systemProperty("hazelcast.map.eviction.sample.count", String.valueOf(sample))
        .systemProperty("hazelcast.map.eviction.pool.sample.count", String.valueOf(sample))
        .systemProperty("hazelcast.map.eviction.pool.size", String.valueOf(Math.max(1, sample / 16)))
        .start()) {
      IMap<Integer, byte[]> warm = c.client().getMap("warm");
      byte[] v = new byte[1000];
      for (int i = 0; i < 10_000; i++) {
        warm.put(i, v);
      }
      warm.destroy();
      IMap<Integer, byte[]> map = c.client().getMap("tput");
      int puts = 60_000;
      int from = 20_000;
      long t = 0;
      for (int i = 0; i < puts; i++) {
        if (i == from) {
          t = System.nanoTime();
        }
        map.put(i, v);
      }
      double rate = (puts - from) / ((System.nanoTime() - t) / 1e9);
      Set<Integer> present = map.keySet();
      long evicted = 0;
      long last = -1;
      for (int i = 0; i < puts; i++) {
        if (!present.contains(i)) {
          evicted++;
          last = i;
        }
      }
      c.assertAllAlive();
      return new double[] {rate, evicted / (double) (last + 1)};
    }
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static String mb(long bytes) {
    return ResultTable.num(bytes / (double) MB, 1);
  }

  /** A signed percentage with no decimals, such as "+7%" or "-50%". */
  private static String pct(double percent) {
    return String.format(java.util.Locale.ROOT, "%+.0f%%", percent);
  }

  /** A percentage with one decimal, such as "93.7%". */
  private static String percent(double percent) {
    return ResultTable.num(percent, 1) + "%";
  }

  private static String human(long size) {
    return size >= MB ? size / MB + " MB" : size >= 1000 ? size / 1000 + " KB" : size + " B";
  }
}
