package dev.forkset.childjvm;

import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.Assume;

/**
 * JDKs beside the one running the tests, for children that must run on another Java: JDK 8 and
 * 11 for the oldest lines (HBase 2.1.2, Hazelcast 5.3.8), JDK 25 for generational ZGC. Each is a
 * system property the build passes ({@code forkset.jdk8.home}, ...). A test that needs a missing
 * JDK is skipped with the reason, unless the environment variable {@value #REQUIRE} is set (CI
 * sets it), in which case it fails and says how to install the JDK.
 */
public final class Jdks {
  /** Environment variable that turns a missing JDK from a skip into a failure. */
  public static final String REQUIRE = "FORKSET_REQUIRE_JDKS";

  private Jdks() {}

  /** JDK 8, from forkset.jdk8.home (installed by .ci/install-jdk8). */
  public static Jdk jdk8() {
    return find("forkset.jdk8.home", 8, "run .ci/install-jdk8 (Debian's OpenJDK 8 with its own"
        + " glibc, no root needed) or pass -Dforkset.jdk8.home=<a JDK 8>");
  }

  /** JDK 11, from forkset.jdk11.home (installed by .ci/install-jdk11). */
  public static Jdk jdk11() {
    return find("forkset.jdk11.home", 11, "run .ci/install-jdk11 (Debian's OpenJDK 11, no root"
        + " needed) or pass -Dforkset.jdk11.home=<a JDK 11>");
  }

  /** JDK 25, from forkset.jdk25.home (the Temurin 25 JDK installed beside the default one). */
  public static Jdk jdk25() {
    return find("forkset.jdk25.home", 25, "install a JDK 25 and pass -Dforkset.jdk25.home=<it>");
  }

  private static Jdk find(String property, int feature, String howToInstall) {
    String value = System.getProperty(property, "");
    String problem = null;
    Jdk jdk = null;
    if (value.isEmpty() || value.startsWith("${")) {
      problem = "System property " + property + " is not set";
    } else {
      jdk = Jdk.at(Paths.get(value));
      if (!Files.isExecutable(jdk.java())) {
        problem = "No JDK " + feature + " at " + property + "=" + value;
      } else if (jdk.feature() != feature) {
        problem = property + "=" + value + " is Java " + jdk.version() + ", not " + feature;
      }
    }
    if (problem == null) {
      return jdk;
    }
    String message = problem + ": " + howToInstall + ".";
    if (System.getenv(REQUIRE) != null) {
      throw new AssertionError(message + " (" + REQUIRE + " is set, so this is a failure)");
    }
    Assume.assumeTrue(message, false);
    return jdk;
  }
}
