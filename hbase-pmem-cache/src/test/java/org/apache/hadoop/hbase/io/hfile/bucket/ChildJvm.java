package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A JVM of its own running a main class of the test class path, for faults that need a real
 * process: kill -9, a second process on the same files, a SIGBUS. Its output is collected line by
 * line; {@link #close()} kills and reaps it on every exit path.
 */
final class ChildJvm implements AutoCloseable {
  private final Process process;
  private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final StringBuffer output = new StringBuffer();
  private final Thread reader;

  private ChildJvm(Process process) {
    this.process = process;
    this.reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          output.append(line).append('\n');
          lines.add(line);
        }
      } catch (IOException e) {
        output.append("[reader: ").append(e).append("]\n");
      }
    }, "child-jvm-output");
    reader.setDaemon(true);
    reader.start();
  }

  /** The command line of a JVM like this one (same JDK, class path, module opens). */
  static List<String> command(Class<?> main, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
    cmd.add("-Xmx512m");
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("--add-") || a.startsWith("-Dlog4j")) {
        cmd.add(a);
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(Arrays.asList(args));
    return cmd;
  }

  static ChildJvm start(Class<?> main, String... args) throws IOException {
    return start(command(main, args));
  }

  static ChildJvm start(List<String> command) throws IOException {
    return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
  }

  /** Waits for a line starting with {@code prefix} and returns it. */
  String await(String prefix, long timeoutSeconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    while (true) {
      long left = deadline - System.nanoTime();
      String line = lines.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
      if (line == null) {
        if (!process.isAlive()) {
          reader.join(5000);
          throw new AssertionError("child exited with " + process.exitValue() + " before \""
              + prefix + "\":\n" + output);
        }
        if (left <= 0) {
          throw new AssertionError("no \"" + prefix + "\" from the child within "
              + timeoutSeconds + " s:\n" + output);
        }
        continue;
      }
      if (line.startsWith(prefix)) {
        return line;
      }
    }
  }

  /** SIGKILL, as kill -9 sends it, and waits until the process is gone. */
  void kill9() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      throw new AssertionError("child did not die after SIGKILL");
    }
  }

  /** Waits for the child to exit and returns its exit code. */
  int waitFor(long timeoutSeconds) throws InterruptedException {
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      throw new AssertionError("child still running after " + timeoutSeconds + " s:\n"
          + output);
    }
    reader.join(5000);
    return process.exitValue();
  }

  String output() {
    return output.toString();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor(60, TimeUnit.SECONDS);
    }
  }
}
