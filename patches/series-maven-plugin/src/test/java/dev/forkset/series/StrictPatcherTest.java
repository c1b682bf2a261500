package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.junit.Test;

public class StrictPatcherTest {
  private static final String SOURCE =
      "class A {\n  int a = 1;\n  int b = 2;\n  int c = 3;\n  int d = 4;\n}\n";

  private static UnifiedDiff.FileDiff diff(String hunks) throws PatchFailure {
    return UnifiedDiff.parse("0001-test.patch",
        "--- a/m/src/main/java/A.java\n+++ b/m/src/main/java/A.java\n" + hunks).get(0);
  }

  @Test
  public void apply_exactContext_changesTheLine() throws Exception {
    String out = StrictPatcher.apply("0001-test.patch",
        diff("@@ -2,3 +2,3 @@\n   int a = 1;\n-  int b = 2;\n+  int b = 20;\n   int c = 3;\n"),
        SOURCE, 0);
    assertEquals(SOURCE.replace("b = 2;", "b = 20;"), out);
  }

  @Test
  public void apply_twoHunks_secondShiftedByFirst() throws Exception {
    String out = StrictPatcher.apply("0001-test.patch", diff(
        "@@ -1,2 +1,3 @@\n class A {\n+  int z = 0;\n   int a = 1;\n"
            + "@@ -4,2 +5,2 @@\n   int c = 3;\n-  int d = 4;\n+  int d = 40;\n"), SOURCE, 0);
    assertEquals("class A {\n  int z = 0;\n  int a = 1;\n  int b = 2;\n  int c = 3;\n  int d = 40;\n}\n",
        out);
  }

  @Test
  public void apply_changedContext_failsNamingPatchFileHunkAndLine() throws Exception {
    try {
      StrictPatcher.apply("0001-test.patch",
          diff("@@ -2,3 +2,3 @@\n   int a = 1;\n-  int b = 9;\n+  int b = 20;\n   int c = 3;\n"),
          SOURCE, 0);
      fail("fuzz must never be allowed");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("0001-test.patch"));
      assertTrue(e.getMessage(), e.getMessage().contains("m/src/main/java/A.java"));
      assertTrue(e.getMessage(), e.getMessage().contains("hunk #1 (@@ -2,3 +2,3 @@)"));
      assertTrue(e.getMessage(), e.getMessage().contains("line 3"));
      assertTrue(e.getMessage(), e.getMessage().contains("Refreshing a patch"));
    }
  }

  @Test
  public void apply_movedHunk_failsUnlessMaxOffsetAllowsIt() throws Exception {
    UnifiedDiff.FileDiff moved =
        diff("@@ -1,2 +1,2 @@\n   int c = 3;\n-  int d = 4;\n+  int d = 40;\n");
    try {
      StrictPatcher.apply("0001-test.patch", moved, SOURCE, 0);
      fail("an offset beyond Max-Offset must fail");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("3 lines from where the diff says"));
      assertTrue(e.getMessage(), e.getMessage().contains("Max-Offset: 0"));
    }
    String out = StrictPatcher.apply("0001-test.patch", moved, SOURCE, 3);
    assertEquals(SOURCE.replace("d = 4;", "d = 40;"), out);
  }

  @Test
  public void apply_newFile_createsIt() throws Exception {
    UnifiedDiff.FileDiff created = UnifiedDiff.parse("0002-new.patch",
        "--- /dev/null\n+++ b/m/src/test/java/T.java\n@@ -0,0 +1,2 @@\n+class T {\n+}\n").get(0);
    assertTrue(created.isNewFile());
    assertEquals("class T {\n}\n", StrictPatcher.apply("0002-new.patch", created, null, 0));
  }

  @Test
  public void parse_truncatedHunk_failsNamingTheHunk() {
    try {
      diff("@@ -2,3 +2,3 @@\n   int a = 1;\n-  int b = 2;\n");
      fail("a hunk shorter than its header says must fail");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("hunk #1"));
      assertTrue(e.getMessage(), e.getMessage().contains("truncated"));
    }
  }
}
