package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.Test;

/**
 * The module jar is built once, against the default Hazelcast line, and deployed on every line
 * that has a series. Hazelcast reshapes internal types between lines (MapContainer and
 * PartitionContainer are classes on 5.3 and interfaces on 5.5+), and a call compiled against one
 * shape fails on the other with IncompatibleClassChangeError at run time, on the first put that
 * reaches it. This test compiles the module's sources again against the oldest line's custom jar
 * and requires every class to reach other classes exactly as the built classes do: same
 * instruction (invokevirtual vs invokeinterface, field access, casts), owner, name and descriptor.
 * Together they prove that every reference of the built jar resolves on the oldest line too.
 */
public class LinksOnOldestLineTest {
  /** Instructions that name another class's member or the class itself. */
  private static final Pattern LINKING = Pattern.compile(
      "\\b(invoke\\w+|[gs]etfield|[gs]etstatic|checkcast|instanceof|new|anewarray|ldc\\w*)\\b");

  @Test
  public void moduleBuiltForDefaultLine_linksTheSameWayOnOldestLine() throws Exception {
    Path oldestJar = Paths.get(required("forkset.hazelcast.oldest.custom.jar"));
    assertTrue("the oldest line's custom jar exists: " + oldestJar, Files.isRegularFile(oldestJar));
    Path built = Paths.get("target/classes");
    Path recompiled = Files.createTempDirectory("links-oldest-line");

    List<String> sources;
    try (Stream<Path> files = Files.walk(Paths.get("src/main/java"))) {
      sources = files.filter(p -> p.toString().endsWith(".java")).map(Path::toString)
          .collect(Collectors.toList());
    }
    List<String> args = new ArrayList<>(Arrays.asList("--release",
        required("forkset.hazelcast.release"), "-proc:none", "-nowarn", "-d",
        recompiled.toString(), "-cp", oldestJar.toString()));
    args.addAll(sources);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
    int rc = javac.run(null, diagnostics, diagnostics, args.toArray(new String[0]));
    assertEquals("the module's sources compile against " + oldestJar.getFileName() + ":\n"
        + diagnostics, 0, rc);

    List<Path> classes;
    try (Stream<Path> files = Files.walk(built)) {
      classes = files.filter(p -> p.toString().endsWith(".class")).collect(Collectors.toList());
    }
    assertTrue("built classes in " + built, classes.size() > 5);
    StringBuilder differences = new StringBuilder();
    for (Path cls : classes) {
      Path other = recompiled.resolve(built.relativize(cls).toString());
      assertTrue(other + " compiled", Files.isRegularFile(other));
      List<String> a = linkage(cls);
      List<String> b = linkage(other);
      if (!a.equals(b)) {
        differences.append("\n").append(built.relativize(cls)).append(":");
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
          String x = i < a.size() ? a.get(i) : "<none>";
          String y = i < b.size() ? b.get(i) : "<none>";
          if (!x.equals(y)) {
            differences.append("\n  built:  ").append(x).append("\n  oldest: ").append(y);
          }
        }
      }
    }
    assertTrue("classes built for the default line reach Hazelcast differently than on "
        + oldestJar.getFileName() + "; they would fail to link there. Reach the type through"
        + " an API that has the same shape on both lines:" + differences,
        differences.length() == 0);
  }

  /** The linking instructions of a class, without offsets and constant-pool indices. */
  private static List<String> linkage(Path classFile) throws Exception {
    // javap of the JDK running the build, in process (java.util.spi.ToolProvider is JDK 9+;
    // this test class is Java 8 bytecode and runs on the build's JDK, which has javac too)
    Class<?> tools = Class.forName("java.util.spi.ToolProvider");
    Object javap = ((java.util.Optional<?>) tools.getMethod("findFirst", String.class)
        .invoke(null, "javap")).orElseThrow(() -> new AssertionError("no javap in this JDK"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int rc = (Integer) tools.getMethod("run", PrintWriter.class, PrintWriter.class,
        String[].class).invoke(javap, new PrintWriter(out), new PrintWriter(err),
        new String[] {"-c", "-p", classFile.toString()});
    assertEquals("javap " + classFile + ": " + err, 0, rc);
    String text = out.toString();
    List<String> lines = new ArrayList<>();
    for (String line : text.split("\n")) {
      String l = line.trim().replaceFirst("^\\d+: ", "").replaceAll("#\\d+(, *\\d+)?", "")
          .replaceAll("\\s+", " ");
      if (LINKING.matcher(l).lookingAt()) {
        lines.add(l);
      }
    }
    return lines;
  }

  private static String required(String property) {
    String v = System.getProperty(property);
    assertTrue("system property " + property + " is set (run through Maven)",
        v != null && !v.isEmpty() && !v.startsWith("${"));
    return v;
  }
}
