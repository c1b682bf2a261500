package dev.forkset.it.harness;

/**
 * Which upstream Hazelcast line a member runs. The eviction module is built once (Java 11
 * bytecode, against the default line) and must work on every line the patch series covers.
 */
public enum HazelcastLine {
  /** The line the modules build against (hazelcast.modules.line, 5.7.0 by default). */
  DEFAULT("forkset.hazelcast."),
  /**
   * The oldest line with a series (hazelcast.oldest.line in the root pom, 5.3.8: the seed's 5.3
   * line, which runs on JDK 11 in the field).
   */
  OLDEST("forkset.hazelcast.oldest.");

  private final String prefix;

  HazelcastLine(String prefix) {
    this.prefix = prefix;
  }

  /** System property holding this line's stock or custom jar path. */
  String jarProperty(Flavor flavor) {
    return prefix + flavor.name().toLowerCase() + ".jar";
  }

  /** This line's upstream version, as the it/ pom passes it. */
  public String version() {
    String v = System.getProperty(prefix + "version");
    if (v == null || v.isEmpty() || v.startsWith("${")) {
      throw new IllegalStateException("System property " + prefix + "version is not set. Run the"
          + " ITs through Maven (./mvnw verify -pl it -am).");
    }
    return v;
  }
}
