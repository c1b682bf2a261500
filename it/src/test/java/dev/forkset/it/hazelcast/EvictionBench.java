package dev.forkset.it.hazelcast;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.MemberProcess;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.imageio.ImageIO;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.junit.Test;

/**
 * Benchmark, not part of the test command (its name does not end in IT). Run it with
 * {@code ./mvnw -B -o -Pbench verify -pl it}, one part with {@code -Dbench.only=cost},
 * {@code throughput} or {@code histogram}.
 * Stock and custom in one run: (1) reported map cost against the heap the entries really occupy
 * (heap after full GC with the map filled minus with it empty) per value size and GC;
 * (2) puts per second under eviction and LRU accuracy at sample counts 15, 64 and 1000;
 * (3) evicted keys per batch of consecutive keys after sequential puts (the seed's
 * check-eviction charts).
 * Writes it/target/bench/hazelcast-eviction.md and docs/img/hazelcast-*.png.
 */
public class EvictionBench {
  private static final long MB = 1 << 20;
  private static final long[] SIZES = {100, 10_000, MB, 5 * MB, 16 * MB, 64 * MB};
  /** Values of {@code -Dbench.only}; unset or empty runs every part. */
  private static final List<String> PARTS = java.util.Arrays.asList("cost", "throughput", "histogram");
  /** Histogram: sequential keys put into the map. */
  private static final int HIST_KEYS = 50_000;
  /** Histogram: batches of consecutive keys counted (HIST_KEYS / HIST_BATCHES keys each). */
  private static final int HIST_BATCHES = 50;
  /** Histogram: value size in bytes. */
  private static final int HIST_VALUE = 1000;
  /** Histogram: the map's USED_HEAP_SIZE limit in MB (holds roughly a quarter of the keys). */
  private static final int HIST_LIMIT_MB = 16;
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
    boolean costs = only.isEmpty() || "cost".equals(only);
    boolean throughput = only.isEmpty() || "throughput".equals(only);
    boolean histogram = only.isEmpty() || "histogram".equals(only);

