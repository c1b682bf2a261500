package dev.forkset.it.hazelcast;

import dev.forkset.it.harness.HazelcastLine;
import dev.forkset.it.harness.Jdks;
import dev.forkset.it.harness.MemberProcess;
import java.nio.file.Path;

/** Map configurations of the seed's scenarios (lines under "hazelcast:"). */
final class SeedScenarios {
  private SeedScenarios() {}

  static String usedHeapMap(String name, int limitMb, int backups, String extraProperties) {
    return "map:\n"
        + "  " + name + ":\n"
        + "    in-memory-format: BINARY\n"
        + "    backup-count: " + backups + "\n"
        + "    eviction:\n"
        + "      eviction-policy: LRU\n"
        + "      max-size-policy: USED_HEAP_SIZE\n"
        + "      size: " + limitMb + "\n"
        + "properties:\n"
        + "  hazelcast.partition.count: 271\n"
        + extraProperties;
  }

  /**
   * Fails unless the member runs the line's jar and, when a JDK was chosen, that JDK's Java
   * (from the line {@code MemberMain} prints at start).
   */
  static void assertRuns(MemberProcess m, HazelcastLine line, Path javaHome) {
    String jar = m.hazelcastJar();
    org.junit.Assert.assertTrue(m.name() + " runs Hazelcast " + line.version() + ", not " + jar,
        jar != null && jar.startsWith("hazelcast-" + line.version()));
    if (javaHome != null) {
      String expected = Jdks.version(javaHome);
      org.junit.Assert.assertEquals(m.name() + " runs the Java of " + javaHome, expected,
          m.javaVersion());
    }
  }

  static long mb(long bytes) {
    return bytes >> 20;
  }
}
