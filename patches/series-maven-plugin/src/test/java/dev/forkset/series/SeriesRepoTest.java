package dev.forkset.series;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Export, refresh and convert with the git binary, on a small upstream whose files include a
 * CRLF file and one without a final newline.
 */
public class SeriesRepoTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  static final String MAIN = "mod/src/main/java/";
  static final String TEST = "mod/src/test/java/";
  static final String A = "package p;\n\nclass A {\n  int a = 1;\n  int b = 2;\n  int c = 3;\n"
      + "  int d = 4;\n  int e = 5;\n  int f = 6;\n  int g = 7;\n}\n";
  static final String B = "package p;\n\nclass B {\n  int x = 1;\n}";
  static final String C = "package p;\r\n\r\nclass C {\r\n  int y = 1;\r\n}\r\n";

  /** Old form: changes A. */
  static final String P1 = "Subject: Make b twenty\nUpstream: none\nForwarded: no\nModule: none\n"
      + "Description: b must be twenty,\n because.\n\n"
      + "--- a/mod/src/main/java/p/A.java\n+++ b/mod/src/main/java/p/A.java\n"
      + "@@ -2,7 +2,7 @@\n \n class A {\n   int a = 1;\n-  int b = 2;\n+  int b = 20;\n"
      + "   int c = 3;\n   int d = 4;\n   int e = 5;\n";
  /** Old form: grows B (no final newline) and C (CRLF), adds a test. */
  static final String P2 = "Subject: B and C grow\nUpstream: HBASE-1\n"
      + "Forwarded: https://example.org/pr/1\nModule: hbase-pmem-cache\n\n"
      + "diff --git a/mod/src/main/java/p/B.java b/mod/src/main/java/p/B.java\n"
      + "--- a/mod/src/main/java/p/B.java\n+++ b/mod/src/main/java/p/B.java\n"
      + "@@ -2,4 +2,5 @@\n \n class B {\n   int x = 1;\n-}\n\\ No newline at end of file\n"
      + "+  int z = 2;\n+}\n"
      + "diff --git a/mod/src/main/java/p/C.java b/mod/src/main/java/p/C.java\n"
      + "--- a/mod/src/main/java/p/C.java\n+++ b/mod/src/main/java/p/C.java\n"
      + "@@ -3,3 +3,3 @@\n class C {\r\n-  int y = 1;\r\n+  int y = 10;\r\n }\r\n"
      + "diff --git a/mod/src/test/java/p/TestB.java b/mod/src/test/java/p/TestB.java\n"
      + "new file mode 100644\n--- /dev/null\n+++ b/mod/src/test/java/p/TestB.java\n"
      + "@@ -0,0 +1,3 @@\n+package p;\n+\n+class TestB {}\n";

  private static final Set<String> MODULES = Set.of("hbase-pmem-cache");
  private static final SeriesRepo.Authorship AUTHORS =
      (dir, name) -> new String[] {"Ann Author <ann@example.org>", "Tue, 4 Nov 2025 10:00:00 +0000"};

  private Path scratch;
  private ZipFile jar;
  private SeriesRepo repos;

  @Before
  public void upstream() throws Exception {
    scratch = tmp.newFolder("scratch").toPath();
    jar = jar("A.java", A, "B.java", B, "C.java", C);
    repos = new SeriesRepo(jar, "org.example:mod:1.0", MAIN, TEST, MODULES, scratch);
  }

  @After
  public void close() throws Exception {
    jar.close();
  }

  ZipFile jar(String... files) throws Exception {
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

  Path line(String... patches) throws Exception {
    Path dir = tmp.newFolder().toPath();
    StringBuilder series = new StringBuilder("# the series\n");
    for (int i = 0; i < patches.length; i += 2) {
      series.append(patches[i]).append('\n');
      Files.write(dir.resolve(patches[i]), patches[i + 1].getBytes(StandardCharsets.UTF_8));
    }
    Files.write(dir.resolve("series"), series.toString().getBytes(StandardCharsets.UTF_8));
    return dir;
  }

  private Git git(Path dir) throws Exception {
    return new Git(dir, Files.createDirectories(scratch.resolve("test-home")));
  }

  private static String read(Path p) throws Exception {
    return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
  }

  private static final Map<String, String> ME = Map.of("GIT_AUTHOR_NAME", "Dev",
      "GIT_AUTHOR_EMAIL", "dev@example.org", "GIT_AUTHOR_DATE", "@1700000000 +0000");

  @Test
  public void convert_oldForm_writesMailsWithUpstreamBlobs_andAgainChangesNothing() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1, "0002-b-and-c.patch", P2);
    SeriesRepo.Report first = repos.convert(dir, AUTHORS);
    assertEquals(first.lines.toString(), 2, first.changed);

    String p1 = read(dir.resolve("0001-b-twenty.patch"));
    assertTrue(p1, p1.matches("(?s)From [0-9a-f]{40} Mon Sep 17 00:00:00 2001\nFrom: Ann Author"
        + " <ann@example.org>\nDate: Tue, 4 Nov 2025 10:00:00 \\+0000\nSubject: \\[PATCH\\] Make b"
        + " twenty\n\nb must be twenty,\nbecause.\n\nUpstream: none\nForwarded: no\nModule: none\n"
        + "---\n .*"));
    assertTrue(p1, p1.contains("index " + GitBlob.id(A) + ".." + GitBlob.id(A.replace("b = 2;",
        "b = 20;")) + " 100644\n"));
    Series converted = Series.read(dir, MODULES);
    assertEquals("B and C grow", converted.patches().get(1).header.subject());
    assertEquals("https://example.org/pr/1", converted.patches().get(1).header.forwarded());
    assertEquals("# the series\n0001-b-twenty.patch\n0002-b-and-c.patch\n",
        read(dir.resolve("series")));

    byte[] before = Files.readAllBytes(dir.resolve("0002-b-and-c.patch"));
    SeriesRepo.Report second = repos.convert(dir, AUTHORS);
    assertEquals(second.lines.toString(), 0, second.changed);
    assertArrayEquals(before, Files.readAllBytes(dir.resolve("0002-b-and-c.patch")));
  }

  @Test
  public void export_thenGitAmOfTheConvertedPatches_givesWhatTheBuildApplies() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1, "0002-b-and-c.patch", P2);
    repos.convert(dir, AUTHORS);
    Path repo = tmp.getRoot().toPath().resolve("exported");
    assertEquals(2, repos.export(Series.read(dir, MODULES), repo, AUTHORS));

    Git git = git(repo);
    List<String> log = List.of(git.run("log", "--format=%H %an %s", "series").strip().split("\n"));
    assertEquals(3, log.size());
    assertTrue(log.get(2), log.get(2).endsWith("Upstream sources of org.example:mod:1.0"));
    assertEquals(log.get(2).substring(0, 40), git.run("rev-parse", "series-base").strip());
    // The From line of each patch is the commit export made for it.
    assertTrue(read(dir.resolve("0001-b-twenty.patch")).startsWith("From " + log.get(1).substring(0, 40)));
    assertTrue(log.get(1), log.get(1).endsWith(" Ann Author Make b twenty"));
    assertEquals("b must be twenty,\nbecause.\n\nUpstream: none\nForwarded: no\nModule: none",
        git.run("log", "-1", "--format=%b", log.get(1).substring(0, 40)).strip());

    // git am of the patch files on the base gives the exported tree ...
    git.run("checkout", "--quiet", "-b", "by-am", "series-base");
    git.run("am", "--quiet", "--keep-cr", dir.resolve("0001-b-twenty.patch").toString(),
        dir.resolve("0002-b-and-c.patch").toString());
    assertEquals("", git.run("diff", "--stat", "series", "by-am"));
    // ... whose files are byte for byte what the build's patcher makes.
    Series.Result built = Series.read(dir, MODULES).apply(jar, MAIN, TEST);
    for (String f : List.of("p/A.java", "p/B.java", "p/C.java")) {
      assertArrayEquals(f, built.mainSources.get(f).getBytes(StandardCharsets.UTF_8),
          Files.readAllBytes(repo.resolve(MAIN + f)));
    }
    assertEquals("package p;\n\nclass B {\n  int x = 1;\n  int z = 2;\n}\n", built.mainSources.get("p/B.java"));
    assertEquals(C.replace("y = 1;", "y = 10;"), built.mainSources.get("p/C.java"));
    assertArrayEquals(built.testSources.get("p/TestB.java").getBytes(StandardCharsets.UTF_8),
        Files.readAllBytes(repo.resolve(TEST + "p/TestB.java")));
  }

  @Test
  public void gitApply3way_usesTheIndexBlobs_whenPlainApplyCannot() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1);
    repos.convert(dir, AUTHORS);
    Path repo = tmp.getRoot().toPath().resolve("exported");
    repos.export(Series.read(dir, MODULES), repo, AUTHORS);
    Git git = git(repo);
    // A local change to a context line of the hunk: plain apply fails, a 3-way merge does not.
    git.run("checkout", "--quiet", "-b", "local", "series-base");
    Files.write(repo.resolve(MAIN + "p/A.java"),
        A.replace("  int e = 5;", "  int e = 50;").getBytes(StandardCharsets.UTF_8));
    git.run(ME, "commit", "--quiet", "-am", "local change");
    String patch = dir.resolve("0001-b-twenty.patch").toString();
    assertTrue("plain git apply must fail here", git.exec(Map.of(), "apply", "--check", patch).exit != 0);
    git.run("apply", "--3way", patch);
    assertEquals(A.replace("  int e = 5;", "  int e = 50;").replace("b = 2;", "b = 20;"),
        read(repo.resolve(MAIN + "p/A.java")));
  }

  @Test
  public void refresh_editedRewordedAndNewCommits_rewriteTheSeriesInTheirOrder() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1, "0002-b-and-c.patch", P2);
    repos.convert(dir, AUTHORS);
    Path repo = tmp.getRoot().toPath().resolve("exported");
    repos.export(Series.read(dir, MODULES), repo, AUTHORS);
    Git git = git(repo);
    List<String> commits = List.of(git.run("rev-list", "--reverse", "series-base..series").strip().split("\n"));
    git.run("checkout", "--quiet", "-b", "work", "series-base");
    // 0002 first, with a new subject
    git.run("cherry-pick", commits.get(1));
    git.run(ME, "commit", "--quiet", "--amend", "-m", "B and C grow more",
        "-m", "Upstream: HBASE-1\nForwarded: https://example.org/pr/1\nModule: hbase-pmem-cache");
    // a new patch
    Files.write(repo.resolve(MAIN + "p/E.java"), "package p;\n\nclass E {}\n".getBytes(StandardCharsets.UTF_8));
    git.run("add", ".");
    git.run(ME, "commit", "--quiet", "-m", "Add E", "-m", "Upstream: none\nForwarded: no\nModule: none");
    // 0001 last, edited
    git.run("cherry-pick", commits.get(0));
    Files.write(repo.resolve(MAIN + "p/A.java"), A.replace("b = 2;", "b = 21;").getBytes(StandardCharsets.UTF_8));
    git.run(ME, "commit", "--quiet", "--amend", "--no-edit", "-a");

    SeriesRepo.Report r = repos.refresh(dir, repo, "series-base");
    assertEquals("# the series\n0002-b-and-c.patch\n0003-add-e.patch\n0001-b-twenty.patch\n",
        read(dir.resolve("series")));
    assertTrue(r.lines.toString(), r.lines.stream().anyMatch(l -> l.startsWith("subject of"
        + " 0002-b-and-c.patch changed from 'B and C grow' to 'B and C grow more'")));
    Series s = Series.read(dir, MODULES);
    assertEquals("Add E", s.patches().get(1).header.subject());
    assertEquals("Dev <dev@example.org>", s.patches().get(1).header.author());
    Series.Result built = s.apply(jar, MAIN, TEST);
    assertEquals(A.replace("b = 2;", "b = 21;"), built.mainSources.get("p/A.java"));
    assertEquals("package p;\n\nclass E {}\n", built.mainSources.get("p/E.java"));

    SeriesRepo.Report again = repos.refresh(dir, repo, "series-base");
    assertEquals(again.lines.toString(), 0, again.changed);
  }

  @Test
  public void refresh_droppedCommit_removesItsPatch() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1, "0002-b-and-c.patch", P2);
    repos.convert(dir, AUTHORS);
    Path repo = tmp.getRoot().toPath().resolve("exported");
    repos.export(Series.read(dir, MODULES), repo, AUTHORS);
    Git git = git(repo);
    git.run("reset", "--quiet", "--hard", "series~1");
    SeriesRepo.Report r = repos.refresh(dir, repo, "series-base");
    assertTrue(r.lines.toString(), r.lines.get(r.lines.size() - 1).startsWith("removed   0002-b-and-c.patch"));
    assertFalse(Files.exists(dir.resolve("0002-b-and-c.patch")));
    assertEquals("# the series\n0001-b-twenty.patch\n", read(dir.resolve("series")));
  }

  @Test
  public void refresh_commitWithoutFields_failsNamingTheCommit() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1);
    repos.convert(dir, AUTHORS);
    Path repo = tmp.getRoot().toPath().resolve("exported");
    repos.export(Series.read(dir, MODULES), repo, AUTHORS);
    Git git = git(repo);
    Files.write(repo.resolve(MAIN + "p/E.java"), "class E {}\n".getBytes(StandardCharsets.UTF_8));
    git.run("add", ".");
    git.run(ME, "commit", "--quiet", "-m", "Add E");
    String sha = git.run("rev-parse", "HEAD").strip();
    byte[] before = Files.readAllBytes(dir.resolve("0001-b-twenty.patch"));
    try {
      repos.refresh(dir, repo, "series-base");
      fail("a commit without Upstream/Forwarded/Module must not become a patch");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("commit " + sha.substring(0, 12)));
      assertTrue(e.getMessage(), e.getMessage().contains("'Upstream:'"));
    }
    assertArrayEquals("nothing is written when the series is refused", before,
        Files.readAllBytes(dir.resolve("0001-b-twenty.patch")));
  }

  @Test
  public void refresh_uncommittedChanges_areRefused() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1);
    repos.convert(dir, AUTHORS);
    Path repo = tmp.getRoot().toPath().resolve("exported");
    repos.export(Series.read(dir, MODULES), repo, AUTHORS);
    Files.write(repo.resolve(MAIN + "p/A.java"), "changed\n".getBytes(StandardCharsets.UTF_8));
    try {
      repos.refresh(dir, repo, "series-base");
      fail("uncommitted work must not be lost silently");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("not committed"));
    }
  }

  @Test
  public void export_intoANonEmptyFolder_isRefused() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1);
    Path repo = tmp.newFolder("taken").toPath();
    Files.write(repo.resolve("x"), new byte[] {1});
    try {
      repos.export(Series.read(dir, MODULES, true), repo, AUTHORS);
      fail("must not write into a folder with files");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("is not empty"));
    }
  }

  @Test
  public void convert_takesTheAuthorOfTheCommitThatAddedTheOldPatch() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1);
    Git forkset = git(dir);
    forkset.run("init", "--quiet");
    forkset.run("add", ".");
    forkset.run(Map.of("GIT_AUTHOR_NAME", "Zo\u00eb \u00dcnder-Writer", "GIT_AUTHOR_EMAIL", "pw@example.org",
        "GIT_AUTHOR_DATE", "@1600000000 +0000"), "commit", "--quiet", "-m", "add the patch");
    repos.convert(dir, SeriesRepo.fromHistory(Files.createDirectories(scratch.resolve("h")), null));
    Dep3Header h = Series.read(dir, MODULES).patches().get(0).header;
    assertEquals("Zo\u00eb \u00dcnder-Writer <pw@example.org>", h.author());
    assertTrue("git encodes the name in the mail header",
        read(dir.resolve("0001-b-twenty.patch")).contains("From: =?UTF-8?q?Zo=C3=AB"));
    assertEquals("Sun, 13 Sep 2020 12:26:40 +0000", h.date());
  }

  @Test
  public void convert_uncommittedOldPatchWithoutAuthor_saysHowToGiveOne() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1);
    try {
      repos.convert(dir, SeriesRepo.fromHistory(Files.createDirectories(scratch.resolve("h")), null));
      fail("an unknown author must not be made up");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("-Dseries.author="));
    }
  }

  @Test
  public void names_newPatchesAreNumberedAfterThePatchBefore() throws Exception {
    assertEquals("b-and-c-grow", SeriesRepo.slug("B and C grow"));
    assertEquals("hbase-12345-let-a-serviceloader-provider-supply-the",
        SeriesRepo.slug("HBASE-12345 Let a ServiceLoader provider supply the IMap entry cost estimator"));
    List<Series.Patch> old = new ArrayList<>(Series.read(line("0051-a.patch", P1), MODULES, true).patches());
    List<Series.Patch> fresh = new ArrayList<>(old);
    fresh.add(Series.read(line("x.patch", P2), MODULES, true).patches().get(0));
    assertEquals(List.of("0051-a.patch", "0052-b-and-c-grow.patch"),
        SeriesRepo.names(old, fresh, new SeriesRepo.Report()));
  }

  @Test
  public void exportOnto_rebasesWith3WayMerges_andRefreshWritesTheNewLine() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1, "0002-b-and-c.patch", P2);
    repos.convert(dir, AUTHORS);
    // 1.1 moved A down and changed a line near 0001's hunk: plain apply fails, a merge does not.
    String a11 = "// 1.1\n" + A.replace("  int e = 5;", "  int e = 50;");
    Path repo = tmp.getRoot().toPath().resolve("onto");
    repos.export(Series.read(dir, MODULES), repo, AUTHORS);
    try (ZipFile next = jar("A.java", a11, "B.java", B, "C.java", C)) {
      assertEquals(null, repos.moveOnto(repo, next, "org.example:mod:1.1", "1.0"));
      Git git = git(repo);
      assertEquals(git.run("rev-parse", "upstream-1.0").strip(),
          git.run("rev-parse", "series-base^").strip());
      // The line of 1.1 starts as a copy of the 1.0 line; refresh writes the moved patches.
      Path line11 = tmp.newFolder("line-1.1").toPath();
      for (String f : List.of("series", "0001-b-twenty.patch", "0002-b-and-c.patch")) {
        Files.copy(dir.resolve(f), line11.resolve(f));
      }
      SeriesRepo repos11 = new SeriesRepo(next, "org.example:mod:1.1", MAIN, TEST, MODULES,
          tmp.newFolder("scratch11").toPath());
      repos11.refresh(line11, repo, "series-base");
      Series.Result built = Series.read(line11, MODULES).apply(next, MAIN, TEST);
      assertEquals(a11.replace("b = 2;", "b = 20;"), built.mainSources.get("p/A.java"));
      assertTrue("made against the 1.1 blobs: " + built.notes, built.notes.isEmpty());
    }
  }

  @Test
  public void exportOnto_conflict_isLeftForTheDeveloper() throws Exception {
    Path dir = line("0001-b-twenty.patch", P1);
    repos.convert(dir, AUTHORS);
    Path repo = tmp.getRoot().toPath().resolve("onto");
    repos.export(Series.read(dir, MODULES), repo, AUTHORS);
    try (ZipFile next = jar("A.java", A.replace("b = 2;", "b = 3;"), "B.java", B, "C.java", C)) {
      String conflict = repos.moveOnto(repo, next, "org.example:mod:1.1", "1.0");
      assertTrue(conflict, conflict != null && conflict.contains("CONFLICT"));
      assertTrue(conflict, conflict.contains(MAIN + "p/A.java"));
    }
  }

  /** A second upstream module built from the same series, with its sources jar. */
  static final String OTHER = "other/src/main/java/";
  static final String D = "package p;\n\nclass D {\n  int u = 1;\n  int v = 2;\n  int w = 3;\n"
      + "  int x = 4;\n  int y = 5;\n}\n";
  /** Changes A in mod and D in other, as 0101 of the 2.6.4 series changes three modules. */
  static final String BOTH = Patches.mail("Both grow", "Upstream: none\nForwarded: no\nModule: none\n",
      "diff --git a/mod/src/main/java/p/A.java b/mod/src/main/java/p/A.java\n"
      + "--- a/mod/src/main/java/p/A.java\n+++ b/mod/src/main/java/p/A.java\n"
      + "@@ -2,7 +2,7 @@\n \n class A {\n   int a = 1;\n-  int b = 2;\n+  int b = 20;\n"
      + "   int c = 3;\n   int d = 4;\n   int e = 5;\n"
      + "diff --git a/other/src/main/java/p/D.java b/other/src/main/java/p/D.java\n"
      + "--- a/other/src/main/java/p/D.java\n+++ b/other/src/main/java/p/D.java\n"
      + "@@ -4,3 +4,3 @@ class D {\n   int u = 1;\n-  int v = 2;\n+  int v = 22;\n   int w = 3;\n");

  @Test
  public void exportOnto_aSeriesOverSeveralModules_movesEveryModulesSources() throws Exception {
    Path dir = line("0001-both-grow.patch", BOTH);
    Series series = Series.read(dir, MODULES).forModule("mod", Set.of("mod", "other"));
    Path repo = tmp.getRoot().toPath().resolve("onto-two");
    try (ZipFile d10 = jar("D.java", D);
        ZipFile a11 = jar("A.java", "// 1.1\n" + A.replace("  int e = 5;", "  int e = 50;"),
            "B.java", B, "C.java", C);
        // 1.1 of the other module moved D down and changed a line near the hunk: a merge applies.
        ZipFile d11 = jar("D.java", "// 1.1\n" + D.replace("  int x = 4;", "  int x = 40;"))) {
      SeriesRepo two = new SeriesRepo(jar, "org.example:mod:1.0", MAIN, TEST, MODULES, scratch)
          .withSiblings(List.of(new SeriesRepo.Sibling(d10, OTHER, "org.example:other:1.0")));
      two.export(series, repo, AUTHORS);
      assertEquals(null, two.moveOnto(repo, List.of(
          new SeriesRepo.Sibling(a11, MAIN, "org.example:mod:1.1"),
          new SeriesRepo.Sibling(d11, OTHER, "org.example:other:1.1")), "1.0"));
      Git git = git(repo);
      assertEquals(git.run("rev-parse", "upstream-1.0").strip(),
          git.run("rev-parse", "series-base^").strip());
      assertTrue(git.run("log", "-1", "--format=%B", "series-base"), git.run("log", "-1",
          "--format=%B", "series-base").startsWith("Upstream sources of org.example:mod:1.1,"
          + " org.example:other:1.1\n"));
      assertEquals("// 1.1\n" + D.replace("  int x = 4;", "  int x = 40;").replace("v = 2;", "v = 22;"),
          git.run("show", "series:" + OTHER + "p/D.java"));
      assertEquals("// 1.1\n" + A.replace("  int e = 5;", "  int e = 50;").replace("b = 2;", "b = 20;"),
          git.run("show", "series:" + MAIN + "p/A.java"));
      assertEquals("B.java is in both bases", B, git.run("show", "series-base:" + MAIN + "p/B.java"));
    }
  }

  @Test
  public void exportOnto_aSeriesOverSeveralModules_refusesAnotherSetOfModules() throws Exception {
    Path dir = line("0001-both-grow.patch", BOTH);
    Series series = Series.read(dir, MODULES).forModule("mod", Set.of("mod", "other"));
    Path repo = tmp.getRoot().toPath().resolve("onto-one");
    try (ZipFile d10 = jar("D.java", D)) {
      SeriesRepo two = new SeriesRepo(jar, "org.example:mod:1.0", MAIN, TEST, MODULES, scratch)
          .withSiblings(List.of(new SeriesRepo.Sibling(d10, OTHER, "org.example:other:1.0")));
      two.export(series, repo, AUTHORS);
      try {
        two.moveOnto(repo, jar, "org.example:mod:1.1", "1.0");
        fail("the new base would lack the other module's sources");
      } catch (PatchFailure e) {
        assertTrue(e.getMessage(), e.getMessage().contains("series.modules"));
        assertTrue(e.getMessage(), e.getMessage().contains(OTHER));
      }
    }
  }
}
