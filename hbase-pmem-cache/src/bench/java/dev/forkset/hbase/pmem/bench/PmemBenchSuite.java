package dev.forkset.hbase.pmem.bench;

import dev.forkset.bench.Charts;
import dev.forkset.bench.ResultTable;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.stream.Collectors;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * The module's engine benchmarks in one go (module engine vs stock offheap vs stock pmem:), written
 * as one Markdown report and a PNG chart (through bench-support). Arguments: scratch dir (tmpfs),
 * report file, chart file. System properties: {@code bench.jvm.args} (JVM options of the forked
 * JVMs), {@code bench.parts} (comma-separated subset of {@value #PARTS}).
 *
 * <p>Parts:
 * <ol>
 *   <li>{@code jmh}: {@code PmemReadWriteBench} (random block reads through BucketCache and
 *       writes into the engine), then every other JMH benchmark in {@code src/bench/jmh} in a
 *       generic table (benchmark, parameters, score with error).
 *   <li>{@code mappings}: {@code MappingCountBench}, the mappings of a 64 GiB sparse file.
 *   <li>{@code restart}: {@code RestartBench}, clean restart with 3,000 blocks, on the custom jar
 *       and on the upstream jar, at 2 and 16 processors.
 * </ol>
 * The PerformanceEvaluation randomRead benchmark on a minicluster is {@link PeRandomReadBench},
 * run by the same {@code -Pbench} build.
 */
public final class PmemBenchSuite {
  static final String PARTS = "jmh,mappings,restart";
  static final String[] ENGINES = {"module-pmem", "stock-offheap", "stock-pmem"};
  /** The JMH benchmark with its own table and chart; the others get the generic table. */
  static final String READ_WRITE = "org.apache.hadoop.hbase.io.hfile.bucket.PmemReadWriteBench";

  private PmemBenchSuite() {}

  public static void main(String[] args) throws Exception {
    String scratch = args[0];
    File report = new File(args[1]);
    File chart = new File(args[2]);
    String[] jvmArgs = System.getProperty("bench.jvm.args", "-Xmx3g").trim().split("\\s+");
    Set<String> parts = new LinkedHashSet<>(
        Arrays.asList(System.getProperty("bench.parts", PARTS).split("\\s*,\\s*")));
    StringBuilder md = new StringBuilder();
    md.append("Measured on ").append(Runtime.getRuntime().availableProcessors())
        .append(" cores, ").append(System.getProperty("java.vm.name")).append(' ')
        .append(System.getProperty("java.version")).append(", cache files in ").append(scratch)
        .append(".\n\n");
    if (parts.contains("jmh")) {
      md.append(readWrite(jvmArgs, scratch, chart));
      md.append(otherJmh(jvmArgs, scratch));
    }
    if (parts.contains("mappings")) {
      md.append(mappings(jvmArgs));
    }
    if (parts.contains("restart")) {
      md.append(restart(jvmArgs, scratch));
    }
    File dir = report.getAbsoluteFile().getParentFile();
    if (dir != null) {
      dir.mkdirs();
    }
    Files.write(report.toPath(), md.toString().getBytes(StandardCharsets.UTF_8));
    System.out.println(md);
  }

  /**
   * JMH random block read / write. The machine is shared, so every engine is measured in many
   * short iterations, in two sweeps of opposite order, and the median is reported.
   */
  private static String readWrite(String[] jvmArgs, String scratch, File chart) throws Exception {
    Map<String, List<Double>> reads = new LinkedHashMap<>();
    Map<String, List<Double>> writes = new LinkedHashMap<>();
    for (String e : ENGINES) {
      reads.put(e, new ArrayList<>());
      writes.put(e, new ArrayList<>());
    }
    String[][] sweeps = {ENGINES, {ENGINES[2], ENGINES[1], ENGINES[0]}};
    for (String[] order : sweeps) {
      Options opt = new OptionsBuilder().include(READ_WRITE + "\\.").param("engine", order)
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
    Map<String, double[]> read = new LinkedHashMap<>();
    Map<String, double[]> write = new LinkedHashMap<>();
    for (String e : ENGINES) {
      read.put(e, quartiles(reads.get(e)));
      write.put(e, quartiles(writes.get(e)));
    }
    double offRead = read.get("stock-offheap")[1];
    double offWrite = write.get("stock-offheap")[1];
    ResultTable table = new ResultTable("engine", "read ops/s (median)", "read IQR",
        "read vs offheap", "write ops/s (median)", "write IQR", "write vs offheap");
    Map<String, double[]> relative = new LinkedHashMap<>();
    for (String e : ENGINES) {
      double[] rd = read.get(e);
      double[] wr = write.get(e);
      table.row(e, ops(rd[1]), ops(rd[0]) + " - " + ops(rd[2]),
          ResultTable.num(rd[1] / offRead, 3) + "x", ops(wr[1]),
          ops(wr[0]) + " - " + ops(wr[2]), ResultTable.num(wr[1] / offWrite, 3) + "x");
      relative.put(e, new double[] {rd[1] / offRead, wr[1] / offWrite});
    }
    throughputChart(chart, relative);
    return "### Random block reads and writes (JMH, 1 thread, 16 KiB blocks)\n\n" + "Median of "
        + reads.get(ENGINES[0]).size() + " iterations of 0.7 s per engine (two sweeps in"
        + " opposite order), with the interquartile range.\n\n" + table.toMarkdown() + "\n";
  }

  /**
   * The read/write chart: for each engine, median random read and write throughput relative to
   * stock offheap.
   *
   * @param relative engine to {read, write} relative to offheap
   */
  public static void throughputChart(File png, Map<String, double[]> relative)
      throws Exception {
    double[] readSeries = new double[relative.size()];
    double[] writeSeries = new double[relative.size()];
    int i = 0;
    for (double[] v : relative.values()) {
      readSeries[i] = v[0];
      writeSeries[i++] = v[1];
    }
    Map<String, double[]> series = new LinkedHashMap<>();
    series.put("random read", readSeries);
    series.put("random write", writeSeries);
    Charts.bar(png, "BucketCache random 16 KiB blocks, ops/s relative to stock offheap",
        "x stock offheap", new ArrayList<>(relative.keySet()), series);
  }

  /** Every JMH benchmark in src/bench/jmh besides {@link #READ_WRITE}, in a generic table. */
  private static String otherJmh(String[] jvmArgs, String scratch) throws Exception {
    SortedSet<BenchmarkListEntry> others = BenchmarkList.defaultList().find(
        OutputFormatFactory.createFormatInstance(System.out, VerboseMode.SILENT),
        Collections.singletonList(".*"), Collections.singletonList(READ_WRITE + "\\."));
    if (others.isEmpty()) {
      return "";
    }
    Set<String> classes = others.stream().map(BenchmarkListEntry::getUserClassQName)
        .collect(Collectors.toCollection(LinkedHashSet::new));
    ResultTable table = new ResultTable("benchmark", "parameters", "mode", "score", "error",
        "unit");
    List<RunResult> results = new ArrayList<>();
    for (String c : classes) {
      OptionsBuilder opt = new OptionsBuilder();
      opt.include(c.replace(".", "\\.") + "\\.");
      opt.jvmArgsAppend(concat(jvmArgs, "-Dbench.dir=" + scratch));
      // A class's own @Fork/@Warmup/@Measurement win; without them, one fork and seconds, not
      // JMH's defaults (5 forks of 10 x 10 s per parameter combination).
      if (!annotated(c, Fork.class)) {
        opt.forks(1);
      }
      if (!annotated(c, Warmup.class)) {
        opt.warmupIterations(3).warmupTime(TimeValue.seconds(1));
      }
      if (!annotated(c, Measurement.class)) {
        opt.measurementIterations(5).measurementTime(TimeValue.seconds(1));
      }
      results.addAll(new Runner(opt.build()).run());
    }
    for (RunResult r : results) {
      Result<?> p = r.getPrimaryResult();
      String bench = r.getParams().getBenchmark();
      StringBuilder params = new StringBuilder();
      for (String k : r.getParams().getParamsKeys()) {
        params.append(params.length() == 0 ? "" : ", ").append(k).append('=')
            .append(r.getParams().getParam(k));
      }
      table.row(bench.substring(bench.lastIndexOf('.', bench.lastIndexOf('.') - 1) + 1),
          params, r.getParams().getMode().shortLabel(), String.format(Locale.ROOT, "%,.3f",
              p.getScore()), String.format(Locale.ROOT, "%,.3f", p.getScoreError()),
          p.getScoreUnit());
    }
    return "### Other JMH benchmarks (src/bench/jmh)\n\n" + table.toMarkdown() + "\n";
  }

  /** True when the class or one of its methods carries the annotation. */
  private static boolean annotated(String className, Class<? extends Annotation> a)
      throws ClassNotFoundException {
    Class<?> c = Class.forName(className);
    if (c.isAnnotationPresent(a)) {
      return true;
    }
    for (Method m : c.getDeclaredMethods()) {
      if (m.isAnnotationPresent(a)) {
        return true;
      }
    }
    return false;
  }

  /** Mapping count of a 64 GiB sparse file. */
  private static String mappings(String[] jvmArgs) throws Exception {
    ResultTable table = new ResultTable("engine", "mappings");
    for (String line : child(jvmArgs, null, false,
        "org.apache.hadoop.hbase.io.hfile.bucket.MappingCountBench", "/tmp")) {
      String[] f = line.split(" ");
      table.row(f[1], f[2]);
    }
    return "### Mappings of a 64 GiB sparse cache file (lines of /proc/self/maps)\n\n"
        + table.toMarkdown() + "\n";
  }

  /** Restart: 3000 cached blocks, clean shutdown, restart. */
  private static String restart(String[] jvmArgs, String scratch) throws Exception {
    ResultTable table = new ResultTable("build", "engine", "processors", "restart ms", "correct",
        "lost", "wrong", "warm hit ratio");
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
        table.row(run[0], upstream ? "stock-pmem" : f[1], f[6], f[2], correct, f[4], f[5],
            ResultTable.num(correct / 3000.0, 4));
      }
    }
    return "### Clean restart with 3000 cached 8 KiB blocks\n\n" + table.toMarkdown() + "\n";
  }

  private static String ops(double v) {
    return String.format(Locale.ROOT, "%,.0f", v);
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
}
