package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.maven.plugin.MojoFailureException;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class RevisionsTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private Path line() throws Exception {
    Path dir = tmp.newFolder("1.0").toPath();
    write(dir.resolve("series"), "# order\n0001-a.patch\n0002-b.patch  # second\n");
    write(dir.resolve("0001-a.patch"), "patch a\n");
    write(dir.resolve("0002-b.patch"), "patch b\n");
    return dir;
  }

  private static void write(Path p, String s) throws Exception {
    Files.createDirectories(p.getParent());
    Files.write(p, s.getBytes(StandardCharsets.UTF_8));
  }

  private interface Check {
    void run() throws Exception;
  }

  private static void fails(Check check, String... expected) throws Exception {
    try {
      check.run();
      fail("passed");
    } catch (MojoFailureException e) {
      for (String s : expected) {
        assertTrue(e.getMessage(), e.getMessage().contains(s));
      }
    }
  }

  @Test
  public void digest_changesWithEveryByteOfTheSeriesAndItsPatches() throws Exception {
    Path dir = line();
    String before = Revisions.digest(dir);
    assertEquals(64, before.length());
    write(dir.resolve("0002-b.patch"), "patch b \n");
    String patchChanged = Revisions.digest(dir);
    assertNotEquals(before, patchChanged);
    write(dir.resolve("series"), "0001-a.patch\n0002-b.patch\n");
    assertNotEquals("comments are part of the series file", patchChanged, Revisions.digest(dir));
  }

  @Test
  public void digest_ignoresFilesTheSeriesDoesNotName() throws Exception {
    Path dir = line();
    String before = Revisions.digest(dir);
    write(dir.resolve("revisions"), "1 x\n");
    write(dir.resolve("0003-unlisted.patch"), "not applied\n");
    write(dir.resolve("src/test/java/T.java"), "class T {}\n");
    assertEquals(before, Revisions.digest(dir));
  }

  @Test
  public void digest_failsNamingAPatchTheSeriesListsButThatIsMissing() throws Exception {
    Path dir = line();
    Files.delete(dir.resolve("0002-b.patch"));
    try {
      Revisions.digest(dir);
      fail("missing patch");
    } catch (MojoFailureException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("0002-b.patch"));
    }
  }

  @Test
  public void check_passes_whenTheLastRevisionRecordsTheSeriesAndNamesTheVersion() throws Exception {
    Path dir = line();
    String d = Revisions.digest(dir);
    write(dir.resolve("revisions"), "# comment\n1 " + "0".repeat(64) + " first\n2 " + d
        + " second: 0002 reworded\n");
    Revisions r = Revisions.read(dir.resolve("revisions"));
    assertEquals(2, r.last());
    r.check(d, "1.0-fork.2", "1.0", "patches/x/1.0/pom.xml");
  }

  @Test
  public void check_fails_whenTheSeriesChangedWithoutANewRevision_namingWhatToBump() throws Exception {
    Path dir = line();
    write(dir.resolve("revisions"), "1 " + Revisions.digest(dir) + " first\n");
    write(dir.resolve("0001-a.patch"), "patch a, changed\n");
    String now = Revisions.digest(dir);
    Revisions r = Revisions.read(dir.resolve("revisions"));
    fails(() -> r.check(now, "1.0-fork.1", "1.0", "patches/x/1.0/pom.xml"),
        "changed since revision 1", "append the line", "2 " + now,
        "set <version> in patches/x/1.0/pom.xml to 1.0-fork.2");
  }

  @Test
  public void check_fails_whenThePomVersionIsNotTheLastRevision() throws Exception {
    Path dir = line();
    String d = Revisions.digest(dir);
    write(dir.resolve("revisions"), "1 " + "0".repeat(64) + " first\n2 " + d + " second\n");
    Revisions r = Revisions.read(dir.resolve("revisions"));
    fails(() -> r.check(d, "1.0-fork.1", "1.0", "pom.xml"), "1.0-fork.2", "revision 2");
    fails(() -> r.check(d, "1.0-fork", "1.0", "pom.xml"), "1.0-fork.2");
  }

  @Test
  public void read_rejectsGapsDuplicatesAndMalformedLines() throws Exception {
    Path file = tmp.getRoot().toPath().resolve("revisions");
    String a = "a".repeat(64);
    String b = "b".repeat(64);
    for (String bad : new String[] {"2 " + a + " starts at two\n", "1 " + a + " x\n3 " + b + " gap\n",
        "1 " + a + " x\n1 " + b + " again\n", "1 abc short digest\n", "one " + a + "\n", "1 " + a + "\n", ""}) {
      write(file, bad);
      try {
        Revisions.read(file);
        fail("accepted " + bad);
      } catch (MojoFailureException e) {
        assertTrue(e.getMessage(), e.getMessage().contains(file.toString()));
      }
    }
  }

  @Test
  public void read_failsWithTheFirstLineToWrite_whenThereIsNoRevisionsFile() throws Exception {
    Path dir = line();
    try {
      Revisions.read(dir.resolve("revisions"));
      fail("no file");
    } catch (MojoFailureException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("No revisions file"));
    }
  }
}
