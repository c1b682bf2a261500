package dev.forkset.hbase21;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An HBase 2.1.2 minicluster (HDFS with one DataNode, ZooKeeper, a master and one RegionServer)
 * in a JVM of its own, on the JDK and the hbase-server jar the caller picks: the stock release or
 * the custom jar with the module jar. The test talks to it through the child's stdin and stdout
 * (see {@code dev.forkset.hbase21.jvm.ClusterMain} for the commands); every flush's update-lock
 * wait and hold is timed inside the child by the same probe on both jars. The child halts when
 * this JVM goes away; {@link #close} stops it cleanly, and a shutdown hook kills what is left.
 * Its log stays in the work directory.
 */
public final class Hbase21Cluster implements AutoCloseable {
  private static final String CLUSTER_MAIN = "dev.forkset.hbase21.jvm.ClusterMain";
  private static final String PE_MAIN = "org.apache.hadoop.hbase.PerformanceEvaluationMain";
  private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      for (Process p : LIVE) {
        p.destroyForcibly();
      }
    }, "forkset-reap-hbase21"));
  }

  private final Builder spec;
  private final Process process;
  private final OutputStream stdin;
  private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
  private final Path log;
  private final Path out;
  private Map<String, String> info;

  /** Settings of one cluster JVM. */
  public static final class Builder {
    private final Path javaHome;
    private final Path workDir;
    private ServerJar jar = ServerJar.STOCK;
    private Path customJar;
    private Path moduleJar;
    private String heap = "2g";
    private final List<String> jvmArgs = new ArrayList<>(Arrays.asList("-XX:+UseG1GC"));
    private final Map<String, String> site = new LinkedHashMap<>();
    private long startTimeoutMs = 240_000;

    private Builder(Path javaHome, Path workDir) {
      this.javaHome = javaHome;
      this.workDir = workDir;
    }

    /** The stock jar (the default). */
    public Builder stock() {
      this.jar = ServerJar.STOCK;
      return this;
    }

    /**
     * The custom jar: {@code serverJar} is hbase-server-2.1.2-fork.<n>.jar, {@code moduleJar} the
     * hbase-memstore-fix jar (or its classes folder).
     */
    public Builder custom(Path serverJar, Path moduleJar) {
      this.jar = ServerJar.CUSTOM;
      this.customJar = serverJar;
      this.moduleJar = moduleJar;
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
   * @param javaHome the JDK the cluster JVM runs on (HBase 2.1 runs on JDK 8)
   * @param workDir the child's working directory: its data, configuration and logs
   */
  public static Builder builder(Path javaHome, Path workDir) {
    return new Builder(javaHome, workDir);
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
    this.out = spec.workDir.resolve(name + ".out");
    List<String> cmd = javaCommand(spec.javaHome, spec.heap, spec.jvmArgs, spec.workDir, log,
        Hbase21ClassPath.join(Hbase21ClassPath.load().forJar(spec.jar, spec.customJar,
            spec.moduleJar)));
    cmd.add(CLUSTER_MAIN);
    cmd.add(siteFile.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(spec.workDir.toFile())
        .redirectError(out.toFile());
    this.process = pb.start();
    LIVE.add(process);
    this.stdin = process.getOutputStream();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          if (line.startsWith("@@ ")) {
            replies.add(line.substring(3));
          }
        }
      } catch (IOException ignored) {
        // the child is gone
      }
      replies.add("eof");
    }, name + "-stdout");
    reader.setDaemon(true);
    reader.start();
    boolean ok = false;
    try {
      this.info = reply(spec.startTimeoutMs, "start");
      ok = true;
    } finally {
      if (!ok) {
        kill();
      }
    }
  }

  private static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\=").replace(":", "\\:");
  }

  private static List<String> javaCommand(Path javaHome, String heap, List<String> jvmArgs,
      Path workDir, Path logFile, String classPath) throws IOException {
    Path log4j = workDir.resolve(logFile.getFileName() + ".log4j.properties");
    String conf = "log4j.rootLogger=INFO,file\n"
        + "log4j.appender.file=org.apache.log4j.FileAppender\n"
        + "log4j.appender.file.File=" + logFile.toString().replace("\\", "/") + "\n"
        + "log4j.appender.file.Append=false\n"
        + "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
        + "log4j.appender.file.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n\n"
        + "log4j.logger.org.apache.hadoop.metrics2=WARN\n";
    Files.write(log4j, conf.getBytes(StandardCharsets.UTF_8));
    List<String> cmd = new ArrayList<>();
    cmd.add(javaHome.resolve("bin").resolve("java").toString());
    cmd.add("-Xms" + heap);
    cmd.add("-Xmx" + heap);
    cmd.addAll(jvmArgs);
    cmd.addAll(gcLog(javaHome, gcLogPath(workDir, logFile)));
    cmd.add("-Djava.net.preferIPv4Stack=true");
    cmd.add("-Dlog4j.configuration=" + log4j.toUri());
    cmd.add("-cp");
    cmd.add(classPath);
    return cmd;
  }

  /** GC log flags (with safepoint pauses) in the syntax of the JDK at {@code javaHome}. */
  private static List<String> gcLog(Path javaHome, Path file) throws IOException {
    String version = "";
    Path release = javaHome.resolve("release");
    if (Files.exists(release)) {
      for (String line : Files.readAllLines(release, StandardCharsets.UTF_8)) {
        if (line.startsWith("JAVA_VERSION=")) {
          version = line.substring("JAVA_VERSION=".length()).replace("\"", "").trim();
        }
      }
    }
    if (version.startsWith("1.")) {
      return Arrays.asList("-Xloggc:" + file, "-XX:+PrintGCDetails", "-XX:+PrintGCDateStamps",
          "-XX:+PrintGCApplicationStoppedTime");
    }
    return Collections.singletonList("-Xlog:gc*,safepoint:file=" + file + ":time,uptime");
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
   * command at a time: callers on several threads take turns.
   */
  public synchronized Map<String, String> call(long timeoutMs, String... words)
      throws IOException, InterruptedException {
    String line = String.join(" ", words);
    stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    stdin.flush();
    return reply(timeoutMs, line);
  }

  private Map<String, String> reply(long timeoutMs, String what)
      throws IOException, InterruptedException {
    String r = replies.poll(timeoutMs, TimeUnit.MILLISECONDS);
    if (r == null || r.equals("eof") || r.startsWith("error")) {
      String why = r == null ? "no answer in " + timeoutMs + " ms"
          : r.equals("eof") ? "the JVM exited" : r;
      throw new IOException("HBase 2.1.2 " + spec.jar + " cluster JVM, '" + what + "': " + why
          + "\n" + tail(out, 30) + "\n" + tail(log, 40));
    }
    Map<String, String> m = new LinkedHashMap<>();
    String body = r.startsWith("ok") ? r.substring(2).trim() : r;
    if (!body.isEmpty()) {
      for (String kv : body.split("\t")) {
        int eq = kv.indexOf('=');
        m.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    return m;
  }

  /** The last lines of a log file, headed by its path. */
  public static String tail(Path file, int lines) {
    try {
      List<String> all = Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8)
          : Collections.<String>emptyList();
      List<String> t = all.subList(Math.max(0, all.size() - lines), all.size());
      return "---- last " + t.size() + " lines of " + file + " ----\n" + String.join("\n", t);
    } catch (IOException e) {
      return "<cannot read " + file + ": " + e + ">";
    }
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
    Path peLog = spec.workDir.resolve(name + ".log");
    Path peOut = spec.workDir.resolve(name + ".out");
    Path samples = spec.workDir.resolve(name + ".latencies");
    List<String> cmd = javaCommand(spec.javaHome, heap, spec.jvmArgs, spec.workDir, peLog,
        Hbase21ClassPath.join(Hbase21ClassPath.load().stock()));
    cmd.add(PE_MAIN);
    cmd.add(info.get("zk.port"));
    cmd.add(samples.toString());
    cmd.addAll(peArgs);
    Process pe = new ProcessBuilder(cmd).directory(spec.workDir.toFile())
        .redirectError(peOut.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE).start();
    LIVE.add(pe);
    try {
      pe.getOutputStream().close();
      List<String> lines = new ArrayList<>();
      try (BufferedReader r = new BufferedReader(new InputStreamReader(pe.getInputStream(),
          StandardCharsets.UTF_8))) {
        Thread watchdog = new Thread(() -> {
          try {
            if (!pe.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
              pe.destroyForcibly();
            }
          } catch (InterruptedException ignored) {
            pe.destroyForcibly();
          }
        }, name + "-timeout");
        watchdog.setDaemon(true);
        watchdog.start();
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          if (line.startsWith("@@ ")) {
            lines.add(line.substring(3));
          }
        }
      }
      pe.waitFor();
      if (lines.isEmpty() || !lines.get(lines.size() - 1).startsWith("ok")) {
        throw new IOException("PerformanceEvaluation " + peArgs + " failed (exit "
            + pe.exitValue() + "): " + lines + "\n" + tail(peOut, 30) + "\n" + tail(peLog, 40));
      }
      Map<String, String> m = new LinkedHashMap<>();
      for (String kv : lines.get(lines.size() - 1).substring(2).trim().split("\t")) {
        int eq = kv.indexOf('=');
        m.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
      return new PeResult(m, samples, peLog);
    } finally {
      pe.destroyForcibly();
      LIVE.remove(pe);
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
      kill();
    }
  }

  private void kill() throws InterruptedException {
    try {
      stdin.close();
    } catch (IOException ignored) {
      // already closed
    }
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
    LIVE.remove(process);
  }
}
