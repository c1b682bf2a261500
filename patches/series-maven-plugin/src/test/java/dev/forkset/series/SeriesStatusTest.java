package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class SeriesStatusTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final String MAIN = "mod/src/main/java/";
  private static final String TEST = "mod/src/test/java/";
  private static final String A = "class A {\n  int a = 1;\n  int b = 2;\n  int c = 3;\n}\n";
  private static final String B = "class B {\n  int x = 1;\n}\n";
  private static final String D = "class D {\n}\n";

  private static String section(String file, String hunk) {
    String p = MAIN + "p/" + file;
    return "diff --git a/" + p + " b/" + p + "\n--- a/" + p + "\n+++ b/" + p + "\n" + hunk;
  }

  private static final String CHANGE_A =
      section("A.java", "@@ -2,3 +2,3 @@\n   int a = 1;\n-  int b = 2;\n+  int b = 20;\n   int c = 3;\n");
  private static final String CHANGE_B =
      section("B.java", "@@ -1,3 +1,3 @@\n class B {\n-  int x = 1;\n+  int x = 10;\n }\n");
  private static final String CHANGE_D = section("D.java", "@@ -1,2 +1,2 @@\n-class D {\n+final class D {\n }\n");

  private ZipFile jar(String... files) throws Exception {
    File f = tmp.newFile();
    try (ZipOutputStream out = new ZipOutputStream(new FileOutputStream(f))) {
      for (int i = 0; i < files.length; i += 2) {
        out.putNextEntry(new ZipEntry("p/" + files[i]));
        out.write(files[i + 1].getBytes(StandardCharsets.UTF_8));
        out.closeEntry();
      }
    }
    return new ZipFile(f);
  }

  private Series series() throws Exception {
    Path dir = tmp.newFolder().toPath();
    String[][] patches = {
        {"0001-a.patch", "Change a", "Upstream: HBASE-1\nForwarded: https://example.org/pr/1\nModule: none\n", CHANGE_A},
        {"0002-a-and-b.patch", "Change a and b", "Upstream: none\nForwarded: no\nModule: none\n",
            section("A.java", "@@ -1,2 +1,3 @@\n class A {\n+  int z = 0;\n   int a = 1;\n") + CHANGE_B},
        {"0003-d.patch", "Change d", "Upstream: none\nForwarded: not-needed\nModule: none\n", CHANGE_D}};
    StringBuilder list = new StringBuilder();
    for (String[] p : patches) {
      list.append(p[0]).append('\n');
      Files.write(dir.resolve(p[0]), Patches.mail(p[1], p[2], p[3]).getBytes(StandardCharsets.UTF_8));
    }
    Files.write(dir.resolve("series"), list.toString().getBytes(StandardCharsets.UTF_8));
    return Series.read(dir, Set.of());
  }

  @Test
  public void of_reportsApplyForwardedAndWhatAnotherVersionContains() throws Exception {
    // This line: D differs, so 0003 does not apply.
    try (ZipFile line = jar("A.java", A, "B.java", B, "D.java", "class D extends Object {\n}\n");
        // The next version: 0001 merged (with code moved down), half of 0002, nothing of 0003.
        ZipFile next = jar("A.java", "// moved\n// down\n" + A.replace("b = 2;", "b = 20;"),
            "B.java", B.replace("x = 1;", "x = 10;"), "D.java", D)) {
      List<SeriesStatus.Row> rows = SeriesStatus.of(series(), line, next, MAIN, TEST);
      assertEquals("yes", rows.get(0).applies);
      assertEquals("yes", rows.get(1).applies);
      assertEquals("no (see below)", rows.get(2).applies);
      assertTrue(rows.get(2).why.toString(), rows.get(2).why.get(0).startsWith("0003-d.patch:"
          + " mod/src/main/java/p/D.java: hunk #1"));
      assertEquals("https://example.org/pr/1", rows.get(0).forwarded);
      assertEquals("not-needed", rows.get(2).forwarded);
      assertEquals("HBASE-1", rows.get(0).upstream);

      assertEquals("yes", rows.get(0).contained);
      assertEquals("partly (1 of 2 files)", rows.get(1).contained);
      assertEquals("no", rows.get(2).contained);

      // Applied in order to the next version: 0001 is there already, so it no longer applies.
      assertEquals("no (see below)", rows.get(0).appliesThere);
      assertEquals("yes", rows.get(2).appliesThere);

      List<String> table = SeriesStatus.table(rows, "1.0", "1.1");
      assertTrue(table.get(0), table.get(0).matches("\\| patch +\\| form +\\| applies to 1.0 +\\|"
          + " upstream +\\| forwarded +\\| in 1.1 +\\| applies to 1.1 +\\|"));
      assertTrue(table.get(2), table.get(2).startsWith("| 0001-a.patch       | mail | yes "));
      assertTrue(table.toString(), table.stream().anyMatch(l -> l.startsWith(
          "On 1.0: 0003-d.patch: mod/src/main/java/p/D.java: hunk #1")));
      assertTrue(table.toString(), table.stream().anyMatch(l -> l.startsWith(
          "On 1.1: 0001-a.patch: mod/src/main/java/p/A.java: hunk #1")));
    }
  }

  @Test
  public void of_testsOnlyPatch_cannotBeCheckedAgainstASourcesJar() throws Exception {
    Path dir = tmp.newFolder().toPath();
    String t = TEST + "p/TestA.java";
    Files.write(dir.resolve("0001-t.patch"), Patches.wrap("A test", "diff --git a/" + t + " b/" + t
        + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + t + "\n@@ -0,0 +1 @@\n+class TestA {}\n"));
    Files.write(dir.resolve("series"), "0001-t.patch\n".getBytes(StandardCharsets.UTF_8));
    try (ZipFile line = jar("A.java", A)) {
      List<SeriesStatus.Row> rows = SeriesStatus.of(Series.read(dir, Set.of()), line, line, MAIN, TEST);
      assertEquals("n/a (adds tests only)", rows.get(0).contained);
    }
  }
}
