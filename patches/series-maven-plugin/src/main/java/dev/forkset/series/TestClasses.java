package dev.forkset.series;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The test classes an upstream test run can find (tests jars, class folders): their names, the
 * methods each declares and its superclass, so {@link UpstreamTests} can resolve an entry's
 * patterns to the classes and methods they name, as Surefire will.
 *
 * <p>Only what resolving needs is read from a class file: the constant pool (for names), this and
 * the super class, and the method table. Methods a class inherits from a superclass found here
 * count as its own (JUnit runs them); nested classes are not test classes of their own here.
 */
final class TestClasses {
  /** A class: its superclass (binary name, or null) and the methods it declares. */
  static final class Info {
    final String superName;
    final Set<String> methods;

    Info(String superName, Set<String> methods) {
      this.superName = superName;
      this.methods = methods;
    }
  }

  private final Map<String, Info> classes; // binary name (a.b.C, a.b.C$D) -> info
  private final String where;

  TestClasses(Map<String, Info> classes, String where) {
    this.classes = classes;
    this.where = where;
  }

  /** Reads every class of the jars and folders. */
  static TestClasses read(List<File> locations) throws IOException {
    Map<String, Info> out = new TreeMap<>();
    for (File f : locations) {
      if (f.isDirectory()) {
        Path root = f.toPath();
        try (Stream<Path> files = Files.walk(root)) {
          for (Path p : (Iterable<Path>) files::iterator) {
            String rel = root.relativize(p).toString().replace(File.separatorChar, '/');
            if (rel.endsWith(".class")) {
              try (InputStream in = Files.newInputStream(p)) {
                out.put(binaryName(rel), parse(in));
              }
            }
          }
        }
      } else if (f.isFile()) {
        try (ZipFile zip = new ZipFile(f)) {
          for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements(); ) {
            ZipEntry z = e.nextElement();
            if (z.getName().endsWith(".class") && !z.getName().startsWith("META-INF/")) {
              try (InputStream in = zip.getInputStream(z)) {
                out.put(binaryName(z.getName()), parse(in));
              }
            }
          }
        }
      }
    }
    return new TestClasses(out, locations.toString());
  }

  private static String binaryName(String path) {
    return path.substring(0, path.length() - ".class".length()).replace('/', '.');
  }

  /** Where the classes came from, for messages. */
  String where() {
    return where;
  }

  /** The top-level classes of {@code packageName} whose simple name the glob matches, sorted. */
  List<String> simpleNames(String packageName, String simpleGlob) {
    List<String> out = new ArrayList<>();
    String prefix = packageName.isEmpty() ? "" : packageName + ".";
    java.util.regex.Pattern glob = UpstreamTests.glob(simpleGlob);
    for (String name : classes.keySet()) {
      if (name.startsWith(prefix)) {
        String simple = name.substring(prefix.length());
        if (!simple.contains(".") && !simple.contains("$") && glob.matcher(simple).matches()) {
          out.add(simple);
        }
      }
    }
    return out;
  }

  /** The methods of a class, its superclasses' found here included; empty if unknown. */
  Set<String> methods(String className) {
    Set<String> out = new LinkedHashSet<>();
    Set<String> seen = new LinkedHashSet<>();
    for (String c = className; c != null && seen.add(c); ) {
      Info info = classes.get(c);
      if (info == null) {
        break;
      }
      out.addAll(info.methods);
      c = info.superName;
    }
    out.remove("<init>");
    out.remove("<clinit>");
    return Collections.unmodifiableSet(out);
  }

  /** The superclass and declared methods of one class file (JVMS 4.1, 4.4, 4.6). */
  static Info parse(InputStream stream) throws IOException {
    DataInputStream in = new DataInputStream(stream);
    if (in.readInt() != 0xCAFEBABE) {
      throw new IOException("not a class file");
    }
    in.readUnsignedShort(); // minor
    in.readUnsignedShort(); // major
    int count = in.readUnsignedShort();
    String[] utf8 = new String[count];
    int[] classNameIndex = new int[count];
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1: utf8[i] = in.readUTF(); break;
        case 7: classNameIndex[i] = in.readUnsignedShort(); break;
        case 8: case 16: case 19: case 20: in.readUnsignedShort(); break;
        case 15: in.readUnsignedByte(); in.readUnsignedShort(); break;
        case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: in.readInt(); break;
        case 5: case 6: in.readLong(); i++; break; // takes two slots
        default: throw new IOException("unknown constant pool tag " + tag + " at " + i);
      }
    }
    in.readUnsignedShort(); // access
    in.readUnsignedShort(); // this class
    int superIndex = in.readUnsignedShort();
    String superName = superIndex == 0 ? null
        : utf8[classNameIndex[superIndex]].replace('/', '.');
    int interfaces = in.readUnsignedShort();
    for (int i = 0; i < interfaces; i++) {
      in.readUnsignedShort();
    }
    skipMembers(in, null, utf8); // fields
    Set<String> methods = new LinkedHashSet<>();
    skipMembers(in, methods, utf8);
    return new Info(superName, methods);
  }

  /** Reads a field or method table; collects the names into {@code names} when it is not null. */
  private static void skipMembers(DataInputStream in, Set<String> names, String[] utf8)
      throws IOException {
    int n = in.readUnsignedShort();
    for (int i = 0; i < n; i++) {
      in.readUnsignedShort(); // access
      String name = utf8[in.readUnsignedShort()];
      in.readUnsignedShort(); // descriptor
      if (names != null) {
        names.add(name);
      }
      int attributes = in.readUnsignedShort();
      for (int a = 0; a < attributes; a++) {
        in.readUnsignedShort();
        int length = in.readInt();
        for (int skipped = 0; skipped < length; ) {
          int k = in.skipBytes(length - skipped);
          if (k <= 0) {
            throw new IOException("class file ends inside an attribute");
          }
          skipped += k;
        }
      }
    }
  }
}
