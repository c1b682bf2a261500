package dev.forkset.hbase21;

import dev.forkset.childjvm.ChildJvm;
import dev.forkset.childjvm.Jdk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An HBase 2.1.2 minicluster (HDFS with one DataNode, ZooKeeper, a master and one RegionServer)
 * in a JVM of its own ({@link ChildJvm}: reaped whatever ends the test), on the JDK and the
 * hbase-server jar the caller picks: the stock release or the custom jar. The test talks to it
 * through the child's stdin and stdout (see {@code dev.forkset.hbase21.jvm.ClusterMain} for the
 * commands); every flush's update-lock wait and hold is timed inside the child by the same probe
 * on both jars. {@link #close} stops it cleanly. Its logs stay in the work directory.
 */
public final class Hbase21Cluster implements AutoCloseable {
  private static final String CLUSTER_MAIN = "dev.forkset.hbase21.jvm.ClusterMain";
  private static final String PE_MAIN = "org.apache.hadoop.hbase.PerformanceEvaluationMain";

  private final Builder spec;
  private final ChildJvm process;
  private final CommandChannel commands;
  private final Path log;
  private Map<String, String> info;

  /** Settings of one cluster JVM. */
  public static final class Builder {
    private final Jdk jdk;
    private final Path workDir;
    private ServerJar jar = ServerJar.STOCK;
    private String heap = "2g";
    private final List<String> jvmArgs = new ArrayList<>(Arrays.asList("-XX:+UseG1GC"));
    private final Map<String, String> site = new LinkedHashMap<>();
    private long startTimeoutMs = 240_000;

    private Builder(Jdk jdk, Path workDir) {
      this.jdk = jdk;
      this.workDir = workDir;
    }

    /** The stock jar (the default). */
    public Builder stock() {
      this.jar = ServerJar.STOCK;
      return this;
    }

    /** The custom jar hbase-server-2.1.2-fork.<n>.jar ({@link Hbase21ClassPath} knows it). */
    public Builder custom() {
      this.jar = ServerJar.CUSTOM;
      return this;
    }

    /**
     * The custom hbase-server jar with the stock compat jars ({@link
     * ServerJar#CUSTOM_WITH_STOCK_COMPAT}): a misdeployment, which must not start.
     */
    public Builder customWithStockCompatJars() {
      this.jar = ServerJar.CUSTOM_WITH_STOCK_COMPAT;
      return this;
    }

    /** -Xms and -Xmx, such as "2g". */
    public Builder heap(String h) {
      this.heap = h;
      return this;
    }

    /** JVM flags replacing the default {@code -XX:+UseG1GC}. */
    public Builder jvmArgs(String... args) {
      jvmArgs.clear();
      jvmArgs.addAll(Arrays.asList(args));
      return this;
    }

    /** A configuration key, as in hbase-site.xml. */
    public Builder site(String key, String value) {
      site.put(key, value);
      return this;
    }

    public Hbase21Cluster start() throws IOException, InterruptedException {
      return new Hbase21Cluster(this);
    }
  }

  /**
   * @param jdk the JDK the cluster JVM runs on (HBase 2.1 runs on JDK 8)
   * @param workDir the child's working directory: its data, configuration and logs
   */
  public static Builder builder(Jdk jdk, Path workDir) {
    return new Builder(jdk, workDir);
  }

  private Hbase21Cluster(Builder spec) throws IOException, InterruptedException {
    this.spec = spec;
    Files.createDirectories(spec.workDir);
    Path siteFile = spec.workDir.resolve("site.properties");
    StringBuilder props = new StringBuilder();
    for (Map.Entry<String, String> e : spec.site.entrySet()) {
      props.append(escape(e.getKey())).append('=').append(escape(e.getValue())).append('\n');
    }
    Files.write(siteFile, props.toString().getBytes(StandardCharsets.UTF_8));
    String name = "cluster-" + spec.jar.name().toLowerCase(java.util.Locale.ROOT);
    this.log = spec.workDir.resolve(name + ".log");
    this.process = jvm(name, spec.jar, spec.heap).args(siteFile.toString()).start();
    this.commands = new CommandChannel(process, log);
    boolean ok = false;
    try {
      this.info = commands.answer(0, spec.startTimeoutMs, "start");
      ok = true;
    } finally {
      if (!ok) {
        process.close();
      }
    }
  }

  private static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\=")
        .replace(":", "\\:");
  }

  /**
   * A JVM on the 2.1.2 class path of {@code jar}: HBase logs through log4j to {@code
   * <name>.log}; stdout and stderr (the protocol) go to {@code <name>.out}.
   */
  private ChildJvm.Builder jvm(String name, ServerJar jar, String heap) throws IOException {
    Path log4jLog = spec.workDir.resolve(name + ".log");
    Path log4j = spec.workDir.resolve(name + ".log4j.properties");
    String conf = "log4j.rootLogger=INFO,file\n"
        + "log4j.appender.file=org.apache.log4j.FileAppender\n"
        + "log4j.appender.file.File=" + log4jLog.toString().replace("\\", "/") + "\n"
        + "log4j.appender.file.Append=false\n"
        + "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
        + "log4j.appender.file.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n\n"
        + "log4j.logger.org.apache.hadoop.metrics2=WARN\n";
    Files.write(log4j, conf.getBytes(StandardCharsets.UTF_8));
    String main = name.startsWith("cluster-") ? CLUSTER_MAIN : PE_MAIN;
    return ChildJvm.builder(name, main).jdk(spec.jdk).heap(heap).jvmArgs(spec.jvmArgs)
        .gcLog(gcLogPath(spec.workDir, log4jLog))
        .systemProperty("java.net.preferIPv4Stack", "true")
        .systemProperty("log4j.configuration", log4j.toUri().toString())
        .classPath(Hbase21ClassPath.load().forJar(jar))
        .dir(spec.workDir).log(spec.workDir.resolve(name + ".out"));
  }

  /** The start reply: java.version, java.home, zk.port, hregion.jar, patches, pid. */
  public Map<String, String> info() {
    return Collections.unmodifiableMap(info);
  }

  public Path logFile() {
    return log;
  }

  /** The cluster JVM's GC log (with safepoint pauses). */
  public Path gcLogFile() {
    return gcLogPath(spec.workDir, log);
  }

  private static Path gcLogPath(Path workDir, Path logFile) {
    return workDir.resolve(logFile.getFileName().toString().replaceAll("\\.log$", "")
        + "-gc.log");
  }

  /**
   * Sends one command and returns its answer; fails with the log tail on an error answer. One
   * command at a time: callers on several threads take turns. An answer that comes after its
   * wait timed out is never taken for a later command's ({@link CommandChannel}).
   */
  public Map<String, String> call(long timeoutMs, String... words)
      throws IOException, InterruptedException {
    return commands.call(timeoutMs, String.join(" ", words));
  }

  /** The last lines of a log file, headed by its path. */
  public static String tail(Path file, int lines) {
    return ChildJvm.tail(file, lines);
  }

  /** One flush's update-lock figures, from the probe. */
  public static final class Flush {
    public final long holdNanos;
    public final long waitNanos;
    public final long dataSize;
    public final long storeFileEntries;
    public final String result;

    Flush(Map<String, String> m) {
      holdNanos = Long.parseLong(m.get("holdNanos"));
      waitNanos = Long.parseLong(m.get("waitNanos"));
      dataSize = Long.parseLong(m.get("dataSize"));
      storeFileEntries = Long.parseLong(m.get("storeFileEntries"));
      result = m.get("result");
    }
  }

  /**
   * Creates a one-region table with family f and the probe; returns region and memstore.
   *
   * @param inMemoryCompaction NONE, BASIC, EAGER for the family's setting, or "default" to leave
   *     it unset (the server's hbase.hregion.compacting.memstore.type applies)
   */
  public Map<String, String> createTable(String table, String inMemoryCompaction)
      throws IOException, InterruptedException {
    return createTable(table, inMemoryCompaction, "f");
  }

  /** {@link #createTable(String, String)} with the family's name. */
  public Map<String, String> createTable(String table, String inMemoryCompaction, String family)
      throws IOException, InterruptedException {
    return call(120_000, "create", table, inMemoryCompaction, family);
  }

  /** Store files and entries of the table's first family, memstore class, probe on or not. */
  public Map<String, String> store(String table) throws IOException, InterruptedException {
    return call(60_000, "store", table);
  }

  /** Puts {@code cells} cells (rows first..first+cells-1, scrambled) straight into the region. */
  public Map<String, String> load(String table, int cells, long first)
      throws IOException, InterruptedException {
    return call(600_000, "load", table, Integer.toString(cells), Long.toString(first));
  }

  /**
   * Fills the table's memstore with cells shaped as PerformanceEvaluation writes them (random
   * rows below {@code keys}, family info0, {@code valueSize}-byte values) until its heap size is
   * {@code fraction} of the flush size.
   */
  public Map<String, String> fillLikePe(String table, double fraction, int valueSize, int keys)
      throws IOException, InterruptedException {
    return call(600_000, "fill", table, Double.toString(fraction), Integer.toString(valueSize),
        Integer.toString(keys));
  }

  /** Runs a full GC in the cluster JVM. */
  public void gc() throws IOException, InterruptedException {
    call(120_000, "gc");
  }

  /** Flushes the table's region and returns the probe's figures for that flush. */
  public Flush flush(String table) throws IOException, InterruptedException {
    return new Flush(call(600_000, "flush", table));
  }

  /** The holds recorded for the table since the last call (comma-separated lists). */
  public Map<String, String> holds(String table) throws IOException, InterruptedException {
    return call(60_000, "holds", table);
  }

  /** Numeric attributes of the cluster JVM's MBeans matching the pattern ("sub:attribute"). */
  public Map<String, String> jmx(String pattern) throws IOException, InterruptedException {
    return call(60_000, "jmx", pattern);
  }

  /** The result of one PerformanceEvaluation run (latencies in microseconds). */
  public static final class PeResult {
    public final Map<String, String> values;
    public final Path samples;
    public final Path log;

    PeResult(Map<String, String> values, Path samples, Path log) {
      this.values = values;
      this.samples = samples;
      this.log = log;
    }

    public long micros(String key) {
      return Long.parseLong(values.get(key));
    }
  }

  /**
   * Runs HBase's PerformanceEvaluation against this cluster in a client JVM of its own (same JDK,
   * the stock 2.1.2 client jars), with {@code peArgs} as on PE's command line, and waits for it.
   */
  public PeResult performanceEvaluation(String name, String heap, List<String> peArgs,
      long timeoutMs) throws IOException, InterruptedException {
    Path samples = spec.workDir.resolve(name + ".latencies");
    List<String> args = new ArrayList<>();
    args.add(info.get("zk.port"));
    args.add(samples.toString());
    args.addAll(peArgs);
    try (ChildJvm pe = jvm(name, ServerJar.STOCK, heap).args(args).start()) {
      Map<String, String> m = new CommandChannel(pe, spec.workDir.resolve(name + ".log"))
          .answer(0, timeoutMs, "PerformanceEvaluation " + peArgs);
      return new PeResult(m, samples, spec.workDir.resolve(name + ".log"));
    }
  }

  /** Stops the cluster cleanly; kills the JVM if it does not stop in time. */
  @Override
  public void close() throws IOException, InterruptedException {
    try {
      if (process.isAlive()) {
        call(120_000, "stop");
        process.waitFor(60, TimeUnit.SECONDS);
      }
    } finally {
      process.close();
    }
  }
}
