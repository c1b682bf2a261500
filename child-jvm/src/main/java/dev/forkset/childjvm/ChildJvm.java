package dev.forkset.childjvm;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A JVM of its own, started for a test: a Hazelcast member, a RegionServer, a minicluster, a
 * process to kill -9. Every test launcher starts its JVMs here, so all of them get the same
 * safeguards and the same way to wait for them.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The child runs {@link ChildMain}, which halts the child when its stdin closes; this object
 *       keeps the pipe open until {@link #close} or {@link #kill9}. So no child outlives its test
 *       JVM, even one killed by SIGKILL or by Surefire's timeout. A shutdown hook of this JVM
 *       also kills every child still running (a normal exit, or an error before {@code close}).
 *   <li>stdout and stderr go to one log file (appended, so the log of a restarted child keeps its
 *       earlier runs when the caller passes the same file), headed by the command line. Waits read
 *       that file: {@link #await} scans it from a cursor, line by line, so a protocol of request
 *       and answer lines and a "started" wait are the same operation, and the log a failure
 *       message shows is the file the developer opens.
 *   <li>A wait fails, with the exit status and the log's tail, as soon as the child is dead: a
 *       child that died is never waited for until the timeout.
 *   <li>{@link #terminate} sends SIGTERM with {@code kill}, not {@code Process.destroy}, which
 *       closes stdin too and so would halt the child before its shutdown hooks finish (a
 *       Hazelcast graceful shutdown, an HBase cache persist). Under a wrapper (strace), both
 *       signals reach the JVM itself, found below the wrapper in {@code /proc}.
 * </ol>
 */
public final class ChildJvm implements AutoCloseable {
  /** Exit status of a JVM ended by SIGKILL (128 + 9). */
  public static final int EXIT_SIGKILL = 137;
  /** Exit status of a JVM that ran its shutdown hooks after SIGTERM (128 + 15). */
  public static final int EXIT_SIGTERM = 143;

  private static final Set<ChildJvm> LIVE = ConcurrentHashMap.newKeySet();
  private static final long POLL_MS = 20;

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      for (ChildJvm child : LIVE) {
        child.process.destroyForcibly();
      }
    }, "forkset-reap-children"));
  }

  private final String name;
  private final Process process;
  private final OutputStream stdin; // kept open: closing it (or this JVM's death) halts the child
  private final Path log;
  private final long pid; // the process started: the wrapper's, under a wrapper
  private final boolean wrapped;
  private long cursor; // byte offset in the log up to which await has read whole lines

  private ChildJvm(String name, Process process, Path log, long headerLength, boolean wrapped) {
    this.name = name;
    this.wrapped = wrapped;
    this.process = process;
    this.stdin = process.getOutputStream();
    this.log = log;
    this.pid = pidOf(process);
    this.cursor = headerLength;
  }

  /** A child that runs {@code mainClass} (through {@link ChildMain}). */
  public static Builder builder(String name, String mainClass) {
    return new Builder(name, mainClass);
  }

  /** Settings of one child JVM. */
  public static final class Builder {
    private final String name;
    private final String mainClass;
    private Jdk jdk = Jdk.current();
    private String heap;
    private final List<String> jvmArgs = new ArrayList<>();
    private final Map<String, String> systemProperties = new LinkedHashMap<>();
    private final List<Path> classPath = new ArrayList<>();
    private final List<String> args = new ArrayList<>();
    private Path dir;
    private Path log;
    private Path gcLog;
    private boolean inheritOpens;
    private boolean appendLog;
    private final List<String> wrapper = new ArrayList<>();

    private Builder(String name, String mainClass) {
      this.name = name;
      this.mainClass = mainClass;
    }

    /** The JDK the child runs on (the test JVM's own by default). */
    public Builder jdk(Jdk jdk) {
      this.jdk = jdk;
      return this;
    }

    /** -Xms and -Xmx, such as "256m". */
    public Builder heap(String heap) {
      this.heap = heap;
      return this;
    }

    public Builder jvmArgs(String... flags) {
      jvmArgs.addAll(Arrays.asList(flags));
      return this;
    }

    public Builder jvmArgs(List<String> flags) {
      jvmArgs.addAll(flags);
      return this;
    }

    public Builder systemProperty(String key, String value) {
      systemProperties.put(key, value);
      return this;
    }

    /** Class path entries, in order; this module's classes are added after them. */
    public Builder classPath(Path... entries) {
      classPath.addAll(Arrays.asList(entries));
      return this;
    }

    public Builder classPath(List<Path> entries) {
      classPath.addAll(entries);
      return this;
    }

    /** The class path of this JVM (Surefire's test class path when run by Surefire). */
    public Builder classPathOfThisJvm() {
      String cp = System.getProperty("surefire.test.class.path",
          System.getProperty("java.class.path"));
      for (String entry : cp.split(File.pathSeparator)) {
        if (!entry.isEmpty()) {
          classPath.add(Paths.get(entry));
        }
      }
      return this;
    }

    /**
     * The {@code --add-opens}, {@code --add-exports} and log configuration flags this JVM runs
     * with (what HBase and Hadoop need on JDK 17); dropped for a JDK 8 child.
     */
    public Builder inheritOpens() {
      this.inheritOpens = true;
      return this;
    }

    /** Arguments of the main class. */
    public Builder args(String... values) {
      args.addAll(Arrays.asList(values));
      return this;
    }

    public Builder args(List<String> values) {
      args.addAll(values);
      return this;
    }

    /** The working directory (created); the log goes there unless {@link #log} names a file. */
    public Builder dir(Path directory) {
      this.dir = directory;
      return this;
    }

    /** The log file (stdout and stderr); {@code <dir>/<name>.log} by default. */
    public Builder log(Path file) {
      this.log = file;
      return this;
    }

    /** Appends to the log instead of replacing it (a child started again on the same files). */
    public Builder appendLog() {
      this.appendLog = true;
      return this;
    }

    /** Writes the GC log there, in the syntax of the child's JDK. */
    public Builder gcLog(Path file) {
      this.gcLog = file;
      return this;
    }

    /**
     * A program the JVM runs under, such as {@code strace -f -o trace.txt}: the command line
     * starts with these words. The program must pass stdin on to the JVM (the watchdog reads
     * it there) and end when the JVM ends.
     */
    public Builder wrapper(String... words) {
      wrapper.addAll(Arrays.asList(words));
      return this;
    }

    /** The command line the child is started with. */
    public List<String> command() {
      List<String> cmd = new ArrayList<>(wrapper);
      cmd.add(jdk.java().toString());
      if (heap != null) {
        cmd.add("-Xms" + heap);
        cmd.add("-Xmx" + heap);
      }
      if (gcLog != null) {
        cmd.addAll(jdk.gcLogFlags(gcLog.toAbsolutePath()));
      }
      if (inheritOpens && !jdk.isJava8()) {
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
          if (a.startsWith("--add-opens") || a.startsWith("--add-exports")
              || a.startsWith("-Dio.netty.tryReflectionSetAccessible")) {
            cmd.add(a);
          }
        }
      }
      cmd.addAll(jvmArgs);
      for (Map.Entry<String, String> e : systemProperties.entrySet()) {
        cmd.add("-D" + e.getKey() + "=" + e.getValue());
      }
      List<Path> cp = new ArrayList<>(classPath);
      Path self = codeSource(ChildMain.class);
      if (!cp.contains(self)) {
        cp.add(self);
      }
      cmd.add("-cp");
      cmd.add(join(cp));
      cmd.add(ChildMain.class.getName());
      cmd.add(mainClass);
      cmd.addAll(args);
      return cmd;
    }

    /** Starts the child; it runs until {@link ChildJvm#close}, a kill, or its own exit. */
    public ChildJvm start() throws IOException {
      Path work = (dir != null ? dir : Paths.get(".")).toAbsolutePath();
      Files.createDirectories(work);
      Path file = (log != null ? log : work.resolve(name + ".log")).toAbsolutePath();
      Files.createDirectories(file.getParent());
      List<String> cmd = command();
      byte[] header = ("$ " + String.join(" ", cmd) + "\n").getBytes(StandardCharsets.UTF_8);
      long start = appendLog && Files.exists(file) ? Files.size(file) : 0;
      if (start == 0) {
        Files.write(file, header);
      } else {
        Files.write(file, header, java.nio.file.StandardOpenOption.APPEND);
      }
      Process p = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(file.toFile())).start();
      ChildJvm child = new ChildJvm(name, p, file, start + header.length, !wrapper.isEmpty());
      LIVE.add(child);
      return child;
    }
  }

  public String name() {
    return name;
  }

  public long pid() {
    return pid;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The exit status; fails while the child runs. */
  public int exitValue() {
    return process.exitValue();
  }

  public Path log() {
    return log;
  }

  /** The whole log: the command line, then everything the child printed. */
  public String logText() {
    try {
      return Files.exists(log) ? new String(Files.readAllBytes(log), StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "<cannot read " + log + ": " + e + ">";
    }
  }

  /** The last {@code lines} lines of the log, headed by its path. */
  public String logTail(int lines) {
    return tail(log, lines);
  }

  /** The last {@code lines} lines of a text file, headed by its path. */
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

  /** Sends one line to the child's stdin ({@link ChildMain#nextLine} reads it there). */
  public synchronized void send(String line) throws IOException {
    stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    stdin.flush();
  }

  /**
   * Waits for the next line of the log, after the cursor, that {@code pattern} finds, moves the
   * cursor past it and returns its match. Lines before it are passed over. Fails with the log's
   * tail when the child ends first or the timeout passes.
   */
  public Matcher await(Pattern pattern, long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + unit.toNanos(timeout);
    while (true) {
      boolean alive = process.isAlive();
      Matcher m = scan(pattern);
      if (m != null) {
        return m;
      }
      if (!alive) {
        throw new AssertionError(name + " (pid " + pid + ") exited with " + process.exitValue()
            + " before printing a line matching '" + pattern + "'\n" + logTail(60));
      }
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(name + " (pid " + pid + ") printed no line matching '"
            + pattern + "' in " + unit.toMillis(timeout) + " ms\n" + logTail(60));
      }
      Thread.sleep(POLL_MS);
    }
  }

  /** {@link #await(Pattern, long, TimeUnit)} for a line that starts with {@code prefix}. */
  public String awaitLineStartingWith(String prefix, long timeout, TimeUnit unit)
      throws InterruptedException {
    Matcher m = await(Pattern.compile("^" + Pattern.quote(prefix) + ".*$"), timeout, unit);
    return m.group();
  }

  /** Whole lines after the cursor, up to the first that matches (the cursor moves past it). */
  private synchronized Matcher scan(Pattern pattern) {
    try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
      long length = f.length();
      if (length <= cursor) {
        return null;
      }
      byte[] bytes = new byte[(int) Math.min(length - cursor, 64L << 20)];
      f.seek(cursor);
      f.readFully(bytes);
      int lineStart = 0;
      for (int i = 0; i < bytes.length; i++) {
        if (bytes[i] == '\n') {
          String line = new String(bytes, lineStart, i - lineStart, StandardCharsets.UTF_8);
          lineStart = i + 1;
          Matcher m = pattern.matcher(line);
          if (m.find()) {
            cursor += lineStart;
            return m;
          }
        }
      }
      cursor += lineStart;
      return null;
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read the log of " + name + ": " + log, e);
    }
  }

  /** Fails, with the exit status and the log's tail, unless the child is running. */
  public void assertAlive() {
    if (!process.isAlive()) {
      throw new AssertionError(name + " (pid " + pid + ") died with exit code "
          + process.exitValue() + "\n" + logTail(60));
    }
  }

  /** Waits for the child to exit and returns its status; fails after the timeout. */
  public int waitFor(long timeout, TimeUnit unit) throws InterruptedException {
    if (!process.waitFor(timeout, unit)) {
      throw new AssertionError(name + " (pid " + pid + ") still running after "
          + unit.toMillis(timeout) + " ms\n" + logTail(40));
    }
    LIVE.remove(this);
    return process.exitValue();
  }

  /**
   * SIGKILL, as kill -9 sends it; waits until the process is gone and returns its status. Under a
   * {@linkplain Builder#wrapper wrapper}, the JVM below it is killed first, so the JVM, not only
   * the wrapper, is gone when this returns.
   */
  public int kill9() throws InterruptedException {
    List<Long> below = wrapped ? descendants() : Collections.<Long>emptyList();
    signal("KILL", below);
    process.destroyForcibly();
    int status = waitFor(60, TimeUnit.SECONDS);
    // The wrapper died with them, so nobody waits for the processes below it: a process that was
    // sent SIGKILL may still be tearing down (its memory, its open files) after the wrapper's
    // exit. Waits until each is gone or a zombie for its new parent to reap.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    for (long p : below) {
      while (running(p)) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(name + ": process " + p + " below the wrapper still"
              + " runs 60 s after SIGKILL");
        }
        Thread.sleep(POLL_MS);
      }
    }
    closeStdin();
    return status;
  }

  /** Whether {@code pid} exists and is not a zombie (Linux {@code /proc/<pid>/stat}). */
  static boolean running(long pid) {
    try {
      String stat = new String(Files.readAllBytes(Paths.get("/proc/" + pid + "/stat")),
          StandardCharsets.UTF_8);
      return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
    } catch (IOException e) {
      return false; // gone
    }
  }

  /**
   * SIGTERM, as an operator's stop script sends it: the child's shutdown hooks run (stdin stays
   * open, so the watchdog does not cut them short). Waits for the exit and returns the status.
   * Under a {@linkplain Builder#wrapper wrapper} the signal goes to the JVM below it (a shell
   * would defer it, strace would pass it on or not), and the wrapper ends with the JVM.
   */
  public int terminate(long timeout, TimeUnit unit) throws InterruptedException {
    signal("TERM", wrapped ? descendants() : Collections.singletonList(pid));
    int status = waitFor(timeout, unit);
    closeStdin();
    return status;
  }

  /** Sends {@code kill -<sig>} to the processes (the JDK 8 test JVMs have no ProcessHandle). */
  private void signal(String sig, List<Long> pids) throws InterruptedException {
    if (pids.isEmpty()) {
      return;
    }
    List<String> cmd = new ArrayList<>(Arrays.asList("kill", "-" + sig));
    for (long p : pids) {
      cmd.add(Long.toString(p));
    }
    try {
      Process kill = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      kill.waitFor(10, TimeUnit.SECONDS);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot send SIG" + sig + " to " + name + " " + pids, e);
    }
  }

  /**
   * Every process below this one (Linux: {@code /proc/<pid>/task/<tid>/children}), the deepest
   * first: under a wrapper, the JVM and anything it started.
   */
  private List<Long> descendants() {
    List<Long> out = new ArrayList<>();
    addDescendants(pid, out);
    return out;
  }

  private static void addDescendants(long parent, List<Long> out) {
    File[] tasks = new File("/proc/" + parent + "/task").listFiles();
    if (tasks == null) {
      return;
    }
    for (File task : tasks) {
      String children;
      try {
        children = new String(Files.readAllBytes(new File(task, "children").toPath()),
            StandardCharsets.UTF_8).trim();
      } catch (IOException e) {
        continue; // the task ended
      }
      if (children.isEmpty()) {
        continue;
      }
      for (String c : children.split("\\s+")) {
        long child = Long.parseLong(c);
        addDescendants(child, out);
        out.add(child);
      }
    }
  }

  private void closeStdin() {
    try {
      stdin.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  /** Kills the child if it still runs (closes its stdin, then SIGKILL) and waits for it. */
  @Override
  public void close() {
    closeStdin();
    process.destroyForcibly();
    try {
      process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LIVE.remove(this);
  }

  @Override
  public String toString() {
    return name + " (pid " + pid + ")";
  }

  /** Class path entries joined with the platform's separator, each made absolute. */
  public static String join(List<Path> entries) {
    StringBuilder sb = new StringBuilder();
    for (Path p : entries) {
      if (sb.length() > 0) {
        sb.append(File.pathSeparatorChar);
      }
      sb.append(p.toAbsolutePath());
    }
    return sb.toString();
  }

  /** The jar or directory a class was loaded from. */
  public static Path codeSource(Class<?> type) {
    try {
      return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Process.pid() on JDK 9+, the UNIXProcess field on JDK 8. */
  private static long pidOf(Process p) {
    try {
      return (Long) Process.class.getMethod("pid").invoke(p);
    } catch (NoSuchMethodException e) {
      try {
        java.lang.reflect.Field f = p.getClass().getDeclaredField("pid");
        f.setAccessible(true);
        return f.getInt(p);
      } catch (ReflectiveOperationException e2) {
        return -1;
      }
    } catch (ReflectiveOperationException e) {
      return -1;
    }
  }
}
