package dev.forkset.series;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.apache.maven.plugin.MojoFailureException;

/**
 * Keeps a custom jar at the bytecode level of its upstream jar: a recompiled class must have the
 * class-file version of the upstream class it replaces, or it fails to load (too new) on the JVMs
 * the upstream release supports, or is a different build than upstream ships (too old).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Only the header is read: bytes 0-3 are {@code CAFEBABE}, 6-7 the major version
 *       (JVMS 4.1). Java N is major N + 44.
 *   <li>A class the upstream jar does not have (a patch adds it) is held to the newest class of
 *       the upstream jar outside {@code META-INF/versions/}, which is the release upstream
 *       compiles at; multi-release copies are newer by design and are not counted.
 * </ol>
 */
final class BytecodeLevel {
  private static final String VERSIONS = "META-INF/versions/";

  private BytecodeLevel() {}

  /** The class-file major version in a class file's first bytes. */
  static int major(byte[] header) {
    if (header.length < 8 || (header[0] & 0xff) != 0xCA || (header[1] & 0xff) != 0xFE
        || (header[2] & 0xff) != 0xBA || (header[3] & 0xff) != 0xBE) {
      throw new IllegalArgumentException("Not a class file: it does not start with CAFEBABE");
    }
    return ((header[6] & 0xff) << 8) | (header[7] & 0xff);
  }

  /** "Java 8 (class-file major 52)". */
  static String describe(int major) {
    return "Java " + (major - 44) + " (class-file major " + major + ")";
  }

  private static int major(InputStream in, String name) throws IOException {
    byte[] header = in.readNBytes(8);
    try {
      return major(header);
    } catch (IllegalArgumentException e) {
      throw new IOException(name + ": " + e.getMessage(), e);
    }
  }

  /** The newest class-file version among the jar's classes outside META-INF/versions/. */
  static int newestBaseClass(JarFile jar) throws IOException {
    int newest = 0;
    Enumeration<JarEntry> entries = jar.entries();
    while (entries.hasMoreElements()) {
      JarEntry e = entries.nextElement();
      if (e.getName().endsWith(".class") && !e.getName().startsWith(VERSIONS)
          && !e.getName().endsWith("module-info.class")) {
        try (InputStream in = jar.getInputStream(e)) {
          newest = Math.max(newest, major(in, e.getName()));
        }
      }
    }
    return newest;
  }

  /**
   * Fails naming every class of {@code ours} (paths relative to {@code classes}) whose
   * class-file version differs from the upstream class of the same name, or, for a class
   * upstream lacks, from the upstream jar's level. {@code property} and {@code pom} say where
   * the compile level is set.
   */
  static void check(JarFile upstream, Path classes, Set<String> ours, String property, String pom)
      throws IOException, MojoFailureException {
    List<String> problems = new ArrayList<>();
    TreeMap<Integer, Integer> wanted = new TreeMap<>();
    Integer jarLevel = null;
    for (String name : ours) {
      if (!name.endsWith(".class") || name.startsWith(VERSIONS)) {
        continue;
      }
      int mine;
      try (InputStream in = Files.newInputStream(classes.resolve(name))) {
        mine = major(in, name);
      }
      JarEntry theirs = upstream.getJarEntry(name);
      int expected;
      String what;
      if (theirs != null) {
        try (InputStream in = upstream.getInputStream(theirs)) {
          expected = major(in, name);
        }
        what = "the upstream class it replaces is ";
      } else {
        if (jarLevel == null) {
          jarLevel = newestBaseClass(upstream);
        }
        expected = jarLevel;
        what = "it is new, and the newest class of the upstream jar is ";
      }
      if (mine != expected) {
        problems.add(name + " is " + describe(mine) + "; " + what + describe(expected));
        wanted.merge(expected, 1, Integer::sum);
      }
    }
    if (!problems.isEmpty()) {
      int release = wanted.lastKey() - 44;
      throw new MojoFailureException("The custom jar would not keep the bytecode level of "
          + upstream.getName() + ":\n  " + String.join("\n  ", problems) + "\n  A replaced class"
          + " must load on every JVM the upstream release supports and nowhere else. Set "
          + property + " to " + release + " in " + pom + " (the javac --release of the patched"
          + " sources).");
    }
  }
}
