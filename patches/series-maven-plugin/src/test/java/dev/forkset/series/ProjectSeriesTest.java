package dev.forkset.series;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The project's own series, every line: each patch is a git format-patch mail made against
 * exactly the upstream release (its index lines name the upstream blobs), and on a repository
 * exported from the sources jar {@code git am} and {@code git apply --3way} apply the patch files
 * and give byte for byte what the build's patcher gives.
 */
public class ProjectSeriesTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final Path ROOT = Paths.get(System.getProperty("forkset.root", "../.."));
  private static final Path JARS = Paths.get(System.getProperty("upstream.sources", "target/upstream-sources"));
  private static final Set<String> MODULES =
      Set.of("hbase-memstore-fix", "hbase-pmem-cache", "hazelcast-eviction");
  /** Upstream project folder to groupId:artifactId (the artifactId is also the module path). */
  private static final Map<String, String> ARTIFACT =
      Map.of("hbase", "org.apache.hbase:hbase-server", "hazelcast", "com.hazelcast:hazelcast");

  private static List<Path> lines() throws Exception {
    try (Stream<Path> s = Files.walk(ROOT.resolve("patches"), 3)) {
      List<Path> lines = s.filter(p -> p.getFileName().toString().equals(Series.SERIES_FILE))
          .map(Path::getParent).sorted().collect(Collectors.toList());
      assertTrue("series found under " + ROOT.resolve("patches"), lines.size() >= 5);
      return lines;
    }
  }

  @Test
  public void everyLine_isInMailForm_madeAgainstTheUpstreamBlobs_andRoundTripsThroughGit()
      throws Exception {
    List<String> problems = new ArrayList<>();
    for (Path line : lines()) {
      String project = line.getParent().getFileName().toString();
      String version = line.getFileName().toString();
      String coordinates = ARTIFACT.get(project) + ":" + version;
      String artifact = ARTIFACT.get(project).split(":")[1];
      Path jarFile = JARS.resolve(artifact + "-" + version + "-sources.jar");
      assertTrue(jarFile + " is missing: add " + artifact + " " + version + " sources to the"
          + " upstream-sources execution of patches/series-maven-plugin/pom.xml", Files.isRegularFile(jarFile));
      String main = artifact + "/src/main/java/";
      String test = artifact + "/src/test/java/";
      Series series;
      try {
        series = Series.read(line, MODULES); // refuses the old form
      } catch (PatchFailure e) {
        throw new AssertionError(line + ": " + e.getMessage(), e);
      }
      // A series may change several upstream modules (the 2.6.4 series: hbase-server and the
      // metrics source's hbase-hadoop-compat and hbase-hadoop2-compat): the line poms list them
      // in series.modules, which the build passes to forModule; export holds them all.
      java.util.Set<String> touched = new java.util.TreeSet<>(seriesModules(line, artifact));
      List<SeriesRepo.Sibling> siblings = new ArrayList<>();
      for (String m : touched) {
        if (!m.equals(artifact)) {
          Path sibling = JARS.resolve(m + "-" + version + "-sources.jar");
          assertTrue(sibling + " is missing: add it to the upstream-sources execution",
              Files.isRegularFile(sibling));
          siblings.add(new SeriesRepo.Sibling(new ZipFile(sibling.toFile()),
              m + "/src/main/java/", ARTIFACT.get(project).split(":")[0] + ":" + m + ":" + version));
        }
      }
      try (ZipFile jar = new ZipFile(jarFile.toFile())) {
        Series own;
        try {
          own = series.forModule(artifact, touched);
        } catch (PatchFailure e) {
          throw new AssertionError(line + ": " + e.getMessage(), e);
        }
        Series.Result built = own.apply(jar, main, test);
        problems.addAll(built.notes);
        Path scratch = tmp.newFolder().toPath();
        Path repo = tmp.getRoot().toPath().resolve(project + "-" + version);
        SeriesRepo repos = new SeriesRepo(jar, coordinates, main, test, MODULES, scratch)
            .withSiblings(siblings);
        repos.export(own, repo, (d, n) -> {
          throw new AssertionError("no old-form patch expected: " + n);
        }, true);
        Git git = new Git(repo, scratch.resolve("home"));
        List<String> patches = new ArrayList<>();
        for (Series.Patch p : series.patches()) {
          patches.add(line.resolve(p.name).toString());
          String from = new String(Files.readAllBytes(line.resolve(p.name)), StandardCharsets.UTF_8)
              .substring(5, 45);
          assertEquals(line + "/" + p.name + ": its From line is the commit export makes (run"
              + " series:convert)", from, git.run("rev-list", "--reverse", "series-base..series")
              .split("\n")[series.patches().indexOf(p)]);
        }
        List<String> am = new ArrayList<>(List.of("am", "--quiet", "--keep-cr"));
        am.addAll(patches);
        git.run("checkout", "--quiet", "-b", "by-am", "series-base");
        git.run(am.toArray(new String[0]));
        for (String branch : List.of("series", "by-am", "by-3way")) {
          if (branch.equals("by-3way")) {
            git.run("checkout", "--quiet", "-b", "by-3way", "series-base");
            for (String p : patches) {
              git.run("apply", "--3way", p);
            }
          } else {
            git.run("checkout", "--quiet", branch);
          }
          for (Map.Entry<String, String> f : built.mainSources.entrySet()) {
            assertArrayEquals(line + " " + branch + " " + f.getKey(),
                f.getValue().getBytes(StandardCharsets.UTF_8), Files.readAllBytes(repo.resolve(main + f.getKey())));
          }
          for (Map.Entry<String, String> f : built.testSources.entrySet()) {
            assertArrayEquals(line + " " + branch + " " + f.getKey(),
                f.getValue().getBytes(StandardCharsets.UTF_8), Files.readAllBytes(repo.resolve(test + f.getKey())));
          }
        }
      }
    }
    assertEquals("every patch is made against exactly its upstream files", List.of(), problems);
  }

  /**
   * The line's {@code series.modules} as the build reads it: the property in the line's pom,
   * with a {@code ${name}} reference taken from the project's parent pom (patches/hbase/pom.xml);
   * {@code artifact} alone when the line lists none.
   */
  private static java.util.Set<String> seriesModules(Path line, String artifact) throws Exception {
    String value = property(line.resolve("pom.xml"), "series.modules");
    if (value != null && value.startsWith("${")) {
      value = property(line.getParent().resolve("pom.xml"),
          value.substring(2, value.length() - 1));
    }
    java.util.Set<String> out = new java.util.TreeSet<>();
    if (value != null) {
      for (String m : value.split(",")) {
        if (!m.isBlank()) {
          out.add(m.strip());
        }
      }
    }
    out.add(artifact);
    return out;
  }

  private static String property(Path pom, String name) throws Exception {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("<" + java.util.regex.Pattern.quote(name)
        + ">([^<]*)</").matcher(new String(Files.readAllBytes(pom), StandardCharsets.UTF_8));
    return m.find() ? m.group(1).strip() : null;
  }

  /**
   * The project's 2.6.4 series touches hbase-hadoop2-compat: a line whose series.modules left it
   * out would build a jar without that change, so the build refuses the section, naming it.
   */
  @Test
  public void aSectionUnderAModuleNoLineLists_isRefused_namingTheModuleAndTheSetting()
      throws Exception {
    Path line = ROOT.resolve("patches/hbase/2.6.4");
    java.util.Set<String> listed = seriesModules(line, "hbase-server");
    assertTrue(listed.toString(), listed.contains("hbase-hadoop2-compat"));
    listed.remove("hbase-hadoop2-compat");
    Series series = Series.read(line, MODULES);
    try {
      series.forModule("hbase-server", listed);
      org.junit.Assert.fail("a section under hbase-hadoop2-compat must be refused when no line"
          + " lists it in series.modules");
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("in the upstream module"
          + " hbase-hadoop2-compat, which no line module of this series builds (series.modules:"
          + " hbase-hadoop-compat, hbase-server)"));
      assertTrue(e.getMessage(), e.getMessage().contains("list it in series.modules"));
    }
  }
}
