package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.zip.ZipFile;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class ReleasedTestsTest {
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  private static final String SAME = "package p; public class Same { public static int one() { return 1; } }";

  @Test
  public void extract_copiesTheTestItsNestedClassesAndTheHelpersThatDiffer() throws Exception {
    Path line = Compiled.jar(tmp.getRoot().toPath().resolve("line-tests.jar"), 8,
        Compiled.sources(
            "p/Same.java", SAME,
            "p/Helper.java", "package p; public class Helper { public static int two() { return 2; } }",
            "p/Other.java", "package p; public class Other { }",
            "p/TestX.java", "package p; public class TestX { int x = Same.one(); }"));
    Path release = Compiled.jar(tmp.getRoot().toPath().resolve("release-tests.jar"), 8,
        Compiled.sources(
            "p/Same.java", SAME,
            // Changed in the release: the released test needs this version.
            "p/Helper.java", "package p; public class Helper { public static int two() { return 2; }"
                + " public static int three() { return Deep.three(); } }",
            // New in the release, used by the changed helper only.
            "p/Deep.java", "package p; class Deep { static int three() { return 3; } }",
            "p/Other.java", "package p; public class Other { int changed; }",
            "p/TestX.java", "package p; public class TestX { int x = Same.one() + Helper.three();"
                + " static class Inner { } }"));
    Path dir = tmp.newFolder().toPath();
    List<UpstreamTests.Entry> entries = UpstreamTests.parse("list",
        Arrays.asList("mod p.TestX from 1.1")).entries();
    try (ZipFile r = new ZipFile(release.toFile()); ZipFile l = new ZipFile(line.toFile())) {
      List<String> helpers = ReleasedTests.extract(entries, r, l, dir);
      assertEquals(Arrays.asList("p/Helper.class", "p/Deep.class"), helpers);
    }
    assertEquals(Arrays.asList("p/Deep.class", "p/Helper.class", "p/TestX$Inner.class",
        "p/TestX.class"), Compiled.classes(dir));
  }

  @Test
  public void classesUsedBy_namesReferencedClassesAsJarPaths() throws Exception {
    Path out = tmp.newFolder().toPath();
    Compiled.compile(out, 8, Compiled.sources("p/A.java",
        "package p; public class A { String[] s; int[] i; Object o = new java.util.ArrayList<A>(); }"));
    java.util.Set<String> used = ReleasedTests.classesUsedBy(
        java.nio.file.Files.readAllBytes(out.resolve("p/A.class")));
    assertTrue(used.toString(), used.contains("java/util/ArrayList"));
    assertTrue(used.toString(), used.contains("p/A"));
    assertTrue(used.toString(), used.stream().noneMatch(u -> u.startsWith("[") || u.length() == 1));
  }
}
