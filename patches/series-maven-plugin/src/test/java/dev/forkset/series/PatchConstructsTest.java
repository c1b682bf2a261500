package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Every construct a git diff can hold either applies exactly or fails naming the patch and the
 * construct; nothing is skipped. Each test goes through {@link Series} as the build does.
 */
public class PatchConstructsTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final String MAIN = "mod/src/main/java/";
  private static final String TEST = "mod/src/test/java/";
  private static final String A = MAIN + "p/A.java";
  private static final String A_TEXT = "class A {\n  int b = 2;\n}\n";
  /** A section that changes A; constructs under test ride along with it. */
  private static final String CHANGE_A = "diff --git a/" + A + " b/" + A + "\n"
      + "--- a/" + A + "\n+++ b/" + A + "\n@@ -1,3 +1,3 @@\n class A {\n-  int b = 2;\n+  int b = 20;\n }\n";

  /** Applies the patches (diff texts, in series order) to a sources jar holding {@code files}. */
  private Series.Result apply(String[] diffs, Object... files) throws Exception {
    Path dir = tmp.newFolder().toPath();
    StringBuilder series = new StringBuilder();
    for (int i = 0; i < diffs.length; i++) {
      String name = String.format("%04d-p.patch", i + 1);
      series.append(name).append('\n');
      Files.write(dir.resolve(name), Patches.wrap("Change " + (i + 1), diffs[i]));
    }
    Files.write(dir.resolve("series"), series.toString().getBytes(StandardCharsets.UTF_8));
    File jar = tmp.newFile();
    try (ZipOutputStream out = new ZipOutputStream(new FileOutputStream(jar))) {
      for (int i = 0; i < files.length; i += 2) {
        out.putNextEntry(new ZipEntry((String) files[i]));
        Object content = files[i + 1];
        out.write(content instanceof byte[] ? (byte[]) content
            : ((String) content).getBytes(StandardCharsets.UTF_8));
        out.closeEntry();
      }
    }
    Series s = Series.read(dir, Set.of());
    try (ZipFile zip = new ZipFile(jar)) {
      return s.apply(zip, MAIN, TEST);
    }
  }

  private Series.Result apply(String diff, Object... files) throws Exception {
    return apply(new String[] {diff}, files);
  }

  private void expectFailure(String diff, String[] expected, Object... files) throws Exception {
    expectFailure(new String[] {diff}, expected, files);
  }

  private void expectFailure(String[] diffs, String[] expected, Object... files) throws Exception {
    try {
      Series.Result r = apply(diffs, files);
      fail("must fail, but gave main " + r.mainSources + " and test " + r.testSources);
    } catch (PatchFailure e) {
      for (String part : expected) {
        assertTrue("'" + part + "' in: " + e.getMessage(), e.getMessage().contains(part));
      }
    }
  }

  // --- new and deleted files -------------------------------------------------------------

  @Test
  public void newEmptyFile_isCreatedEmpty() throws Exception {
    String empty = MAIN + "p/Empty.java";
    Series.Result r = apply(CHANGE_A + "diff --git a/" + empty + " b/" + empty
        + "\nnew file mode 100644\nindex 0000000..e69de29\n", "p/A.java", A_TEXT);
    assertEquals("", r.mainSources.get("p/Empty.java"));
    assertEquals("class A {\n  int b = 20;\n}\n", r.mainSources.get("p/A.java"));
  }

  @Test
  public void deletedFile_addedEarlierInTheSeries_isRemoved() throws Exception {
    String t = TEST + "p/TestA.java";
    Series.Result r = apply(new String[] {
        CHANGE_A + "diff --git a/" + t + " b/" + t + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + t
            + "\n@@ -0,0 +1,2 @@\n+class TestA {\n+}\n",
        "diff --git a/" + t + " b/" + t + "\ndeleted file mode 100644\n--- a/" + t
            + "\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-class TestA {\n-}\n"},
        "p/A.java", A_TEXT);
    assertFalse(r.testSources.toString(), r.testSources.containsKey("p/TestA.java"));
    assertEquals("class A {\n  int b = 20;\n}\n", r.mainSources.get("p/A.java"));
  }

  @Test
  public void deletedFile_whoseContentDiffers_failsNamingTheLine() throws Exception {
    String t = TEST + "p/TestA.java";
    expectFailure(new String[] {
        "diff --git a/" + t + " b/" + t + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + t
            + "\n@@ -0,0 +1,2 @@\n+class TestA {\n+}\n",
        "diff --git a/" + t + " b/" + t + "\ndeleted file mode 100644\n--- a/" + t
            + "\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-class TestA {\n-  }\n"},
        new String[] {"0002-p.patch", t, "line 2"}, "p/A.java", A_TEXT);
  }

  @Test
  public void deletedUpstreamClass_failsSayingTheJarKeepsUpstreamClasses() throws Exception {
    expectFailure("diff --git a/" + A + " b/" + A + "\ndeleted file mode 100644\n--- a/" + A
        + "\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-class A {\n-  int b = 2;\n-}\n",
        new String[] {"0001-p.patch", "deletes the upstream class", A}, "p/A.java", A_TEXT);
  }

  // --- no newline at end of file ------------------------------------------------------------

  @Test
  public void noNewline_onTheNewSide_fileEndsWithoutNewline() throws Exception {
    Series.Result r = apply("diff --git a/" + A + " b/" + A + "\n--- a/" + A + "\n+++ b/" + A
        + "\n@@ -2,2 +2,2 @@\n   int b = 2;\n-}\n+}\n\\ No newline at end of file\n",
        "p/A.java", A_TEXT);
    assertEquals("class A {\n  int b = 2;\n}", r.mainSources.get("p/A.java"));
  }

  @Test
  public void noNewline_onTheOldSide_appliesOnlyToAFileWithoutIt() throws Exception {
    String diff = "diff --git a/" + A + " b/" + A + "\n--- a/" + A + "\n+++ b/" + A
        + "\n@@ -2,2 +2,2 @@\n   int b = 2;\n-}\n\\ No newline at end of file\n+}\n";
    assertEquals(A_TEXT, apply(diff, "p/A.java", "class A {\n  int b = 2;\n}").mainSources
        .get("p/A.java"));
    expectFailure(diff, new String[] {"0001-p.patch", A, "hunk #1"}, "p/A.java", A_TEXT);
  }

  @Test
  public void noNewline_atAnUntouchedEnd_isKept() throws Exception {
    Series.Result r = apply("diff --git a/" + A + " b/" + A + "\n--- a/" + A + "\n+++ b/" + A
        + "\n@@ -1,3 +1,3 @@\n class A {\n-  int b = 2;\n+  int b = 20;\n   int c = 3;\n",
        "p/A.java", "class A {\n  int b = 2;\n  int c = 3;\n  int d = 4;\n}");
    assertEquals("class A {\n  int b = 20;\n  int c = 3;\n  int d = 4;\n}",
        r.mainSources.get("p/A.java"));
  }

  // --- CRLF ---------------------------------------------------------------------------------

  @Test
  public void crlfLines_areKeptAsTheyAre() throws Exception {
    Series.Result r = apply("diff --git a/" + A + " b/" + A + "\n--- a/" + A + "\n+++ b/" + A
        + "\n@@ -1,3 +1,3 @@\n class A {\r\n-  int b = 2;\r\n+  int b = 20;\r\n }\r\n",
        "p/A.java", "class A {\r\n  int b = 2;\r\n}\r\n");
    assertEquals("class A {\r\n  int b = 20;\r\n}\r\n", r.mainSources.get("p/A.java"));
  }

  @Test
  public void lfPatch_onACrlfFile_doesNotApply() throws Exception {
    expectFailure(CHANGE_A, new String[] {"0001-p.patch", A, "hunk #1"},
        "p/A.java", "class A {\r\n  int b = 2;\r\n}\r\n");
  }

  // --- constructs the pipeline cannot represent: fail, naming them ----------------------------

  @Test
  public void gitBinaryPatch_failsNamingIt() throws Exception {
    String bin = MAIN + "p/data.bin";
    expectFailure(CHANGE_A + "diff --git a/" + bin + " b/" + bin + "\nnew file mode 100644\n"
        + "index 0000000000000000000000000000000000000000..4d1ae35ba2c8ec712fa2a379db44ad639ca277bd\n"
        + "GIT binary patch\nliteral 3\nKcmZ>Y%K!iX4FCWD\n\nliteral 0\nHcmV?d00001\n\n",
        new String[] {"0001-p.patch", bin, "binary"}, "p/A.java", A_TEXT);
  }

  @Test
  public void binaryFilesDiffer_failsNamingIt() throws Exception {
    String bin = MAIN + "p/data.bin";
    expectFailure(CHANGE_A + "diff --git a/" + bin + " b/" + bin + "\nindex 4d1ae35..e69de29 100644\n"
        + "Binary files a/" + bin + " and b/" + bin + " differ\n",
        new String[] {"0001-p.patch", bin, "binary"}, "p/A.java", A_TEXT);
  }

  @Test
  public void rename_failsNamingBothPaths() throws Exception {
    String b = MAIN + "p/B.java";
    expectFailure(CHANGE_A + "diff --git a/" + MAIN + "p/Old.java b/" + b + "\nsimilarity index 100%\n"
        + "rename from " + MAIN + "p/Old.java\nrename to " + b + "\n",
        new String[] {"0001-p.patch", "renames", MAIN + "p/Old.java", b}, "p/A.java", A_TEXT);
  }

  @Test
  public void copy_failsNamingBothPaths() throws Exception {
    String b = MAIN + "p/B.java";
    expectFailure(CHANGE_A + "diff --git a/" + A + " b/" + b + "\nsimilarity index 100%\n"
        + "copy from " + A + "\ncopy to " + b + "\n",
        new String[] {"0001-p.patch", "copies", b}, "p/A.java", A_TEXT);
  }

  @Test
  public void modeChange_failsNamingTheModes() throws Exception {
    expectFailure("diff --git a/" + A + " b/" + A + "\nold mode 100644\nnew mode 100755\n"
        + "diff --git a/" + MAIN + "p/C.java b/" + MAIN + "p/C.java\nnew file mode 100644\n"
        + "--- /dev/null\n+++ b/" + MAIN + "p/C.java\n@@ -0,0 +1 @@\n+class C {}\n",
        new String[] {"0001-p.patch", A, "mode", "100755"}, "p/A.java", A_TEXT);
  }

  @Test
  public void malformedUtf8_inThePatch_failsNamingTheLine() throws Exception {
    try {
      Path dir = tmp.newFolder().toPath();
      Files.write(dir.resolve("series"), "0001-p.patch\n".getBytes(StandardCharsets.UTF_8));
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      bytes.write(Patches.wrap("Latin-1 slipped in", "diff --git a/" + A + " b/" + A + "\n--- a/" + A
          + "\n+++ b/" + A + "\n@@ -1,3 +1,3 @@\n class A {\n-  int b = 2;\n+  String b = \""));
      bytes.write(new byte[] {(byte) 0xE9}); // é in ISO-8859-1: not UTF-8
      bytes.write("\";\n }\n".getBytes(StandardCharsets.UTF_8));
      Files.write(dir.resolve("0001-p.patch"), bytes.toByteArray());
      Series.read(dir, Set.of());
      fail("a byte that is not UTF-8 must not be replaced");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("0001-p.patch"));
      assertTrue(e.getMessage(), e.getMessage().contains("UTF-8"));
      assertTrue(e.getMessage(), e.getMessage().matches("(?s).*line \\d+.*"));
    }
  }

  @Test
  public void malformedUtf8_inTheUpstreamFile_failsNamingTheFile() throws Exception {
    byte[] latin1 = "class A {\n  int b = 2; // caf\u00e9\n}\n".getBytes(StandardCharsets.ISO_8859_1);
    expectFailure("diff --git a/" + A + " b/" + A + "\n--- a/" + A + "\n+++ b/" + A
        + "\n@@ -1,2 +1,3 @@\n class A {\n+  int a = 1;\n   int b = 2; // caf\u00e9\n",
        new String[] {A, "UTF-8"}, "p/A.java", latin1);
  }

  @Test
  public void textTheParserCannotClassify_failsInsteadOfBeingSkipped() throws Exception {
    expectFailure(CHANGE_A + "this line belongs to no section\n"
        + "--- a/" + MAIN + "p/B.java\n+++ b/" + MAIN + "p/B.java\n@@ -1 +1 @@\n-x\n+y\n",
        new String[] {"0001-p.patch", "this line belongs to no section"},
        "p/A.java", A_TEXT, "p/B.java", "x\n");
  }

  @Test
  public void hunkLongerThanItsHeader_failsInsteadOfDroppingTheRest() throws Exception {
    expectFailure("diff --git a/" + A + " b/" + A + "\n--- a/" + A + "\n+++ b/" + A
        + "\n@@ -2 +2 @@\n-  int b = 2;\n+  int b = 20;\n+  int c = 3;\n",
        new String[] {"0001-p.patch", "+  int c = 3;"}, "p/A.java", A_TEXT);
  }

  @Test
  public void unknownLineInAGitSectionHeader_fails() throws Exception {
    expectFailure("diff --git a/" + A + " b/" + A + "\nfrobnicated yes\n--- a/" + A + "\n+++ b/" + A
        + "\n@@ -2 +2 @@\n-  int b = 2;\n+  int b = 20;\n",
        new String[] {"0001-p.patch", "frobnicated yes"}, "p/A.java", A_TEXT);
  }

  // --- index lines: the blobs git names ------------------------------------------------------

  private static final String A20 = "class A {\n  int b = 20;\n}\n";

  private static String indexed(String oldId, String newId) {
    return "diff --git a/" + A + " b/" + A + "\nindex " + oldId + ".." + newId + " 100644\n"
        + "--- a/" + A + "\n+++ b/" + A + "\n@@ -1,3 +1,3 @@\n class A {\n-  int b = 2;\n"
        + "+  int b = 20;\n }\n";
  }

  @Test
  public void indexLine_matchingBothSides_applies() throws Exception {
    Series.Result r = apply(indexed(GitBlob.id(A_TEXT), GitBlob.id(A20)), "p/A.java", A_TEXT);
    assertEquals(A20, r.mainSources.get("p/A.java"));
    assertTrue(r.notes.toString(), r.notes.isEmpty());
  }

  @Test
  public void indexLine_whoseResultDiffers_failsAsAHandEditedPatch() throws Exception {
    expectFailure(indexed(GitBlob.id(A_TEXT), GitBlob.id("class A {\n  int b = 21;\n}\n")),
        new String[] {"0001-p.patch", A, "index line says", GitBlob.id(A20)}, "p/A.java", A_TEXT);
  }

  @Test
  public void indexLine_ofAnotherFileVersion_appliesWithANote() throws Exception {
    Series.Result r = apply(indexed("1234567", "89abcde"), "p/A.java", A_TEXT);
    assertEquals(A20, r.mainSources.get("p/A.java"));
    assertEquals(1, r.notes.size());
    assertTrue(r.notes.get(0), r.notes.get(0).contains("made against blob 1234567"));
  }

  @Test
  public void hunkHeader_whoseNewStartDoesNotFollow_fails() throws Exception {
    expectFailure("diff --git a/" + A + " b/" + A + "\n--- a/" + A + "\n+++ b/" + A
        + "\n@@ -2 +3 @@\n-  int b = 2;\n+  int b = 20;\n",
        new String[] {"0001-p.patch", "new start +3"}, "p/A.java", A_TEXT);
  }

  @Test
  public void oldFormPatch_isRefusedNamingTheConversion() throws Exception {
    Path dir = tmp.newFolder().toPath();
    Files.write(dir.resolve("series"), "0001-p.patch\n".getBytes(StandardCharsets.UTF_8));
    Files.write(dir.resolve("0001-p.patch"), ("Subject: x\nUpstream: none\nForwarded: no\n"
        + "Module: none\n\n" + CHANGE_A).getBytes(StandardCharsets.UTF_8));
    try {
      Series.read(dir, Set.of());
      fail("the old form must not be built");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("0001-p.patch: is in the old form"));
      assertTrue(e.getMessage(), e.getMessage().contains("series:convert"));
    }
    assertEquals(Dep3Header.Form.DEP3_FIRST,
        Series.read(dir, Set.of(), true).patches().get(0).header.form());
  }
}
