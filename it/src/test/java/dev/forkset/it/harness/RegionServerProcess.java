package dev.forkset.it.harness;

import dev.forkset.childjvm.ChildJvm;
import dev.forkset.childjvm.Jdk;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.client.Admin;

/**
 * An HBase RegionServer in its own JVM, started as an operator starts one ({@code hbase
 * regionserver start}: {@code HRegionServer.main} with a conf directory first on the class path),
 * joined to the HDFS, ZooKeeper and master of a {@link MiniHBase} in the test JVM.
 *
 * <p>The process runs the custom hbase-server jar and the module jars (the test class path
 * without the stock hbase-server jar, as {@code $HBASE_HOME/lib} after the README's deployment
 * step), with its own {@code -Xmx} and its own {@code hbase-site.xml}: the minicluster's settings
 * (so it finds HDFS, ZooKeeper and the root directory), then this server's own settings (such as
 * {@code hbase.bucketcache.ioengine}). Its RPC port is fixed for its lifetime, so a process
 * started again after {@link #kill()} comes back under the same host and port, as a restarted
 * RegionServer does, and the master expires the dead instance at once.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>{@link #kill()} sends SIGKILL ({@code Process.destroyForcibly} on Linux) and checks the
 *       exit status 137 (128 + 9): no shutdown hook, no cache shutdown, no region close, unlike
 *       {@code HRegionServer.abort}, which the in-JVM minicluster calls a kill.
 *   <li>{@link #stop(Duration)} sends SIGTERM: HBase's shutdown hook stops the server cleanly
 *       (regions closed, caches persisted), as {@code hbase-daemon.sh stop regionserver} does.
 *   <li>The process is a {@link ChildJvm}: reaped by {@link #close}, and by the child-jvm
 *       safeguards whatever ends the test JVM. A start that fails reaps its process.
 *   <li>Counters are read over JMX through the attach API (no port), from a bean that reads them
 *       live ({@link LiveServerCounters}) rather than the metrics system's periodic snapshot.
 * </ol>
 */
public final class RegionServerProcess implements AutoCloseable {
  /** How long a RegionServer may take to report for duty. */
  private static final long START_TIMEOUT_MS = 180_000;
  /** The RegionServer metrics bean with the block cache counters. */
  public static final String SERVER_BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Server";

  private final Builder spec;
  private final Path dir;
  private final Path confDir;
  private final int port;
  private int generation;
  private ChildJvm process;
  private ServerName serverName;
  /** Start code of the last process seen online: a new process must report a newer one. */
  private long lastStartcode;
  private JMXConnector jmx;

  private RegionServerProcess(Builder spec) throws IOException {
    this.spec = spec;
    this.dir = spec.dir();
    this.confDir = dir.resolve("conf");
    Files.createDirectories(confDir);
    this.port = freePort();
    writeConf();
  }

  /**
   * A RegionServer named {@code name} for a cluster. Its folder, {@code
   * target/regionservers/<name>}, is emptied now (cache files of an earlier run must not be
   * found by this one); the test may create its cache directories there before the launch.
   */
  public static Builder builder(String name, MiniHBase cluster) throws IOException {
    return new Builder(name, cluster.conf(), () -> cluster.util().getAdmin());
  }

  /**
   * A RegionServer for a cluster this JVM only knows the settings of ({@code clusterConf}: HDFS,
   * ZooKeeper, root directory): it can be launched and killed, but not awaited online.
   */
  public static Builder builder(String name, Configuration clusterConf) throws IOException {
    return new Builder(name, clusterConf, null);
  }

  /** Opens an Admin of the cluster (the minicluster's shared one). */
  interface AdminSource {
    Admin admin() throws IOException;
  }

