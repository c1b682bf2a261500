package dev.forkset.series;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/** Test helper: compiles small Java sources with the JDK's compiler into class files and jars. */
final class Compiled {
  private Compiled() {}

  /**
   * Compiles {@code sources} (path such as {@code p/A.java} to content) at {@code release} into
   * {@code out} and returns the class files written, relative to {@code out}, sorted.
   */
  static List<String> compile(Path out, int release, Map<String, String> sources)
      throws IOException {
    Path src = Files.createTempDirectory("compiled-src");
    List<String> files = new ArrayList<>();
    for (Map.Entry<String, String> e : sources.entrySet()) {
      Path file = src.resolve(e.getKey());
      Files.createDirectories(file.getParent());
      Files.write(file, e.getValue().getBytes(StandardCharsets.UTF_8));
      files.add(file.toString());
    }
    Files.createDirectories(out);
    List<String> args = new ArrayList<>(Arrays.asList("--release", Integer.toString(release),
        "-d", out.toString(), "-Xlint:-options", "-implicit:none", "-sourcepath", src.toString()));
    args.addAll(files);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc = javac.run(null, null, null, args.toArray(new String[0]));
    if (rc != 0) {
      throw new IllegalStateException("javac failed (" + rc + ") for " + sources.keySet());
    }
    return classes(out);
  }

  /** Class files under {@code dir}, relative and with '/' separators, sorted. */
  static List<String> classes(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile)
          .map(p -> dir.relativize(p).toString().replace('\\', '/'))
          .sorted().collect(Collectors.toList());
    }
  }

  /** Compiles {@code sources} at {@code release} and packs the classes into {@code jar}. */
  static Path jar(Path jar, int release, Map<String, String> sources) throws IOException {
    return zip(jar, entries(release, sources));
  }

  /** Compiles {@code sources} at {@code release}: class file name to bytes, sorted. */
  static Map<String, byte[]> entries(int release, Map<String, String> sources) throws IOException {
    Path classes = Files.createTempDirectory("compiled-classes");
    Map<String, byte[]> entries = new TreeMap<>();
    for (String name : compile(classes, release, sources)) {
      entries.put(name, Files.readAllBytes(classes.resolve(name)));
    }
    return entries;
  }

  /** Writes {@code entries} (name to bytes) into a zip at {@code jar}, in map order. */
  static Path zip(Path jar, Map<String, byte[]> entries) throws IOException {
    Files.createDirectories(jar.getParent());
    try (OutputStream file = Files.newOutputStream(jar);
        ZipOutputStream out = new ZipOutputStream(file)) {
      for (Map.Entry<String, byte[]> e : entries.entrySet()) {
        ZipEntry entry = new ZipEntry(e.getKey());
        entry.setLastModifiedTime(FileTime.fromMillis(1_500_000_000_000L));
        out.putNextEntry(entry);
        out.write(e.getValue());
        out.closeEntry();
      }
    }
    return jar;
  }

  /** One source map from alternating path and content arguments. */
  static Map<String, String> sources(String... pathAndContent) {
    Map<String, String> m = new TreeMap<>();
    for (int i = 0; i < pathAndContent.length; i += 2) {
      m.put(pathAndContent[i], pathAndContent[i + 1]);
    }
    return m;
  }
}
