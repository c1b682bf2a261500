package dev.forkset.it.harness;

import java.nio.file.Path;

/** Which Hazelcast a member runs: the stock jar, or the custom jar with the eviction module. */
public enum Flavor {
  STOCK,
  CUSTOM;

  /** The member class path entries for this flavor (the harness adds its own classes). */
  Path[] jars() {
    if (this == STOCK) {
      return new Path[] {ForksetJars.jar("forkset.hazelcast.stock.jar")};
    }
    return new Path[] {ForksetJars.jar("forkset.hazelcast.custom.jar"),
        ForksetJars.jar("forkset.hazelcast.module.jar")};
  }
}
