package dev.forkset.series;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import javassist.bytecode.ClassFile;

/**
 * The upstream test classes a line runs from a later release's tests jar (entries
 * {@code from <release>} of {@link UpstreamTests}): the release updated them for a change the
 * series backports. They are copied into a folder that a Surefire execution puts before the
 * line's tests jar, with the test kit the line's tests jar has. A class of the release's tests jar
 * that they use and whose bytes differ from the line's (or that the line's lacks) is copied too,
 * and so on for what it uses: the test runs with the helpers it was released with, and every
 * other class is the line's.
 */
final class ReleasedTests {
  private ReleasedTests() {}

  /**
   * Copies into {@code dir} the classes (nested ones included) that {@code entries} name in
   * {@code release}, and the helpers they need from it; returns the helpers' class files.
   * Fails when {@code dir} already holds a different file of the same name (two releases).
   */
  static List<String> extract(List<UpstreamTests.Entry> entries, ZipFile release, ZipFile line,
      Path dir) throws IOException {
    Set<String> copied = new LinkedHashSet<>();
    Deque<String> todo = new ArrayDeque<>();
    for (Enumeration<? extends ZipEntry> e = release.entries(); e.hasMoreElements();) {
      String name = e.nextElement().getName();
      for (UpstreamTests.Entry entry : entries) {
        if (named(entry, name) && copied.add(name)) {
          copy(release, name, dir);
          todo.add(name);
        }
      }
    }
    List<String> helpers = new ArrayList<>();
    while (!todo.isEmpty()) {
      for (String used : classesUsedBy(bytes(release, todo.poll()))) {
        String file = used + ".class";
        if (copied.contains(file) || release.getEntry(file) == null) {
          continue;
        }
        copied.add(file);
        byte[] lines = line.getEntry(file) == null ? null : bytes(line, file);
        if (lines == null || !Arrays.equals(lines, bytes(release, file))) {
          copy(release, file, dir);
          helpers.add(file);
          todo.add(file);
        }
      }
    }
    return helpers;
  }

  /** Whether {@code name}, a jar entry, is a class (or nested class) the entry names. */
  private static boolean named(UpstreamTests.Entry entry, String name) {
    String dir = entry.packageName.isEmpty() ? "" : entry.packageName.replace('.', '/') + "/";
    if (!name.startsWith(dir) || !name.endsWith(".class") || name.indexOf('/', dir.length()) >= 0) {
      return false;
    }
    String simple = name.substring(dir.length(), name.length() - ".class".length());
    int dollar = simple.indexOf('$');
    return UpstreamTests.glob(entry.simpleName)
        .matcher(dollar < 0 ? simple : simple.substring(0, dollar)).matches();
  }

  /** The classes a class file names in its constant pool, as jar paths without ".class". */
  static Set<String> classesUsedBy(byte[] classFile) throws IOException {
    Set<String> out = new LinkedHashSet<>();
    ClassFile cf = new ClassFile(new DataInputStream(new ByteArrayInputStream(classFile)));
    for (String n : cf.getConstPool().getClassNames()) {
      String c = n.replaceFirst("^\\[+", "");
      if (c.startsWith("L") && c.endsWith(";")) {
        c = c.substring(1, c.length() - 1);
      } else if (c.length() == 1) {
        continue; // an array of a primitive type
      }
      out.add(c.replace('.', '/'));
    }
    return out;
  }

  private static byte[] bytes(ZipFile jar, String name) throws IOException {
    try (InputStream in = jar.getInputStream(jar.getEntry(name))) {
      return in.readAllBytes();
    }
  }

  private static void copy(ZipFile jar, String name, Path dir) throws IOException {
    byte[] content = bytes(jar, name);
    Path to = dir.resolve(name);
    if (Files.exists(to) && !Arrays.equals(Files.readAllBytes(to), content)) {
      throw new IOException(to + " is there already with other bytes: two releases supply "
          + name + "; let one release's entries name it");
    }
    Files.createDirectories(to.getParent());
    Files.write(to, content);
  }
}
