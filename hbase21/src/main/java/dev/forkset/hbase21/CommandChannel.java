package dev.forkset.hbase21;

import dev.forkset.childjvm.ChildJvm;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The line protocol of the 2.1.2 child JVMs ({@code ClusterMain}, {@code
 * PerformanceEvaluationMain}): commands on the child's stdin, one answer line each on its stdout,
 * {@code @@ <n> ok key=value<TAB>...} or {@code @@ <n> error message}, where n numbers the
 * commands the child has read (0 answers its start).
 *
 * <p>The number is what ties an answer to its command: a command whose wait timed out may still
 * be answered later, and that late answer must not be taken for the next command's. An answer to
 * an earlier number is skipped.
 */
final class CommandChannel {
  private static final Pattern ANSWER = Pattern.compile("^@@ (\\d+) (.*)$");

  private final ChildJvm jvm;
  private final Path log; // the child's own log (log4j), shown on failure beside its stdout
  private long sent; // commands sent; the start's answer is number 0

  CommandChannel(ChildJvm jvm, Path log) {
    this.jvm = jvm;
    this.log = log;
  }

  /** Sends one command and waits for its answer; an error answer or a dead child fails. */
  synchronized Map<String, String> call(long timeoutMs, String line)
      throws IOException, InterruptedException {
    jvm.send(line);
    sent++;
    return answer(sent, timeoutMs, "'" + line + "'");
  }

  /** The answer numbered {@code number} (0: the start's), skipping earlier numbers. */
  synchronized Map<String, String> answer(long number, long timeoutMs, String what)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (true) {
      Matcher m;
      try {
        m = jvm.await(ANSWER, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (AssertionError e) {
        throw new IOException("HBase 2.1.2 " + jvm.name() + ", " + what + ": " + e.getMessage()
            + "\n" + ChildJvm.tail(log, 40), e);
      }
      long n = Long.parseLong(m.group(1));
      if (n < number) {
        continue; // the late answer of a command whose wait timed out
      }
      if (n > number) {
        throw new IllegalStateException(jvm.name() + " answered command " + n + " while " + what
            + " is command " + number);
      }
      return parse(m.group(2), what);
    }
  }

  private Map<String, String> parse(String answer, String what) throws IOException {
    if (!answer.startsWith("ok")) {
      throw new IOException("HBase 2.1.2 " + jvm.name() + ", " + what + ": " + answer + "\n"
          + jvm.logTail(30) + "\n" + ChildJvm.tail(log, 40));
    }
    Map<String, String> m = new LinkedHashMap<>();
    String body = answer.substring(2).trim();
    if (!body.isEmpty()) {
      for (String kv : body.split("\t")) {
        int eq = kv.indexOf('=');
        m.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    return m;
  }
}
