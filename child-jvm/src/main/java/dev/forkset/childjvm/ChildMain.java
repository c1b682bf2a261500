package dev.forkset.childjvm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Entry point of every child JVM that {@link ChildJvm} starts: {@code ChildMain <main class>
 * <args>...}. It prints one line naming this JVM ({@value #STARTED_PREFIX} pid, Java version,
 * main class), starts the parent watchdog, then calls the main class's {@code main(String[])}.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The watchdog reads stdin, which the parent keeps open and never closes while it wants the
 *       child: end of stream means the parent closed it or died (even by SIGKILL, when the kernel
 *       closes its pipes), and the child halts at once with {@value #ORPHANED}, without shutdown
 *       hooks, as a child of a dead test must not run them against shared files.
 *   <li>Lines the parent sends ({@link ChildJvm#send}) are queued for the main class, which reads
 *       them with {@link #nextLine}: a child that takes commands on stdin shares the one pipe with
 *       the watchdog instead of reading it itself.
 *   <li>A start failure is rethrown as if the main class had been called directly, so the JVM
 *       exits as it would without this wrapper.
 * </ol>
 */
public final class ChildMain {
  /** Exit status of a child whose parent went away. */
  public static final int ORPHANED = 97;
  /** Start of the first line every child prints. */
  public static final String STARTED_PREFIX = "forkset-child: pid=";

  private static final BlockingQueue<String> LINES = new LinkedBlockingQueue<>();
  private static final String EOF = new String("eof"); // identity marks the end of stdin

  private ChildMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      throw new IllegalArgumentException("usage: ChildMain <main class> [args...]");
    }
    System.out.println(STARTED_PREFIX + pid() + " java=" + System.getProperty("java.version")
        + " main=" + args[0]);
    System.out.flush();
    Thread watchdog = new Thread(ChildMain::watch, "forkset-parent-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    Method main = Class.forName(args[0]).getMethod("main", String[].class);
    try {
      main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Exception) {
        throw (Exception) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw e;
    }
  }

  private static void watch() {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        LINES.add(line);
      }
    } catch (IOException ignored) {
      // the same as the end of the stream
    }
    LINES.add(EOF);
    System.out.println("forkset-child: the parent JVM is gone (stdin closed); halting");
    System.out.flush();
    Runtime.getRuntime().halt(ORPHANED);
  }

  /**
   * The next line the parent sent, or null when none came within the timeout. Never returns
   * after stdin closed: the watchdog halts the JVM then.
   */
  public static String nextLine(long timeout, TimeUnit unit) throws InterruptedException {
    String line = LINES.poll(timeout, unit);
    if (line == EOF) {
      LINES.add(EOF);
      Thread.sleep(Long.MAX_VALUE); // the watchdog is halting the JVM
    }
    return line;
  }

  /** This JVM's process id (RuntimeMXBean's name is "pid@host" on HotSpot from JDK 8 on). */
  static long pid() {
    String name = ManagementFactory.getRuntimeMXBean().getName();
    return Long.parseLong(name.substring(0, name.indexOf('@')));
  }
}
