package dev.forkset.childjvm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/** A JDK a child runs on: its home, its version and the flags that differ between 8 and 9+. */
public final class Jdk {
  private final Path home;
  private final String version;

  private Jdk(Path home, String version) {
    this.home = home;
    this.version = version;
  }

  /** The JDK this JVM runs on. */
  public static Jdk current() {
    return at(Paths.get(System.getProperty("java.home")));
  }

  /**
   * The JDK at {@code home}, its version read from its {@code release} file (JAVA_VERSION, such
   * as 11.0.32.1, or 1.8.0_504 for JDK 8); "" when it has none.
   */
  public static Jdk at(Path home) {
    String version = "";
    try {
      for (String line : Files.readAllLines(home.resolve("release"), StandardCharsets.UTF_8)) {
        if (line.startsWith("JAVA_VERSION=")) {
          version = line.substring("JAVA_VERSION=".length()).replace("\"", "").trim();
        }
      }
    } catch (IOException e) {
      // no release file: a JRE image without one, or not a JDK at all
    }
    if (version.isEmpty() && home.equals(Paths.get(System.getProperty("java.home")))) {
      version = System.getProperty("java.version");
    }
    return new Jdk(home, version);
  }

  public Path home() {
    return home;
  }

  /** JAVA_VERSION of the release file, such as 17.0.15 or 1.8.0_504; "" when unknown. */
  public String version() {
    return version;
  }

  /** The feature release: 8 for 1.8.0_504, 17 for 17.0.15; 0 when unknown. */
  public int feature() {
    String v = version.startsWith("1.") ? version.substring(2) : version;
    int end = 0;
    while (end < v.length() && Character.isDigit(v.charAt(end))) {
      end++;
    }
    return end == 0 ? 0 : Integer.parseInt(v.substring(0, end));
  }

  /** True for JDK 8, which has neither modules (no --add-opens) nor unified logging. */
  public boolean isJava8() {
    return feature() == 8;
  }

  public Path java() {
    return home.resolve("bin").resolve("java");
  }

  /** Flags that write the GC log (with safepoint pauses) to {@code file}, in this JDK's syntax. */
  public List<String> gcLogFlags(Path file) {
    if (isJava8()) {
      return Arrays.asList("-Xloggc:" + file, "-XX:+PrintGCDetails", "-XX:+PrintGCDateStamps",
          "-XX:+PrintGCApplicationStoppedTime");
    }
    return Collections.singletonList("-Xlog:gc*,safepoint:file=" + file + ":time,uptime,level,tags");
  }

  @Override
  public String toString() {
    return home + " (" + (version.isEmpty() ? "unknown version" : version) + ")";
  }
}