    if (costs) {
      costs(img);
    }
    if (throughput) {
      throughput(img);
    }
    if (histogram) {
      histogram(img);
    }
    Files.write(out.resolve("hazelcast-eviction.md"), report.toString().getBytes(StandardCharsets.UTF_8));
    System.out.println(report);
  }

  private void costs(Path img) throws Exception {
    report.append("## Reported cost vs real heap\n\n")
        .append("error = (reported - real) / real; real = heap after full GC with the map filled"
            + " minus with it empty, same member.\n\n")
        .append("| GC | value size | entries | stock real MB | stock reported MB | stock error | custom real MB | custom reported MB | custom error |\n")
        .append("|---|---|---|---|---|---|---|---|---|\n");
    String[][] gcs = {
        {"G1 1 MB regions", "-XX:+UseG1GC", "-XX:G1HeapRegionSize=1m"},
        {"G1 4 MB regions", "-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m"},
        {"G1 32 MB regions", "-XX:+UseG1GC", "-XX:G1HeapRegionSize=32m"},
        {"ZGC (JDK 17)", "-XX:+UseZGC"},
    };
    Map<String, double[][]> errors = new LinkedHashMap<>();
    for (String[] gc : gcs) {
      String[] flags = java.util.Arrays.copyOfRange(gc, 1, gc.length);
      double[][] e = new double[2][SIZES.length];
      Map<Long, long[]> stock = costRun(Flavor.STOCK, gc[0], flags);
      Map<Long, long[]> custom = costRun(Flavor.CUSTOM, gc[0], flags);
      for (int i = 0; i < SIZES.length; i++) {
        long[] s = stock.get(SIZES[i]);
        long[] c = custom.get(SIZES[i]);
        e[0][i] = (s[1] - s[0]) / (double) s[0];
        e[1][i] = (c[1] - c[0]) / (double) c[0];
        report.append(String.format("| %s | %s | %d | %.1f | %.1f | %+.0f%% | %.1f | %.1f | %+.0f%% |%n", gc[0],
            human(SIZES[i]), s[2], s[0] / (double) MB, s[1] / (double) MB, e[0][i] * 100,
            c[0] / (double) MB, c[1] / (double) MB, e[1][i] * 100));
      }
      errors.put(gc[0], e);
    }
    chartErrors(errors, img.resolve("hazelcast-cost-error.png").toFile());
  }

  private void throughput(Path img) throws Exception {
    report.append("\n## Puts per second under eviction and LRU accuracy (1 member, 1 KB values,"
        + " 8 MB limit, 60000 sequential keys)\n\n")
        .append("| sample count | stock puts/s | custom puts/s | custom/stock | stock accuracy | custom accuracy |\n")
        .append("|---|---|---|---|---|---|\n");
    int[] samples = {15, 64, 1000};
    double[][] tput = new double[2][samples.length];
    for (int i = 0; i < samples.length; i++) {
      double[] s = throughputRun(Flavor.STOCK, samples[i]);
      double[] c = throughputRun(Flavor.CUSTOM, samples[i]);
      tput[0][i] = s[0];
      tput[1][i] = c[0];
      report.append(String.format("| %d | %.0f | %.0f | %.2f | %.1f%% | %.1f%% |%n", samples[i], s[0], c[0],
          c[0] / s[0], s[1] * 100, c[1] * 100));
    }
    chartThroughput(samples, tput, img.resolve("hazelcast-throughput.png").toFile());
  }

  private void histogram(Path img) throws Exception {
    int perBatch = HIST_KEYS / HIST_BATCHES;
    Histogram stock = histogramRun(Flavor.STOCK);
    Histogram custom = histogramRun(Flavor.CUSTOM);
    report.append(String.format("%n## Evicted keys per batch of %d consecutive keys (1 member, %d B values,"
        + " %d MB USED_HEAP_SIZE limit, LRU, %d sequential keys)%n%n", perBatch, HIST_VALUE, HIST_LIMIT_MB,
        HIST_KEYS))
        .append("Stock: `hazelcast.map.eviction.sample.count` default (15). Custom: `pool.sample.count` 64,"
            + " `pool.size` 4. Ideal LRU evicts the oldest batches entirely and none of the newest.\n\n")
        .append("| | stock | custom |\n|---|---|---|\n")
        .append(String.format("| keys evicted | %d of %d | %d of %d |%n", stock.evicted, HIST_KEYS, custom.evicted,
            HIST_KEYS))
        .append(String.format("| puts/s (keys sharing one LRU second) | %.0f | %.0f |%n", stock.rate, custom.rate))
        .append(String.format("| LRU precision: evicted keys among the oldest `evicted` keys | %.1f%% | %.1f%% |%n",
            stock.precision() * 100, custom.precision() * 100))
        .append(String.format("| accuracy (seed: evicted / (last evicted index + 1)) | %.1f%% | %.1f%% |%n",
            stock.accuracy() * 100, custom.accuracy() * 100))
        .append(String.format("| share of evictions in the oldest 20%% of keys | %.1f%% | %.1f%% |%n",
            stock.share(0, HIST_KEYS / 5) * 100, custom.share(0, HIST_KEYS / 5) * 100))
        .append(String.format("| share of evictions in the newest 20%% of keys | %.1f%% | %.1f%% |%n",
            stock.share(HIST_KEYS - HIST_KEYS / 5, HIST_KEYS) * 100,
            custom.share(HIST_KEYS - HIST_KEYS / 5, HIST_KEYS) * 100))
        .append(String.format("| batches fully evicted / with no eviction | %d / %d | %d / %d |%n",
            stock.batches(perBatch), stock.batches(0), custom.batches(perBatch), custom.batches(0)))
        .append("\n| batch (keys) | stock evicted | custom evicted |\n|---|---|---|\n");
    List<String> labels = new ArrayList<>();
    List<double[]> pairs = new ArrayList<>();
    for (int b = 0; b < HIST_BATCHES; b++) {
      String label = (b * perBatch) + "-" + ((b + 1) * perBatch - 1);
      report.append(String.format("| %s | %d | %d |%n", label, stock.perBatch[b], custom.perBatch[b]));
      labels.add("keys " + label);
      pairs.add(new double[] {stock.perBatch[b], custom.perBatch[b]});
    }
    bars("Evicted keys per batch of " + perBatch + " sequential keys (oldest first), stock (grey), custom (blue)",
        labels, pairs, img.resolve("hazelcast-eviction-histogram.png").toFile(), false);
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

    /** The seed's metric: evicted count / (index of the last evicted key + 1). */
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
    HazelcastCluster.Builder builder = HazelcastCluster.builder("bench-hist-" + flavor.name().toLowerCase())
        .members(1).flavor(flavor).heap("256m").jvmArgs("-XX:+UseG1GC").config(config);
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
    String config = "properties:\n  hazelcast.jmx: true\n";
    try (HazelcastCluster c = HazelcastCluster.builder("bench-cost-" + flavor.name().toLowerCase()
        + "-" + name.replaceAll("[^A-Za-z0-9]", "")).members(1).flavor(flavor).heap("1g")
        .jvmArgs(flags).config(config).start()) {
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

  private static String human(long size) {
    return size >= MB ? size / MB + " MB" : size >= 1000 ? size / 1000 + " KB" : size + " B";
  }

  private static void chartErrors(Map<String, double[][]> errors, File file) throws Exception {
    List<String> labels = new ArrayList<>();
    List<double[]> pairs = new ArrayList<>();
    for (Map.Entry<String, double[][]> e : errors.entrySet()) {
      for (int i = 0; i < SIZES.length; i++) {
        labels.add(e.getKey().replace(" regions", "").replace(" (JDK 17)", "") + " " + human(SIZES[i]));
        pairs.add(new double[] {e.getValue()[0][i] * 100, e.getValue()[1][i] * 100});
      }
    }
    bars("Reported cost error vs real heap (%), stock (grey) and custom (blue)", labels, pairs, file, true);
  }

  private static void chartThroughput(int[] samples, double[][] tput, File file) throws Exception {
    List<String> labels = new ArrayList<>();
    List<double[]> pairs = new ArrayList<>();
    for (int i = 0; i < samples.length; i++) {
      labels.add("sample " + samples[i]);
      pairs.add(new double[] {tput[0][i], tput[1][i]});
    }
    bars("Puts/s under eviction, stock (grey) and custom (blue)", labels, pairs, file, false);
  }

  /** Grouped horizontal bars: one row per label, stock and custom. */
  private static void bars(String title, List<String> labels, List<double[]> pairs, File file,
      boolean clamp) throws Exception {
    int rowH = 26;
    int w = 1000;
    int h = 60 + rowH * labels.size() + 30;
    BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, w, h);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
    g.drawString(title, 10, 25);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    double min = 0;
    double max = 0;
    for (double[] p : pairs) {
      for (double v : p) {
        double c = clamp ? Math.max(-100, Math.min(100, v)) : v;
        min = Math.min(min, c);
        max = Math.max(max, c);
      }
    }
    int left = 200;
    int right = w - 80;
    double span = Math.max(1e-9, max - min);
    int zero = left + (int) ((0 - min) / span * (right - left));
    for (int i = 0; i < labels.size(); i++) {
      int y = 50 + i * rowH;
      g.setColor(Color.BLACK);
      g.drawString(labels.get(i), 10, y + 16);
      for (int k = 0; k < 2; k++) {
        double v = pairs.get(i)[k];
        double c = clamp ? Math.max(-100, Math.min(100, v)) : v;
        int x = left + (int) ((c - min) / span * (right - left));
        g.setColor(k == 0 ? new Color(150, 150, 150) : new Color(40, 100, 200));
        int yy = y + 2 + k * 11;
        g.fillRect(Math.min(zero, x), yy, Math.max(1, Math.abs(x - zero)), 10);
        g.setColor(Color.DARK_GRAY);
        g.drawString(String.format(clamp ? "%+.0f%%" : "%.0f", v), Math.max(zero, x) + 4, yy + 9);
      }
    }
    g.setColor(Color.BLACK);
    g.setStroke(new BasicStroke(1));
    g.drawLine(zero, 45, zero, h - 25);
    g.dispose();
    ImageIO.write(image, "png", file);
  }
}
