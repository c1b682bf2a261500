package dev.forkset.series;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * Writes a custom jar: the upstream jar with every class of each patched compilation unit
 * replaced by the recompiled ones, byte for byte the same on every build of the same inputs.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Order: the manifest first (JarInputStream finds it only there), then the recompiled
 *       classes sorted by name, then the upstream entries in upstream order. Nothing depends on
 *       the order a directory walk returns.
 *   <li>Times: every entry gets {@code project.build.outputTimestamp}, set as the DOS local
 *       date-time fields ({@link java.util.zip.ZipEntry#setTimeLocal}) with no extended
 *       timestamp, so neither the clock, the class files' modification times nor the build
 *       machine's time zone reach the jar. Upstream times are not kept: an upstream entry with an
 *       extended (UTC) timestamp reads back in the machine's zone, which would make the bytes
 *       depend on it, as maven-jar-plugin's normalisation avoids too.
 *   <li>Replaced: {@code Unit.class}, {@code Unit$*.class} and their
 *       {@code META-INF/versions/N/} copies, so no stale nested, anonymous or multi-release
 *       class of a patched unit survives. Overlay refuses an upstream jar with such a
 *       multi-release copy before writing ({@link #versionedCopies}), so only the first two
 *       occur. Signature files are dropped (they would not match).
 *   <li>Deflate output is a function of the input bytes and the zlib build: the same JDK
 *       build gives the same bytes.
 * </ol>
 */
final class OverlayJar {
  private static final String VERSIONS = "META-INF/versions/";

  /** What a write did. */
  static final class Result {
    /** Upstream entries left out because a recompiled unit replaces them, in upstream order. */
    final List<String> replaced = new ArrayList<>();
    /** Recompiled entries written, sorted. */
    final List<String> added = new ArrayList<>();

    /**
     * Every entry whose presence or bytes come from the series: the replaced upstream entries in
     * upstream order, then the recompiled ones upstream does not have (new units, new nested
     * classes). Two custom jars whose entries of this list are equal carry the same series code.
     */
    List<String> fromSeries() {
      Set<String> out = new LinkedHashSet<>(replaced);
      out.addAll(added);
      return new ArrayList<>(out);
    }
  }

  private OverlayJar() {}

  /**
   * Parses {@code project.build.outputTimestamp} as Maven does: seconds since the epoch, or an
   * ISO-8601 date-time with an offset.
   */
  static Instant outputTimestamp(String value) {
    String hint = "Set project.build.outputTimestamp (root pom.xml) to an ISO-8601 date-time"
        + " such as 2026-01-01T00:00:00Z: the custom jars' entry times come from it, so that two"
        + " builds of one commit give the same bytes.";
    if (value == null || value.isBlank() || value.startsWith("${")) {
      throw new IllegalArgumentException("project.build.outputTimestamp is not set. " + hint);
    }
    try {
      if (value.chars().allMatch(Character::isDigit)) {
        return Instant.ofEpochSecond(Long.parseLong(value));
      }
      return OffsetDateTime.parse(value).toInstant();
    } catch (DateTimeParseException | NumberFormatException e) {
      throw new IllegalArgumentException("project.build.outputTimestamp='" + value + "' is not"
          + " a date-time. " + hint, e);
    }
  }

  /**
   * Writes {@code out}. {@code ours} are the recompiled files relative to {@code classes};
   * {@code units} the patched compilation units ({@code p/A} for {@code p/A.java}).
   */
  static Result write(JarFile upstream, Path classes, SortedSet<String> ours, List<String> units,
      Manifest manifest, Instant timestamp, Path out) throws IOException {
    return write(upstream, classes, ours, units, manifest, new TreeMap<>(), timestamp, out);
  }

  /**
   * As above; each entry of {@code rewritten} (name to bytes, such as the upstream artifact's
   * pom.properties) replaces the upstream entry of that name in its place, or is written after
   * the upstream entries, in name order, when upstream has none.
   */
  static Result write(JarFile upstream, Path classes, SortedSet<String> ours, List<String> units,
      Manifest manifest, SortedMap<String, byte[]> rewritten, Instant timestamp, Path out)
      throws IOException {
    LocalDateTime fixed = LocalDateTime.ofInstant(timestamp, ZoneOffset.UTC);
    Result result = new Result();
    Files.createDirectories(out.toAbsolutePath().getParent());
    try (OutputStream file = Files.newOutputStream(out);
        JarOutputStream jar = new JarOutputStream(file)) {
      Set<String> written = new HashSet<>();
      JarEntry mf = new JarEntry(JarFile.MANIFEST_NAME);
      mf.setTimeLocal(fixed);
      jar.putNextEntry(mf);
      manifest.write(jar);
      jar.closeEntry();
      written.add(JarFile.MANIFEST_NAME);
      written.add("META-INF/");
      for (String name : ours) {
        JarEntry entry = new JarEntry(name);
        entry.setTimeLocal(fixed);
        jar.putNextEntry(entry);
        Files.copy(classes.resolve(name), jar);
        jar.closeEntry();
        written.add(name);
        result.added.add(name);
      }
      Enumeration<JarEntry> entries = upstream.entries();
      while (entries.hasMoreElements()) {
        JarEntry e = entries.nextElement();
        String name = e.getName();
        if (ofReplacedUnit(name, units)) {
          result.replaced.add(name);
          continue;
        }
        if (written.contains(name) || signature(name)) {
          continue;
        }
        JarEntry copy = new JarEntry(name);
        copy.setTimeLocal(fixed);
        jar.putNextEntry(copy);
        if (rewritten.containsKey(name)) {
          jar.write(rewritten.get(name));
        } else {
          try (InputStream in = upstream.getInputStream(e)) {
            in.transferTo(jar);
          }
        }
        jar.closeEntry();
        written.add(name);
      }
      for (Map.Entry<String, byte[]> r : rewritten.entrySet()) {
        if (written.add(r.getKey())) {
          JarEntry entry = new JarEntry(r.getKey());
          entry.setTimeLocal(fixed);
          jar.putNextEntry(entry);
          jar.write(r.getValue());
          jar.closeEntry();
        }
      }
    }
    return result;
  }

  /**
   * The upstream entries under {@code META-INF/versions/N/} that are classes of a patched unit,
   * in upstream order. Overlay refuses a line with any: the pipeline compiles only the base
   * source, so such a copy could neither be kept (on a multi-release jar the JVM would load the
   * unpatched copy on JDK N and later) nor dropped (the patched base class would then run on
   * every JDK, without the copy's JDK-specific code).
   */
  static List<String> versionedCopies(JarFile upstream, List<String> units) {
    List<String> out = new ArrayList<>();
    Enumeration<JarEntry> entries = upstream.entries();
    while (entries.hasMoreElements()) {
      String name = entries.nextElement().getName();
      if (name.startsWith(VERSIONS) && ofReplacedUnit(name, units)) {
        out.add(name);
      }
    }
    return out;
  }

  private static boolean signature(String name) {
    String upper = name.toUpperCase(Locale.ROOT);
    return upper.equals("META-INF/INDEX.LIST")
        || (upper.startsWith("META-INF/") && upper.indexOf('/', "META-INF/".length()) < 0
            && (upper.endsWith(".SF") || upper.endsWith(".RSA") || upper.endsWith(".DSA")
                || upper.endsWith(".EC")));
  }

  /** True for Unit.class, Unit$Nested.class and their multi-release copies. */
  static boolean ofReplacedUnit(String entry, List<String> units) {
    String name = entry;
    if (name.startsWith(VERSIONS)) {
      int slash = name.indexOf('/', VERSIONS.length());
      if (slash < 0) {
        return false;
      }
      name = name.substring(slash + 1);
    }
    if (!name.endsWith(".class")) {
      return false;
    }
    for (String unit : units) {
      if (name.equals(unit + ".class") || name.startsWith(unit + "$")) {
        return true;
      }
    }
    return false;
  }
}
