package dev.forkset.it.hazelcast;

import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.MemberProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Failures in member logs ({@code HazelcastCluster.exceptionsInLogs}) that a test may explain,
 * each a pattern with the reason it is not a failure of what the test checks.
 */
final class MemberLogs {
  /**
   * Hazelcast's own JMX: two threads of a member creating the same map proxy at once both
   * register its IMap MBean, and the second logs InstanceAlreadyExistsException. Only with
   * {@code hazelcast.jmx: true}, which the tests set to read map statistics; stock members do it
   * too.
   */
  static final Pattern JMX_REGISTRATION_RACE =
      Pattern.compile("javax\\.management\\.InstanceAlreadyExistsException: com\\.hazelcast:");

  /**
   * How long after an operation a member's log may still gain a backup timeout for it: the
   * members' backup timeout ({@code hazelcast.operation.backup.timeout.millis}, 5 s by default)
   * plus one scan of the invocation monitor (every second), which fails the invocations that
   * waited that long for a backup acknowledgement and then logs their count.
   */
  static final long BACKUP_TIMEOUT_DETECTION_MILLIS = 5_000 + 1_000;

  /** The invocation monitor's line for a scan that found timeouts. */
  private static final Pattern BACKUP_TIMEOUTS = Pattern.compile("backup-timeouts:(\\d+)");

  private MemberLogs() {}

  /**
   * Backup acknowledgements the members' invocations waited for in vain after the marks (from
   * its start for a member started after them), as "member: count" for each member that logged
   * any (empty when none did). Every invocation of the test started before
   * {@code lastOperationNanos} (System.nanoTime once its last operation had returned); one that
   * waits in vain is failed, and counted in the log, by the monitor's first scan after the
   * backup timeout, so the logs are read once {@link #BACKUP_TIMEOUT_DETECTION_MILLIS} have
   * passed since then.
   */
  static List<String> backupTimeouts(HazelcastCluster cluster,
      Map<MemberProcess, Integer> marks, long lastOperationNanos) throws InterruptedException {
    long wait = BACKUP_TIMEOUT_DETECTION_MILLIS
        - (System.nanoTime() - lastOperationNanos) / 1_000_000;
    if (wait > 0) {
      Thread.sleep(wait);
    }
    List<String> counts = new ArrayList<>();
    for (MemberProcess m : cluster.members()) {
      String log = m.logText();
      Matcher found = BACKUP_TIMEOUTS.matcher(log);
      found.region(Math.min(marks.getOrDefault(m, 0), log.length()), log.length());
      int sum = 0;
      while (found.find()) {
        sum += Integer.parseInt(found.group(1));
      }
      if (sum > 0) {
        counts.add(m.name() + ": " + sum);
      }
    }
    return counts;
  }

  /** The lines no pattern explains. */
  static List<String> unexplained(List<String> lines, Pattern... explained) {
    List<String> left = new ArrayList<>();
    for (String line : lines) {
      boolean ok = false;
      for (Pattern p : explained) {
        ok |= p.matcher(line).find();
      }
      if (!ok) {
        left.add(line);
      }
    }
    return left;
  }
}
