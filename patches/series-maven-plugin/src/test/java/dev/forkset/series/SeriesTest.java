package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

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

public class SeriesTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final String PATCH = Patches.mail("Make b twenty",
      "Upstream: none\nForwarded: no\nModule: none\n",
      "diff --git a/mod/src/main/java/p/A.java b/mod/src/main/java/p/A.java\n"
      + "--- a/mod/src/main/java/p/A.java\n+++ b/mod/src/main/java/p/A.java\n"
      + "@@ -1,3 +1,3 @@\n class A {\n-  int b = 2;\n+  int b = 20;\n }\n"
      + "diff --git a/mod/src/test/java/p/TestA.java b/mod/src/test/java/p/TestA.java\n"
      + "new file mode 100644\n"
      + "--- /dev/null\n+++ b/mod/src/test/java/p/TestA.java\n@@ -0,0 +1 @@\n+class TestA {}\n");

  private Path line(String series, String... patches) throws Exception {
    Path dir = tmp.newFolder().toPath();
    Files.write(dir.resolve("series"), series.getBytes(StandardCharsets.UTF_8));
    for (int i = 0; i < patches.length; i += 2) {
      Files.write(dir.resolve(patches[i]), patches[i + 1].getBytes(StandardCharsets.UTF_8));
    }
    return dir;
  }

  private ZipFile sources(String content) throws Exception {
    File jar = tmp.newFile("up-sources.jar");
    try (ZipOutputStream out = new ZipOutputStream(new FileOutputStream(jar))) {
      out.putNextEntry(new ZipEntry("p/A.java"));
      out.write(content.getBytes(StandardCharsets.UTF_8));
      out.closeEntry();
    }
    return new ZipFile(jar);
  }

  @Test
  public void apply_splitsMainAndTestSources() throws Exception {
    Series s = Series.read(line("# comment\n0001-a.patch\n", "0001-a.patch", PATCH), Set.of());
    try (ZipFile jar = sources("class A {\n  int b = 2;\n}\n")) {
      Series.Result r = s.apply(jar, "mod/src/main/java/", "mod/src/test/java/");
      assertEquals("class A {\n  int b = 20;\n}\n", r.mainSources.get("p/A.java"));
      assertEquals("class TestA {}\n", r.testSources.get("p/TestA.java"));
      assertEquals("0001-a.patch", r.patches.get(0).name);
    }
  }

  @Test
  public void apply_upstreamChanged_failsNamingThePatch() throws Exception {
    Series s = Series.read(line("0001-a.patch\n", "0001-a.patch", PATCH), Set.of());
    try (ZipFile jar = sources("class A {\n  int b = 3;\n}\n")) {
      s.apply(jar, "mod/src/main/java/", "mod/src/test/java/");
      fail("must not apply");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().startsWith("0001-a.patch: mod/src/main/java/p/A.java: hunk #1"));
    }
  }

  @Test
  public void apply_fileOutsideTheArtifact_isRefused() throws Exception {
    String other = Patches.mail("Other", "Upstream: none\nForwarded: no\nModule: none\n",
        "diff --git a/other/src/main/java/B.java b/other/src/main/java/B.java\n"
        + "--- a/other/src/main/java/B.java\n+++ b/other/src/main/java/B.java\n"
        + "@@ -1 +1 @@\n-x\n+y\n");
    Series s = Series.read(line("0001-b.patch\n", "0001-b.patch", other), Set.of());
    try (ZipFile jar = sources("x\n")) {
      s.apply(jar, "mod/src/main/java/", "mod/src/test/java/");
      fail("must refuse");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("outside the sources this line builds"));
    }
  }

  @Test
  public void forModule_leavesSiblingSectionsToTheirLine_andRefusesAModuleNoLineBuilds()
      throws Exception {
    String two = Patches.mail("Two", "Upstream: none\nForwarded: no\nModule: none\n",
        "diff --git a/mod/src/main/java/p/A.java b/mod/src/main/java/p/A.java\n"
        + "--- a/mod/src/main/java/p/A.java\n+++ b/mod/src/main/java/p/A.java\n"
        + "@@ -1 +1 @@\n-x\n+y\n"
        + "diff --git a/other/src/main/java/B.java b/other/src/main/java/B.java\n"
        + "--- a/other/src/main/java/B.java\n+++ b/other/src/main/java/B.java\n"
        + "@@ -1 +1 @@\n-x\n+y\n");
    Series s = Series.read(line("0001-b.patch\n", "0001-b.patch", two), Set.of());
    try (ZipFile jar = sources("x\n")) {
      Series.Result r = s.forModule("mod", Set.of("mod", "other"))
          .apply(jar, "mod/src/main/java/", "mod/src/test/java/");
      assertEquals("y\n", r.mainSources.get("p/A.java"));
      assertEquals(1, r.mainSources.size());
    }
    try {
      s.forModule("mod", Set.of("mod", "third"));
      fail("must refuse");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("in the upstream module other, which no"
          + " line module of this series builds"));
    }
  }

  @Test
  public void read_seriesNamingMissingFile_saysWhichLineAndFile() throws Exception {
    try {
      Series.read(line("0001-a.patch\n0002-gone.patch\n", "0001-a.patch", PATCH), Set.of());
      fail("must fail");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("line 2 names '0002-gone.patch'"));
      assertTrue(e.getMessage(), e.getMessage().contains("does not exist"));
    }
  }

  @Test
  public void read_emptySeries_fails() throws Exception {
    try {
      Series.read(line("# nothing yet\n"), Set.of());
      fail("must fail");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("lists no patches"));
    }
  }

  @Test
  public void unlisted_reportsPatchFilesTheSeriesForgot() throws Exception {
    Series s = Series.read(line("0001-a.patch\n", "0001-a.patch", PATCH, "0002-b.patch", PATCH),
        Set.of());
    assertEquals(java.util.List.of("0002-b.patch"), s.unlisted());
  }

  @Test
  public void overlay_dropsEveryClassOfAReplacedUnit() {
    java.util.List<String> units = java.util.List.of("p/A");
    assertTrue(OverlayMojo.ofReplacedUnit("p/A.class", units));
    assertTrue(OverlayMojo.ofReplacedUnit("p/A$1.class", units));
    assertTrue(OverlayMojo.ofReplacedUnit("META-INF/versions/11/p/A$Inner.class", units));
    assertTrue(!OverlayMojo.ofReplacedUnit("p/AB.class", units));
    assertTrue(!OverlayMojo.ofReplacedUnit("p/A.java", units));
  }
}
