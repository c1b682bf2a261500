package dev.forkset.it.hazelcast;

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

  static long mb(long bytes) {
    return bytes >> 20;
  }
}
