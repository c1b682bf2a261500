package dev.forkset.it.harness;

import java.nio.file.Path;

/** Which Hazelcast a member runs: the stock jar, or the custom jar with the eviction module. */
public enum Flavor {
  STOCK,
  CUSTOM;

  /** The member class path entries for this flavor on a line (the harness adds its own classes). */
  Path[] jars(HazelcastLine line) {
    Path server = ForksetJars.jar(line.jarProperty(this));
    if (this == STOCK) {
      return new Path[] {server};
    }
    return new Path[] {server, ForksetJars.jar("forkset.hazelcast.module.jar")};
  }
}
