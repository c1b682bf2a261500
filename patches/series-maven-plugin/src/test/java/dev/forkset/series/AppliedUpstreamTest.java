package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class AppliedUpstreamTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final String MAIN = "mod/src/main/java/";
  private static final String TEST = "mod/src/test/java/";
  /** The line's file: 40 lines, so that two differences far apart make two hunks. */
  private static final String A = lines(1, 40);

  private static String lines(int from, int to) {
    StringBuilder b = new StringBuilder();
    for (int i = from; i <= to; i++) {
      b.append("  int f").append(i).append(" = ").append(i).append(";\n");
    }
    return b.toString();
  }

  private static String section(String file, String hunk) {
    String p = MAIN + "p/" + file;
    return "diff --git a/" + p + " b/" + p + "\n--- a/" + p + "\n+++ b/" + p + "\n" + hunk;
  }

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

  /**
   * 0001 backports f2 = 20 and f3 = 30 and names release 1.1; 0002, a change of our own, then
   * changes f39 in the same file, which 1.1 does not have.
   */
  private Series series(Path dir) throws Exception {
    String[][] patches = {
        {"0001-backport.patch", "HBASE-1 Backport",
            "Upstream: HBASE-1\nForwarded: not-needed\nModule: none\nApplied-Upstream: 1.1\n",
            section("A.java", "@@ -1,4 +1,4 @@\n   int f1 = 1;\n-  int f2 = 2;\n-  int f3 = 3;\n"
                + "+  int f2 = 20;\n+  int f3 = 30;\n   int f4 = 4;\n")},
        {"0002-ours.patch", "Ours", "Upstream: none\nForwarded: no\nModule: none\n",
            section("A.java", "@@ -38,3 +38,3 @@\n   int f38 = 38;\n-  int f39 = 39;\n"
                + "+  int f39 = 390;\n   int f40 = 40;\n")}};
    StringBuilder list = new StringBuilder();
    for (String[] p : patches) {
      list.append(p[0]).append('\n');
      Files.write(dir.resolve(p[0]), Patches.mail(p[1], p[2], p[3]).getBytes(StandardCharsets.UTF_8));
    }
    Files.write(dir.resolve("series"), list.toString().getBytes(StandardCharsets.UTF_8));
    return Series.read(dir, Set.of());
  }

  /** Release 1.1: the backported change, but f3 reformatted, and a line 0001 lacks near the end. */
  private static final String RELEASE = lines(1, 1) + "  int f2 = 20;\n  int f3 =  30;\n"
      + lines(4, 30) + "  int f30b = 0;\n" + lines(31, 40);

  @Test
  public void hunks_listEveryDifferenceOfThePatchedFilesUpToThatPatch() throws Exception {
    Path dir = tmp.newFolder().toPath();
    try (ZipFile line = jar("A.java", A); ZipFile release = jar("A.java", RELEASE)) {
      List<AppliedUpstream.Hunk> hunks = AppliedUpstream.hunks(series(dir), line,
          Map.of("1.1", release), MAIN, TEST);
      // 0002's f39 is not compared: the file is taken as the series leaves it after 0001.
      assertEquals(hunks.toString(), 2, hunks.size());
      AppliedUpstream.Hunk reformatted = hunks.get(0);
      assertEquals("0001-backport.patch", reformatted.patch);
      assertEquals("p/A.java", reformatted.file);
      assertEquals("1.1", reformatted.release);
      assertTrue(reformatted.lines.toString(), reformatted.lines.contains("-  int f3 = 30;"));
      assertTrue(reformatted.lines.toString(), reformatted.lines.contains("+  int f3 =  30;"));
      AppliedUpstream.Hunk missing = hunks.get(1);
      assertEquals(List.of("@@ -28,6 +28,7 @@", "   int f28 = 28;", "   int f29 = 29;",
          "   int f30 = 30;", "+  int f30b = 0;", "   int f31 = 31;", "   int f32 = 32;",
          "   int f33 = 33;"), missing.lines);
      assertEquals(12, missing.id.length());
    }
  }

  @Test
  public void check_failsOnAnUnrecordedHunkNamingPatchFileAndHunk() throws Exception {
    Path dir = tmp.newFolder().toPath();
    try (ZipFile line = jar("A.java", A); ZipFile release = jar("A.java", RELEASE)) {
      List<AppliedUpstream.Hunk> hunks = AppliedUpstream.hunks(series(dir), line,
          Map.of("1.1", release), MAIN, TEST);
      String formatting = hunks.get(0).id;
      String missing = hunks.get(1).id;
      Path record = dir.resolve(AppliedUpstream.FILE);
      Files.write(record, ("# reviewed\n0001-backport.patch p/A.java " + formatting
          + "  upstream reformatting\n").getBytes(StandardCharsets.UTF_8));

      List<String> problems = AppliedUpstream.check(hunks, record);
      assertEquals("upstream reformatting", hunks.get(0).reason);
      assertNull(hunks.get(1).reason);
      assertEquals(problems.toString(), 1, problems.size());
      String p = problems.get(0);
      assertTrue(p, p.startsWith("0001-backport.patch: p/A.java differs from 1.1 (its"
          + " Applied-Upstream) in hunk " + missing + ", which upstream-differences does not"
          + " record"));
      assertTrue(p, p.contains("+  int f30b = 0;"));
      assertTrue(p, p.contains("0001-backport.patch p/A.java " + missing + "  <why>"));

      // Recording it too accepts the series; a record of a hunk that no longer differs fails.
      Files.write(record, ("0001-backport.patch p/A.java " + formatting + "  reformatting\n"
          + "0001-backport.patch p/A.java " + missing + "  a line 1.1 added for another issue\n"
          + "0001-backport.patch p/A.java 000000000000  was fixed\n")
          .getBytes(StandardCharsets.UTF_8));
      problems = AppliedUpstream.check(hunks, record);
      assertEquals(problems.toString(), 1, problems.size());
      assertTrue(problems.get(0), problems.get(0).endsWith(AppliedUpstream.FILE + ":3: records"
          + " hunk 000000000000 of p/A.java for 0001-backport.patch, but no such hunk differs any"
          + " more; remove the line."));
    }
  }

  @Test
  public void check_recordWithoutReason_isAProblem() throws Exception {
    Path record = tmp.newFolder().toPath().resolve(AppliedUpstream.FILE);
    Files.write(record, "0001-backport.patch p/A.java 0123456789ab\n".getBytes(StandardCharsets.UTF_8));
    List<String> problems = AppliedUpstream.check(List.of(), record);
    assertEquals(problems.toString(), 1, problems.size());
    assertTrue(problems.get(0), problems.get(0).contains(":1: a record is '<patch> <file> <hunk"
        + " id>  <why>'"));
  }

  @Test
  public void hunks_sameFiles_nothingDiffers() throws Exception {
    Path dir = tmp.newFolder().toPath();
    String released = A.replace("f2 = 2;", "f2 = 20;").replace("f3 = 3;", "f3 = 30;");
    try (ZipFile line = jar("A.java", A); ZipFile release = jar("A.java", released)) {
      Series s = series(dir);
      assertEquals(Set.of("1.1"), AppliedUpstream.releases(s));
      assertEquals(List.of(), AppliedUpstream.hunks(s, line, Map.of("1.1", release), MAIN, TEST));
    }
  }
}