  /** Settings of one RegionServer; every process it starts gets the same ones. */
  public static final class Builder {
    private final String name;
    private final Configuration clusterConf;
    private final AdminSource admin;
    private String heap = "512m";
    private Jdk jdk = Jdk.current();
    private final List<String> jvmArgs = new ArrayList<>();
    private final Map<String, String> site = new LinkedHashMap<>();
    private boolean stockCompatJars;

    private Builder(String name, Configuration clusterConf, AdminSource admin)
        throws IOException {
      this.name = name.replaceAll("[^A-Za-z0-9_.-]", "_");
      this.clusterConf = clusterConf;
      this.admin = admin;
      deleteTree(dir());
      Files.createDirectories(dir());
    }

    /** -Xms and -Xmx of the RegionServer JVM, such as "512m". */
    public Builder heap(String h) {
      this.heap = h;
      return this;
    }

    /**
     * The JDK the RegionServer runs on (11 or newer: {@link Main} is Java 11 bytecode); null
     * means the test JVM's own.
     */
    public Builder jdk(Jdk jdk) {
      this.jdk = jdk == null ? Jdk.current() : jdk;
      return this;
    }

    public Builder jvmArgs(String... args) {
      jvmArgs.addAll(Arrays.asList(args));
      return this;
    }

    /**
     * Runs the custom hbase-server with the stock hbase-hadoop-compat and hbase-hadoop2-compat
     * jars instead of the custom ones: the misdeployment of an operator who replaced only
     * hbase-server (the three custom jars of a revision go together).
     */
    public Builder stockCompatJars() {
      this.stockCompatJars = true;
      return this;
    }

    /** An hbase-site.xml setting of this RegionServer (over the minicluster's settings). */
    public Builder set(String key, String value) {
      site.put(key, value);
      return this;
    }

    /** The folder of this RegionServer's conf, logs and any files the test puts there. */
    public Path dir() {
      String root = System.getProperty("forkset.members.dir", "target/members");
      return Paths.get(root).toAbsolutePath().resolveSibling("regionservers").resolve(name);
    }

    /** Writes the conf and launches the first process; {@link #awaitOnline} waits for it. */
    public RegionServerProcess launch() throws IOException {
      RegionServerProcess rs = new RegionServerProcess(this);
      rs.launchProcess();
      return rs;
    }

    /** Launches the first process and waits until the master lists it as online. */
    public RegionServerProcess start() throws Exception {
      RegionServerProcess rs = launch();
      boolean ok = false;
      try {
        rs.awaitOnline();
        ok = true;
        return rs;
      } finally {
        if (!ok) {
          rs.close();
        }
      }
    }
  }

  /** The conf directory: hbase-site.xml, log4j2.properties. */
  public Path confDir() {
    return confDir;
  }

  public Path dir() {
    return dir;
  }

  public int port() {
    return port;
  }

