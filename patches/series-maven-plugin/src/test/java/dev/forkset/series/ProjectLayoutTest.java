package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * The lines named in the root pom, the line folders under patches/ and the modules of
 * patches/pom.xml agree, and selecting a line that does not exist fails at once with the list.
 */
public class ProjectLayoutTest {
  private static final Path ROOT = Paths.get(System.getProperty("forkset.root", "../.."));

  private static String read(Path p) throws Exception {
    return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
  }

  private static Set<String> property(String name) throws Exception {
    Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]*)<").matcher(read(ROOT.resolve("pom.xml")));
    assertTrue(name + " is set in the root pom", m.find());
    return Arrays.stream(m.group(1).split(",")).map(String::trim)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static Set<String> folders(String project) throws Exception {
    try (Stream<Path> dirs = Files.list(ROOT.resolve("patches").resolve(project))) {
      return dirs.filter(d -> Files.isRegularFile(d.resolve(Series.SERIES_FILE)))
          .map(d -> d.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }
  }

  @Test
  public void rootPomLines_matchSeriesFolders_andAreAllBuilt() throws Exception {
    String modules = read(ROOT.resolve("patches/pom.xml"));
    for (String project : new String[] {"hbase", "hazelcast"}) {
      Set<String> lines = property(project + ".lines");
      assertEquals(project + ".lines in pom.xml vs patches/" + project + "/*/series",
          folders(project), lines);
      for (String line : lines) {
        assertTrue("patches/pom.xml builds " + project + "/" + line,
            modules.contains("<module>" + project + "/" + line + "</module>"));
      }
    }
  }

  @Test
  public void hazelcastOldestLine_isTheOldestOfTheLines() throws Exception {
    Set<String> oldest = property("hazelcast.oldest.line");
    assertEquals("hazelcast.oldest.line names one line", 1, oldest.size());
    String line = oldest.iterator().next();
    Set<String> lines = property("hazelcast.lines");
    assertTrue("hazelcast.oldest.line=" + line + " is one of hazelcast.lines " + lines,
        lines.contains(line));
    for (String other : lines) {
      assertTrue("hazelcast.oldest.line=" + line + " is older than " + other,
          compareVersions(line, other) <= 0);
    }
  }

  /** Compares dotted numeric versions field by field (5.10.0 is newer than 5.9.1). */
  static int compareVersions(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    for (int i = 0; i < Math.max(x.length, y.length); i++) {
      int c = Integer.compare(i < x.length ? Integer.parseInt(x[i]) : 0,
          i < y.length ? Integer.parseInt(y[i]) : 0);
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  @Test
  public void patchesReadme_listsEveryPatchOfEverySeries() throws Exception {
    String readme = read(ROOT.resolve("patches/README.md"));
    for (String project : new String[] {"hbase", "hazelcast"}) {
      for (String line : folders(project)) {
        String section = "### " + project + " " + line + "\n";
        assertTrue("patches/README.md has a section for " + project + " " + line,
            readme.contains(section));
        int from = readme.indexOf(section);
        int to = readme.indexOf("\n#", from + section.length());
        String table = readme.substring(from, to < 0 ? readme.length() : to);
        for (String raw : Files.readAllLines(
            ROOT.resolve("patches").resolve(project).resolve(line).resolve(Series.SERIES_FILE))) {
          String patch = raw.replaceAll("#.*", "").trim();
          if (!patch.isEmpty()) {
            assertTrue("patches/README.md lists " + patch + " under " + project + " " + line,
                table.contains("`" + patch + "`"));
          }
        }
      }
    }
  }

  @Test
  public void unknownVersion_failsAtOnceListingTheLines() throws Exception {
    Path mvnw = ROOT.resolve("mvnw");
    List<String> cmd = new ArrayList<>(Arrays.asList(mvnw.toAbsolutePath().toString(), "-B", "-o",
        "-N", "-q", "-f", ROOT.resolve("pom.xml").toAbsolutePath().toString(), "validate",
        "-Dhbase.version=9.9.9"));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue("maven finished", p.waitFor(120, TimeUnit.SECONDS));
    assertTrue(out, p.exitValue() != 0);
    assertTrue(out, out.contains("No patch series for -Dhbase.version=9.9.9"));
    assertTrue(out, out.contains("Available HBase lines: " + String.join(", ", property("hbase.lines"))));
  }
}
