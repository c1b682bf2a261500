package dev.forkset.hbase.pmem.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the pmem: benchmarks in one go (module engine vs stock offheap vs stock pmem:) and
 * writes a Markdown report and a PNG chart. Arguments: scratch dir (tmpfs), report file, chart
 * file. System property bench.jvm.args: JVM options of the forked benchmark JVMs.
 */
public final class PmemBenchSuite {
  private static final String[] ENGINES = {"module-pmem", "stock-offheap", "stock-pmem"};

  public static void main(String[] args) throws Exception {
    String scratch = args[0];
    File report = new File(args[1]);
    File chart = new File(args[2]);
    String[] jvmArgs = System.getProperty("bench.jvm.args", "-Xmx3g").trim().split("\\s+");
    StringBuilder md = new StringBuilder();
    md.append("Measured on ").append(Runtime.getRuntime().availableProcessors())
        .append(" cores, ").append(System.getProperty("java.vm.name")).append(' ')
        .append(System.getProperty("java.version")).append(", cache files in ").append(scratch)
        .append(".\n\n");

    // 1. JMH random block read / write. The machine is shared, so every engine is measured in
    // many short iterations, in two sweeps of opposite order, and the median is reported.
    Map<String, List<Double>> reads = new LinkedHashMap<>();
    Map<String, List<Double>> writes = new LinkedHashMap<>();
    for (String e : ENGINES) {
      reads.put(e, new ArrayList<>());
      writes.put(e, new ArrayList<>());
    }
    String[][] sweeps = {ENGINES, {ENGINES[2], ENGINES[1], ENGINES[0]}};
    for (String[] order : sweeps) {
      Options opt = new OptionsBuilder()
          .include("org.apache.hadoop.hbase.io.hfile.bucket.PmemReadWriteBench")
          .param("engine", order)
          .forks(1).warmupIterations(3).warmupTime(TimeValue.milliseconds(700))
          .measurementIterations(10).measurementTime(TimeValue.milliseconds(700)).threads(1)
          .jvmArgsAppend(concat(jvmArgs, "-Dbench.dir=" + scratch)).build();
      for (RunResult r : new Runner(opt).run()) {
        String engine = r.getParams().getParam("engine");
        boolean read = r.getParams().getBenchmark().endsWith("randomRead");
        for (BenchmarkResult b : r.getBenchmarkResults()) {
          for (IterationResult it : b.getIterationResults()) {
            (read ? reads : writes).get(engine).add(it.getPrimaryResult().getScore());
          }
        }
      }
    }
    Map<String, double[]> tput = new LinkedHashMap<>();
    for (String e : ENGINES) {
      double[] rd = quartiles(reads.get(e));
      double[] wr = quartiles(writes.get(e));
      tput.put(e, new double[] {rd[1], rd[0], wr[1], wr[0], rd[2], wr[2]});
    }
    double offRead = tput.get("stock-offheap")[0];
    double offWrite = tput.get("stock-offheap")[2];
    md.append("### Random block reads and writes (JMH, 1 thread, 16 KiB blocks)\n\n")
        .append("Median of ").append(reads.get(ENGINES[0]).size())
        .append(" iterations of 0.7 s per engine (two sweeps in opposite order), with the")
        .append(" interquartile range.\n\n")
        .append("| engine | read ops/s (median) | read IQR | read vs offheap |"
            + " write ops/s (median) | write IQR | write vs offheap |\n")
        .append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (Map.Entry<String, double[]> e : tput.entrySet()) {
      double[] v = e.getValue();
      md.append(String.format("| %s | %,.0f | %,.0f - %,.0f | %.3fx | %,.0f | %,.0f - %,.0f |"
          + " %.3fx |%n", e.getKey(), v[0], v[1], v[4], v[0] / offRead, v[2], v[3], v[5],
          v[2] / offWrite));
    }

    // 2. Mapping count of a 64 GiB sparse file.
    md.append("\n### Mappings of a 64 GiB sparse cache file (lines of /proc/self/maps)\n\n")
        .append("| engine | mappings |\n|---|---:|\n");
    for (String line : child(jvmArgs, null, false,
        "org.apache.hadoop.hbase.io.hfile.bucket.MappingCountBench", "/tmp")) {
      String[] f = line.split(" ");
      md.append("| ").append(f[1]).append(" | ").append(f[2]).append(" |\n");
    }

    // 3. Restart: 3000 cached blocks, clean shutdown, restart.
    md.append("\n### Clean restart with 3000 cached 8 KiB blocks\n\n")
        .append("| build | engine | processors | restart ms | correct | lost | wrong |"
            + " warm hit ratio |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
    List<String[]> runs = new ArrayList<>();
    for (String e : ENGINES) {
      runs.add(new String[] {"custom jar + module", e, null});
    }
    runs.add(new String[] {"custom jar + module", "module-pmem", "16"});
    runs.add(new String[] {"upstream hbase-server 2.6.4", "upstream-pmem", null});
    runs.add(new String[] {"upstream hbase-server 2.6.4", "upstream-pmem", "16"});
    for (String[] run : runs) {
      boolean upstream = run[1].startsWith("upstream");
      for (String line : child(jvmArgs, run[2], upstream,
          "org.apache.hadoop.hbase.io.hfile.bucket.RestartBench", run[1], scratch)) {
        String[] f = line.split(" ");
        int correct = Integer.parseInt(f[3]);
        md.append(String.format("| %s | %s | %s | %s | %d | %s | %s | %.4f |%n", run[0],
            upstream ? "stock-pmem" : f[1], f[6], f[2], correct, f[4], f[5],
            correct / 3000.0));
      }
    }
    Files.write(report.toPath(), md.toString().getBytes(StandardCharsets.UTF_8));
    chart(tput, chart);
    System.out.println(md);
  }

  /** 25th percentile, median, 75th percentile. */
  private static double[] quartiles(List<Double> values) {
    double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return new double[] {v[v.length / 4], v[v.length / 2], v[(3 * v.length) / 4]};
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** Runs a main class in a new JVM and returns its RESULT lines. */
  private static List<String> child(String[] jvmArgs, String processors, boolean upstream,
      String main, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + "/bin/java");
    cmd.addAll(Arrays.asList(jvmArgs));
    if (processors != null) {
      cmd.add("-XX:ActiveProcessorCount=" + processors);
    }
    String cp = System.getProperty("java.class.path");
    if (upstream) {
      // Upstream hbase-server alone: no custom jar, no module classes (no IOEngineProvider).
      cp = Arrays.stream(cp.split(File.pathSeparator))
          .filter(p -> !p.contains("-fork") && !p.endsWith("hbase-pmem-cache/target/classes"))
          .collect(Collectors.joining(File.pathSeparator));
    }
    cmd.add("-cp");
    cmd.add(cp);
    cmd.add(main);
    cmd.addAll(Arrays.asList(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    List<String> results = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null;) {
        if (line.startsWith("RESULT ")) {
          results.add(line);
        }
      }
    }
    if (p.waitFor() != 0 || results.isEmpty()) {
      throw new IllegalStateException(main + " " + Arrays.toString(args) + " failed");
    }
    return results;
  }

  /** Grouped bars: read and write throughput of each engine, relative to offheap. */
  private static void chart(Map<String, double[]> tput, File out) throws Exception {
    int w = 720;
    int h = 400;
    BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, w, h);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
    g.drawString("BucketCache random 16 KiB blocks, ops/s relative to stock offheap", 40, 28);
    int left = 60;
    int bottom = h - 60;
    int top = 60;
    double max = 0;
    double offRead = tput.get("stock-offheap")[0];
    double offWrite = tput.get("stock-offheap")[2];
    for (double[] v : tput.values()) {
      max = Math.max(max, Math.max(v[0] / offRead, v[2] / offWrite));
    }
    max = Math.ceil(max * 4) / 4 + 0.25;
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    for (double y = 0; y <= max + 1e-9; y += 0.25) {
      int py = bottom - (int) ((bottom - top) * y / max);
      g.setColor(new Color(225, 225, 225));
      g.drawLine(left, py, w - 20, py);
      g.setColor(Color.DARK_GRAY);
      g.drawString(String.format("%.2fx", y), 15, py + 4);
    }
    Color[] colors = {new Color(31, 119, 180), new Color(255, 127, 14)};
    String[] labels = {"random read", "random write"};
    int group = (w - left - 40) / tput.size();
    int bar = group / 3;
    int gi = 0;
    for (Map.Entry<String, double[]> e : tput.entrySet()) {
      double[] rel = {e.getValue()[0] / offRead, e.getValue()[2] / offWrite};
      for (int k = 0; k < 2; k++) {
        int x = left + gi * group + group / 6 + k * bar;
        int bh = (int) ((bottom - top) * rel[k] / max);
        g.setColor(colors[k]);
        g.fillRect(x, bottom - bh, bar - 4, bh);
        g.setColor(Color.BLACK);
        g.drawString(String.format("%.2fx", rel[k]), x + 2, bottom - bh - 4);
      }
      g.drawString(e.getKey(), left + gi * group + group / 4, bottom + 18);
      gi++;
    }
    g.setStroke(new BasicStroke(1));
    g.drawLine(left, bottom, w - 20, bottom);
    for (int k = 0; k < 2; k++) {
      g.setColor(colors[k]);
      g.fillRect(left + k * 140, h - 25, 12, 12);
      g.setColor(Color.BLACK);
      g.drawString(labels[k], left + k * 140 + 18, h - 15);
    }
    g.dispose();
    out.getParentFile().mkdirs();
    ImageIO.write(img, "png", out);
  }
}