  /** The server name of the running process (after {@link #awaitOnline}). */
  public ServerName serverName() {
    return serverName;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  /** How many processes this RegionServer has started (1 for the first). */
  public int generation() {
    return generation;
  }

  public Path logFile() {
    return process == null ? null : process.log();
  }

  private void writeConf() throws IOException {
    // The minicluster's settings that differ from HBase's defaults: HDFS (fs.defaultFS),
    // ZooKeeper quorum and port, root directory, replication, test timeouts.
    Configuration defaults = HBaseConfiguration.create();
    Map<String, String> site = new TreeMap<>();
    for (Map.Entry<String, String> e : spec.clusterConf) {
      if (!e.getValue().equals(defaults.getRaw(e.getKey()))) {
        site.put(e.getKey(), e.getValue());
      }
    }
    // This server's own: a distributed RegionServer on its own port, no web UI, local files in
    // its folder, a short ZooKeeper session so a dead instance on another port expires quickly.
    site.put("hbase.cluster.distributed", "true");
    site.put("hbase.regionserver.port", Integer.toString(port));
    site.put("hbase.regionserver.info.port", "-1");
    site.put("hbase.tmp.dir", dir.resolve("tmp").toString());
    site.put("hbase.local.dir", dir.resolve("local").toString());
    site.put("zookeeper.session.timeout", "10000");
    site.putAll(spec.site);
    StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (Map.Entry<String, String> e : site.entrySet()) {
      xml.append("  <property><name>").append(escape(e.getKey())).append("</name><value>")
          .append(escape(e.getValue())).append("</value></property>\n");
    }
    xml.append("</configuration>\n");
    write(confDir.resolve("hbase-site.xml"), xml.toString());
    write(confDir.resolve("log4j2.properties"), String.join("\n",
        "status = warn",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.target = SYSTEM_OUT",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = %d{ISO8601} %-5p [%t] %c{2}: %.1000m%n",
        "rootLogger = INFO,console",
        "logger.hadoop.name = org.apache.hadoop",
        "logger.hadoop.level = WARN",
        "logger.hbase.name = org.apache.hadoop.hbase",
        "logger.hbase.level = INFO",
        "logger.zk.name = org.apache.zookeeper",
        "logger.zk.level = WARN",
        "logger.forkset.name = dev.forkset",
        "logger.forkset.level = INFO", ""));
    // The test class path binds SLF4J to reload4j (log4j 1, from Hadoop's dependencies); the
    // log4j2 file above is for a class path that has log4j 2 instead.
    write(confDir.resolve("log4j.properties"), String.join("\n",
        "log4j.rootLogger=INFO,console",
        "log4j.appender.console=org.apache.log4j.ConsoleAppender",
        "log4j.appender.console.target=System.out",
        "log4j.appender.console.layout=org.apache.log4j.PatternLayout",
        "log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n",
        "log4j.logger.org.apache.hadoop=WARN",
        "log4j.logger.org.apache.hadoop.hbase=INFO",
        "log4j.logger.org.apache.zookeeper=WARN",
        "log4j.logger.org.apache.hadoop.hbase.zookeeper=WARN",
        "log4j.logger.dev.forkset=INFO", ""));
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  private static void write(Path file, String text) throws IOException {
    Files.write(file, text.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The RegionServer's class path: its conf directory, then the test class path without the
   * stock hbase-server jar (so HBase's classes come from the custom jar, and the module jars are
   * there as in lib/ after deployment).
   */
  private List<Path> classPath() {
    Path stock = ForksetJars.jar("forkset.hbase.stock.jar").toAbsolutePath().normalize();
    Path custom = ForksetJars.jar("forkset.hbase.custom.jar").toAbsolutePath().normalize();
    // With stockCompatJars: the stock compat jars first, the custom ones left out
    List<Path> customCompat = spec.stockCompatJars
        ? jars("forkset.hbase.custom.compat.jars") : List.of();
    List<Path> stockCompat = spec.stockCompatJars
        ? jars("forkset.hbase.stock.compat.jars") : List.of();
    List<Path> cp = new ArrayList<>();
    cp.add(confDir);
    cp.addAll(stockCompat);
    boolean sawCustom = false;
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      if (entry.isEmpty()) {
        continue;
      }
      Path p = Paths.get(entry).toAbsolutePath().normalize();
      if (p.equals(stock) || customCompat.contains(p) || stockCompat.contains(p)) {
        continue;
      }
      sawCustom |= p.equals(custom);
      cp.add(p);
    }
    if (!sawCustom) {
      cp.add(1, custom);
    }
    return cp;
  }

  /** The jars a system property lists, comma-separated. */
  private static List<Path> jars(String property) {
    String value = System.getProperty(property, "");
    List<Path> out = new ArrayList<>();
    for (String p : value.split(",")) {
      if (p.isEmpty() || p.startsWith("${") || !Files.isRegularFile(Paths.get(p))) {
        throw new IllegalStateException(property + "='" + value + "' does not list jars that"
            + " exist. Run the ITs through Maven (./mvnw verify -pl it), which passes them.");
      }
      out.add(Paths.get(p).toAbsolutePath().normalize());
    }
    return out;
  }

  private synchronized void launchProcess() throws IOException {
    if (isAlive()) {
      throw new IllegalStateException(spec.name + " is still running (pid " + pid() + ")");
    }
    closeJmx();
    generation++;
    serverName = null;
    process = ChildJvm.builder(spec.name + "-" + generation, Main.class.getName())
        .jdk(spec.jdk).heap(spec.heap).inheritOpens()
        .jvmArgs("-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError")
        .gcLog(dir.resolve("regionserver-" + generation + "-gc.log"))
        .jvmArgs(spec.jvmArgs)
        .systemProperty("java.net.preferIPv4Stack", "true")
        .systemProperty("log4j2.configurationFile",
            confDir.resolve("log4j2.properties").toUri().toString())
        .systemProperty("log4j.configuration",
            confDir.resolve("log4j.properties").toUri().toString())
        .systemProperty("hbase.log.dir", dir.toString())
        .classPath(classPath()).args("start")
        .dir(dir).log(dir.resolve("regionserver-" + generation + ".log")).start();
  }

  /**
   * Waits until the master lists this process's server (this host and port, a start code newer
   * than any earlier process's) as online. Fails with the log tail if the process dies first.
   */
  public ServerName awaitOnline() throws Exception {
    long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
    if (spec.admin == null) {
      throw new IllegalStateException(spec.name + " was built without a cluster to ask");
    }
    Admin admin = spec.admin.admin();
    while (System.currentTimeMillis() < deadline) {
      assertAlive();
      for (ServerName sn : admin.getRegionServers()) {
        if (sn.getPort() == port && sn.getStartcode() > lastStartcode && serving(admin, sn)) {
          serverName = sn;
          lastStartcode = sn.getStartcode();
          return sn;
        }
      }
      Thread.sleep(250);
    }
    throw new AssertionError(spec.name + " was not online in " + START_TIMEOUT_MS + " ms\n"
        + logTail(60));
  }

  /**
   * True once the server answers RPCs (the master lists a RegionServer when it reports for duty,
   * a little before the server stops answering "not running yet").
   */
  private static boolean serving(Admin admin, ServerName sn) {
    try {
      admin.getRegions(sn);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Starts a new process on the same conf, port and cache paths, and waits until it is online. */
  public ServerName restart() throws Exception {
    launchProcess();
    return awaitOnline();
  }

  /** Starts a new process on the same conf, port and cache paths; {@link #awaitOnline} waits. */
  public void relaunch() throws IOException {
    launchProcess();
  }

  /**
   * Waits for the process to end on its own and returns its exit status; fails with the log tail
   * if it is still running after {@code timeoutMs}.
   */
  public int awaitExit(long timeoutMs) throws InterruptedException {
    return process.waitFor(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** Exit status of a JVM killed by SIGKILL (128 + 9). */
  public static final int EXIT_SIGKILL = ChildJvm.EXIT_SIGKILL;

  /** SIGKILL, then waits for the process to be gone; returns the exit status (137). */
  public int kill() throws InterruptedException {
    closeJmx();
    int status = process.kill9();
    if (status != EXIT_SIGKILL) {
      throw new AssertionError(spec.name + " exited with " + status + " before the SIGKILL"
          + " (expected " + EXIT_SIGKILL + ")\n" + logTail(40));
    }
    return status;
  }

  /** A JMX connection to the running process, through the attach API (no port is opened). */
  public synchronized MBeanServerConnection jmx() throws IOException {
    if (jmx == null) {
      try {
        com.sun.tools.attach.VirtualMachine vm =
            com.sun.tools.attach.VirtualMachine.attach(Long.toString(pid()));
        try {
          jmx = JMXConnectorFactory.connect(new JMXServiceURL(vm.startLocalManagementAgent()));
        } finally {
          vm.detach();
        }
      } catch (com.sun.tools.attach.AttachNotSupportedException e) {
        throw new IOException("Cannot attach to " + spec.name + " (pid " + pid() + ")", e);
      }
    }
    return jmx.getMBeanServerConnection();
  }

  /**
   * The RegionServer's counters as they are now ({@link LiveServerCounters}), named like the
   * attributes of its {@value #SERVER_BEAN} bean, such as {@code l2CacheHitCount}. Waits (up to
   * 60 s) until the server has registered its metrics.
   */
  public Map<String, Long> counters(String... attributes) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    ObjectName name = new ObjectName(LiveServerCounters.NAME);
    while (true) {
      assertAlive();
      long[] values = (long[]) jmx().invoke(name, "read", new Object[] {attributes},
          new String[] {String[].class.getName()});
      if (values != null) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < attributes.length; i++) {
          out.put(attributes[i], values[i]);
        }
        return out;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError(spec.name + ": no server metrics registered after 60 s");
      }
      Thread.sleep(250);
    }
  }

  @Override
  public String toString() {
    return spec.name + (serverName == null ? "" : " " + serverName);
  }

  public String logText() {
    return process == null ? "" : process.logText();
  }

  /** Lines of the current process's log that contain {@code text}. */
  public List<String> logLines(String text) {
    List<String> out = new ArrayList<>();
    for (String line : logText().split("\n")) {
      if (line.contains(text)) {
        out.add(line);
      }
    }
    return out;
  }

  /** The last {@code lines} lines of the current process's log, headed by its path. */
  public String logTail(int lines) {
    return process == null ? "" : process.logTail(lines);
  }

  /** Throws an AssertionError with the exit status and log tail if the process has ended. */
  public void assertAlive() {
    process.assertAlive();
  }

  private synchronized void closeJmx() {
    if (jmx != null) {
      try {
        jmx.close();
      } catch (IOException ignored) {
        // the process may already be gone
      }
      jmx = null;
    }
  }

  /** Kills the process if it is still running (SIGKILL) and forgets it. */
  @Override
  public void close() {
    closeJmx();
    if (process != null) {
      process.close();
    }
  }

  /** Deletes a folder and everything in it, if it exists. */
  public static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (java.util.stream.Stream<Path> files = Files.walk(root)) {
      for (Path p : (Iterable<Path>) files.sorted(java.util.Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }

  // A free port below Linux's default ephemeral range (32768-60999): the child binds it only
  // seconds later, and a port the OS handed out as ephemeral (new ServerSocket(0)) can be taken
  // meanwhile by any outgoing connection of the minicluster (HDFS, ZooKeeper), which failed a
  // RegionServer's start with "bind(..) failed: Address already in use".
  private static int freePort() throws IOException {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = 20_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(12_000);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return port;
      } catch (IOException taken) {
        // try another
      }
    }
    throw new IOException("No free loopback port found between 20000 and 32000");
  }

  /**
   * Main class of the RegionServer JVM: prints which hbase-server jar and patches it runs, then
   * runs {@code HRegionServer.main} with the arguments ("start"), as {@code hbase regionserver
   * start} does.
   */
  public static final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
      Path jar = ForksetJars.codeSource(org.apache.hadoop.hbase.regionserver.HRegion.class);
      String module;
      try {
        module = ForksetJars.codeSource(Class.forName("dev.forkset.hbase.pmem.PmemIOEngineProvider"))
            .toString();
      } catch (ClassNotFoundException e) {
        module = "none";
      }
      System.out.println("forkset-harness: hbase-server from " + jar + " patches="
          + ForksetJars.manifestAttribute(jar, ForksetJars.PATCHES) + " pmem-cache=" + module
          + " java=" + System.getProperty("java.version") + " pid="
          + ProcessHandle.current().pid());
      System.out.flush();
      LiveServerCounters.register();
      org.apache.hadoop.hbase.regionserver.HRegionServer.main(args);
    }
  }
}
