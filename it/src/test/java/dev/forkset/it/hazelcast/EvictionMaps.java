package dev.forkset.it.hazelcast;

/** Map configurations the eviction ITs share: lines that go under "hazelcast:". */
final class EvictionMaps {
  private EvictionMaps() {}

  /**
   * One BINARY map with LRU eviction under USED_HEAP_SIZE {@code limitMb} (per member), and the
   * properties section with 271 partitions plus {@code extraProperties} (lines indented by two).
   */
  static String usedHeapMap(String name, int limitMb, int backups, String extraProperties) {
    return usedHeapMap(name, limitMb, backups, "", extraProperties);
  }

  /** The same with {@code otherMaps} (lines indented by two, as {@link #mapWithoutEviction}). */
  static String usedHeapMap(String name, int limitMb, int backups, String otherMaps,
      String extraProperties) {
    return "map:\n"
        + otherMaps
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

  /** A BINARY map without an eviction config, to go under "map:". */
  static String mapWithoutEviction(String name, int backups) {
    return "  " + name + ":\n"
        + "    in-memory-format: BINARY\n"
        + "    backup-count: " + backups + "\n";
  }

  static long mb(long bytes) {
    return bytes >> 20;
  }
}
