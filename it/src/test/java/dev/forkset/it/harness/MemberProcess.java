package dev.forkset.it.harness;

import dev.forkset.childjvm.ChildJvm;
import dev.forkset.childjvm.Jdk;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/** One Hazelcast member running in its own JVM (a {@link ChildJvm}). */
public final class MemberProcess {
  /** The line a member logs once it has joined the cluster. */
  static final Pattern STARTED = Pattern.compile(" is STARTED");

  private final ChildJvm jvm;
  private final Path gcLog;
  private JMXConnector jmx;

  MemberProcess(ChildJvm jvm, Path gcLog) {
    this.jvm = jvm;
    this.gcLog = gcLog;
  }

  public String name() {
    return jvm.name();
  }

  public long pid() {
    return jvm.pid();
  }

  public boolean isAlive() {
    return jvm.isAlive();
  }

  public Path logFile() {
    return jvm.log();
  }

  public Path gcLogFile() {
    return gcLog;
  }

  /** Waits until the member has joined its cluster; fails with its log if it dies first. */
  void awaitStarted(long timeoutMs) throws InterruptedException {
    jvm.await(STARTED, timeoutMs, TimeUnit.MILLISECONDS);
  }

  /** The loopback port the member listens on, from its "is STARTED" log line; -1 before. */
  public int port() {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\\[127\\.0\\.0\\.1\\]:(\\d+) is STARTED").matcher(logText());
    return m.find() ? Integer.parseInt(m.group(1)) : -1;
  }

  /** The Java version the member runs, from {@link MemberMain}'s first line; null before it. */
  public String javaVersion() {
    return startLine(3);
  }

  /** The file name of the Hazelcast jar the member runs, from {@link MemberMain}'s first line. */
  public String hazelcastJar() {
    String path = startLine(1);
    return path == null ? null : java.nio.file.Paths.get(path).getFileName().toString();
  }

  private String startLine(int group) {
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("(?m)^forkset-harness: hazelcast from (\\S+) patches=(.*) java=(\\S+)$")
        .matcher(logText());
    return m.find() ? m.group(group) : null;
  }

  /** A mark in the member's log (its length so far), for {@link #exceptionsInLog(int)}. */
  public int logMark() {
    return logText().length();
  }

  /**
   * What the member logged as a failure after {@code mark}: every SEVERE record, every WARNING
   * record that names an exception, and every throwable of a logged stack trace ("Caused by"
   * included), one line each. Empty when the member logged no failure.
   */
  public List<String> exceptionsInLog(int mark) {
    String text = logText();
    List<String> found = new java.util.ArrayList<>();
    for (String line : text.substring(Math.min(mark, text.length())).split("\n")) {
      String l = line.trim();
      if (l.startsWith("SEVERE:") || l.startsWith("WARNING:") && EXCEPTION_NAME.matcher(l).find()
          || THROWABLE_LINE.matcher(l).matches()) {
        found.add(l);
      }
    }
    return found;
  }

  /** A throwable's toString at the head of a stack trace: "a.b.FooException: message". */
  private static final java.util.regex.Pattern THROWABLE_LINE = java.util.regex.Pattern.compile(
      "(Caused by: )?([a-zA-Z_$][\\w$]*\\.)+[A-Z][\\w$]*(Exception|Error|Throwable)(: .*)?");
  private static final java.util.regex.Pattern EXCEPTION_NAME =
      java.util.regex.Pattern.compile("[A-Z][\\w$]*(Exception|Error)\\b");

  /**
   * Backup acknowledgements this member's invocations waited for in vain, from the invocation
   * monitor's INFO lines ("Invocations:N timeouts:N backup-timeouts:N member-left: N").
   */
  public int backupTimeouts() {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("backup-timeouts:(\\d+)").matcher(logText());
    int sum = 0;
    while (m.find()) {
      sum += Integer.parseInt(m.group(1));
    }
    return sum;
  }

  /**
   * Fails unless the member runs the line's jar and, when a JDK was chosen, that JDK's Java
   * (from the line {@link MemberMain} prints at start).
   */
  public void assertRuns(HazelcastLine line, Jdk jdk) {
    String jar = hazelcastJar();
    org.junit.Assert.assertTrue(name() + " runs Hazelcast " + line.version() + ", not " + jar,
        jar != null && jar.startsWith("hazelcast-" + line.version()));
    if (jdk != null) {
      org.junit.Assert.assertEquals(name() + " runs the Java of " + jdk, jdk.version(),
          javaVersion());
    }
  }

  /** True when the member's log shows an OutOfMemoryError. */
  public boolean sawOutOfMemoryError() {
    return logText().contains("java.lang.OutOfMemoryError");
  }

  /** Kills the member at once (SIGKILL): no migration, no shutdown hooks. */
  public void kill() throws InterruptedException {
    closeJmx();
    jvm.kill9();
  }

  /**
   * Graceful shutdown (SIGTERM; members run with hazelcast.shutdownhook.policy=GRACEFUL so their
   * partitions migrate first). Returns the exit code ({@link ChildJvm#EXIT_SIGTERM} when the
   * hooks ran); fails if the member does not stop in time.
   */
  public int shutdownGracefully(Duration timeout) throws InterruptedException {
    closeJmx();
    return jvm.terminate(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** A JMX connection to the member, through the attach API (no port is opened). */
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
        throw new IOException("Cannot attach to " + name() + " (pid " + pid() + ")", e);
      }
    }
    return jmx.getMBeanServerConnection();
  }

  /** Runs a full GC in the member (System.gc through JMX) and returns the heap then used. */
  public long heapUsedAfterFullGc() throws Exception {
    MBeanServerConnection c = jmx();
    ObjectName memory = new ObjectName("java.lang:type=Memory");
    c.invoke(memory, "gc", null, null);
    CompositeData usage = (CompositeData) c.getAttribute(memory, "HeapMemoryUsage");
    return (Long) usage.get("used");
  }

  public String logText() {
    return jvm.logText();
  }

  /** The last {@code lines} lines of the member's log, headed by its log path. */
  public String logTail(int lines) {
    return jvm.logTail(lines);
  }

  /** Throws an AssertionError describing the member's death, if it died. */
  public void assertAlive() {
    if (!jvm.isAlive()) {
      throw new AssertionError(name() + " (pid " + pid() + ") died with exit code "
          + jvm.exitValue() + (sawOutOfMemoryError() ? " after an OutOfMemoryError" : "")
          + "\n" + logTail(40));
    }
  }

  void closeJmx() {
    if (jmx != null) {
      try {
        jmx.close();
      } catch (IOException ignored) {
        // the member may already be gone
      }
      jmx = null;
    }
  }

  void reap() {
    closeJmx();
    jvm.close();
  }
}
