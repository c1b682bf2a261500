package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Arrays;
import java.util.List;
import org.junit.Test;

public class StrictPatcherTest {
  private static final List<String> SOURCE = Arrays.asList(
      "class A {", "  int a = 1;", "  int b = 2;", "  int c = 3;", "  int d = 4;", "}");

  private static UnifiedDiff.FileDiff diff(String hunks) throws PatchFailure {
    return UnifiedDiff.parse("0001-test.patch",
        "--- a/m/src/main/java/A.java\n+++ b/m/src/main/java/A.java\n" + hunks).get(0);
  }

  @Test
  public void apply_exactContext_changesTheLine() throws Exception {
    List<String> out = StrictPatcher.apply("0001-test.patch",
        diff("@@ -2,3 +2,3 @@\n   int a = 1;\n-  int b = 2;\n+  int b = 20;\n   int c = 3;\n"),
        SOURCE, 0);
    assertEquals("  int b = 20;", out.get(2));
    assertEquals(SOURCE.size(), out.size());
  }

  @Test
  public void apply_twoHunks_secondShiftedByFirst() throws Exception {
    List<String> out = StrictPatcher.apply("0001-test.patch", diff(
        "@@ -1,2 +1,3 @@\n class A {\n+  int z = 0;\n   int a = 1;\n"
            + "@@ -4,2 +5,2 @@\n   int c = 3;\n-  int d = 4;\n+  int d = 40;\n"), SOURCE, 0);
    assertEquals("  int z = 0;", out.get(1));
    assertEquals("  int d = 40;", out.get(5));
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
    List<String> out = StrictPatcher.apply("0001-test.patch", moved, SOURCE, 3);
    assertEquals("  int d = 40;", out.get(4));
  }

  @Test
  public void apply_newFile_createsIt() throws Exception {
    UnifiedDiff.FileDiff created = UnifiedDiff.parse("0002-new.patch",
        "--- /dev/null\n+++ b/m/src/test/java/T.java\n@@ -0,0 +1,2 @@\n+class T {\n+}\n").get(0);
    assertTrue(created.isNewFile());
    assertEquals(Arrays.asList("class T {", "}"),
        StrictPatcher.apply("0002-new.patch", created, Arrays.asList(), 0));
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
