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
 * {@code ./mvnw -B verify -pl it -Dit.test=EvictionBench -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false}.
 * Stock and custom in one run: (1) reported map cost against the heap the entries really occupy
 * (heap after full GC with the map filled minus with it empty) per value size and GC;
 * (2) puts per second under eviction and LRU accuracy at sample counts 15, 64 and 1000.
 * Writes it/target/bench/hazelcast-eviction.md and docs/img/hazelcast-*.png.
 */
public class EvictionBench {
  private static final long MB = 1 << 20;
  private static final long[] SIZES = {100, 10_000, MB, 5 * MB, 16 * MB, 64 * MB};
  private final StringBuilder report = new StringBuilder();

  @Test
  public void run() throws Exception {
    Path out = Paths.get("target/bench");
    Files.createDirectories(out);
    Path img = Paths.get(System.getProperty("forkset.docs.img", "../docs/img"));
    Files.createDirectories(img);

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
    boolean costs = !"throughput".equals(System.getProperty("bench.only"));
    for (String[] gc : costs ? gcs : new String[0][]) {
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
    if (costs) {
      chartErrors(errors, img.resolve("hazelcast-cost-error.png").toFile());
    }

    report.append("\n## Puts per second under eviction and LRU accuracy (1 member, 1 KB values,"
        + " 8 MB limit, 60000 sequential keys)\n\n")
        .append("| sample count | stock puts/s | custom puts/s | custom/stock | stock accuracy | custom accuracy |\n")
        .append("|---|---|---|---|---|---|\n");
    int[] samples = {15, 64, 1000};
    double[][] tput = new double[2][samples.length];
    boolean throughput = !"cost".equals(System.getProperty("bench.only"));
    for (int i = 0; i < (throughput ? samples.length : 0); i++) {
      double[] s = throughputRun(Flavor.STOCK, samples[i]);
      double[] c = throughputRun(Flavor.CUSTOM, samples[i]);
      tput[0][i] = s[0];
      tput[1][i] = c[0];
      report.append(String.format("| %d | %.0f | %.0f | %.2f | %.1f%% | %.1f%% |%n", samples[i], s[0], c[0],
          c[0] / s[0], s[1] * 100, c[1] * 100));
    }
    if (throughput) {
      chartThroughput(samples, tput, img.resolve("hazelcast-throughput.png").toFile());
    }
    Files.write(out.resolve("hazelcast-eviction.md"), report.toString().getBytes(StandardCharsets.UTF_8));
    System.out.println(report);
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
    String config = SeedScenarios.usedHeapMap("tput", 8, 0, "");
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
