package dev.forkset.it.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.Assume;

/**
 * JDKs beside the one running the tests, for JVMs that must run on another Java: JDK 8 and 11 for
 * the oldest lines (HBase 2.1.2, Hazelcast 5.3.8), JDK 25 for generational ZGC. A test that needs a missing JDK is
 * skipped with the reason, unless the environment variable {@value #REQUIRE} is set (CI sets it),
 * in which case it fails and says how to install the JDK.
 */
public final class Jdks {
  /** Environment variable that turns a missing JDK from a skip into a failure. */
  public static final String REQUIRE = "FORKSET_REQUIRE_JDKS";

  private Jdks() {}

  /** JDK 8, from forkset.jdk8.home (installed by .ci/install-jdk8). */
  public static Path jdk8() {
    return find("forkset.jdk8.home", 8, "run .ci/install-jdk8 (Debian's OpenJDK 8 with its own"
        + " glibc, no root needed) or pass -Dforkset.jdk8.home=<a JDK 8>");
  }

  /** JDK 11, from forkset.jdk11.home (installed by .ci/install-jdk11). */
  public static Path jdk11() {
    return find("forkset.jdk11.home", 11, "run .ci/install-jdk11 (Debian's OpenJDK 11, no root"
        + " needed) or pass -Dforkset.jdk11.home=<a JDK 11>");
  }

  /** JDK 25, from forkset.jdk25.home (the Temurin 25 JDK installed beside the default one). */
  public static Path jdk25() {
    return find("forkset.jdk25.home", 25, "install a JDK 25 and pass -Dforkset.jdk25.home=<it>");
  }

  private static Path find(String property, int feature, String howToInstall) {
    String value = System.getProperty(property, "");
    Path home = Paths.get(value);
    String problem = null;
    String version = value.isEmpty() ? "" : version(home);
    if (value.isEmpty() || value.startsWith("${")) {
      problem = "System property " + property + " is not set";
    } else if (!Files.isExecutable(home.resolve("bin").resolve("java"))) {
      problem = "No JDK " + feature + " at " + property + "=" + value;
    } else if (!version.equals(Integer.toString(feature)) && !version.startsWith(feature + ".")
        && !version.startsWith("1." + feature + ".")) {
      problem = property + "=" + value + " is Java " + version + ", not " + feature;
    }
    if (problem == null) {
      return home;
    }
    String message = problem + ": " + howToInstall + ".";
    if (System.getenv(REQUIRE) != null) {
      throw new AssertionError(message + " (" + REQUIRE + " is set, so this is a failure)");
    }
    Assume.assumeTrue(message, false);
    return home;
  }

  /**
   * JAVA_VERSION from a JDK's release file (such as 11.0.32.1, or 1.8.0_504 for JDK 8), or ""
   * when it has none.
   */
  public static String version(Path home) {
    try {
      for (String line : Files.readAllLines(home.resolve("release"))) {
        if (line.startsWith("JAVA_VERSION=")) {
          return line.substring("JAVA_VERSION=".length()).replace("\"", "").trim();
        }
      }
    } catch (java.io.IOException e) {
      // no release file
    }
    return "";
  }
}
