package dev.forkset.it.harness;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.jar.Attributes;
import java.util.jar.JarFile;

/** Where the custom and stock jars of this build are, and what their manifests say. */
public final class ForksetJars {
  /** Manifest attribute that lists the applied patches (written by series-maven-plugin). */
  public static final String PATCHES = "Forkset-Patches";
  /** Manifest attribute naming the upstream artifact a custom jar was built from. */
  public static final String UPSTREAM = "Forkset-Upstream";

  private ForksetJars() {}

  /** A jar path passed by the it/ pom as a system property; fails clearly when it is missing. */
  public static Path jar(String property) {
    String value = System.getProperty(property);
    if (value == null || value.isEmpty() || value.startsWith("${")) {
      throw new IllegalStateException("System property " + property + " is not set. Run the ITs"
          + " through Maven (./mvnw verify -pl it -am), which passes the jar paths.");
    }
    Path path = Paths.get(value);
    if (!Files.isRegularFile(path)) {
      throw new IllegalStateException(property + "=" + value + " is not a file. Build the jars"
          + " first: ./mvnw install -DskipTests");
    }
    return path;
  }

  /** The jar or directory a class was loaded from. */
  public static Path codeSource(Class<?> type) {
    try {
      return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A main attribute of a jar's manifest, or null. */
  public static String manifestAttribute(Path jar, String name) {
    if (!Files.isRegularFile(jar)) {
      return null;
    }
    try (JarFile file = new JarFile(jar.toFile())) {
      Attributes main = file.getManifest() == null ? null : file.getManifest().getMainAttributes();
      return main == null ? null : main.getValue(name);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read the manifest of " + jar, e);
    }
  }
}
