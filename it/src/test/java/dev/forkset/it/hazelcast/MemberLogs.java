package dev.forkset.it.hazelcast;

import java.util.ArrayList;
import java.util.List;
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

  private MemberLogs() {}

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
