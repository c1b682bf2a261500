package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The repository's build layout agrees with itself: the lines named in the root pom, the line
 * folders under patches/ and the modules that build them; the custom-jar versions the root pom
 * hands to the modules and the lines' versions and revisions; and selecting a line that does not
 * exist fails at once with the list. A plain unit test: it reads the poms, and the one Maven run
 * it starts (offline, one pom, the validate phase) is killed after a timeout that fires.
 */
public class ProjectLayoutTest {
  private static final Path ROOT = Paths.get(System.getProperty("forkset.root", "../..")).toAbsolutePath().normalize();
  private static final String[] PROJECTS = {"hbase", "hazelcast"};

  private static Element pom(Path file) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(false);
    Document doc = f.newDocumentBuilder().parse(file.toFile());
    return doc.getDocumentElement();
  }

  /** Text of the first direct child named {@code name}, or null. */
  private static String child(Element e, String name) {
    Element c = element(e, name);
    return c == null ? null : c.getTextContent().trim();
  }

  private static Element element(Element e, String name) {
    for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element && n.getNodeName().equals(name)) {
        return (Element) n;
      }
    }
    return null;
  }

  private static Map<String, String> properties(Element pom) {
    Map<String, String> props = new TreeMap<>();
    Element p = element(pom, "properties");
    if (p != null) {
      for (Node n = p.getFirstChild(); n != null; n = n.getNextSibling()) {
        if (n instanceof Element) {
          props.put(n.getNodeName(), n.getTextContent().trim());
        }
      }
    }
    return props;
  }

  private static Set<String> modules(Element pom) {
    Set<String> modules = new TreeSet<>();
    Element m = element(pom, "modules");
    if (m != null) {
      NodeList list = m.getElementsByTagName("module");
      for (int i = 0; i < list.getLength(); i++) {
        modules.add(list.item(i).getTextContent().trim());
      }
    }
    return modules;
  }

  private static Set<String> list(String value) {
    return Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty())
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static Map<String, String> rootProperties() throws Exception {
    return properties(pom(ROOT.resolve("pom.xml")));
  }

  private static Set<String> seriesFolders(String project) throws Exception {
    try (Stream<Path> dirs = Files.list(ROOT.resolve("patches").resolve(project))) {
      return dirs.filter(d -> Files.isRegularFile(d.resolve(Series.SERIES_FILE)))
          .map(d -> d.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }
  }

  @Test
  public void rootPomLines_matchSeriesFolders_andAreAllBuilt() throws Exception {
    Map<String, String> root = rootProperties();
    assertTrue("patches/pom.xml builds both projects' lines",
        modules(pom(ROOT.resolve("patches/pom.xml"))).containsAll(Arrays.asList(PROJECTS)));
    for (String project : PROJECTS) {
      Set<String> lines = list(root.get(project + ".lines"));
      assertEquals(project + ".lines in pom.xml vs patches/" + project + "/*/series",
          seriesFolders(project), lines);
      Set<String> built = modules(pom(ROOT.resolve("patches").resolve(project).resolve("pom.xml")));
      for (String line : lines) {
        assertTrue("patches/" + project + "/pom.xml builds " + line, built.contains(line));
      }
    }
  }

  @Test
  public void flavours_shareTheSeriesOfTheirLine_andAreBuilt() throws Exception {
    Map<String, String> root = rootProperties();
    Set<String> built = modules(pom(ROOT.resolve("patches/hbase/pom.xml")));
    Set<String> flavours = list(root.getOrDefault("hbase.flavours", ""));
    assertFalse("hbase.flavours names the Hadoop 3 flavour", flavours.isEmpty());
    for (String flavour : flavours) {
      Path dir = ROOT.resolve("patches/hbase").resolve(flavour);
      assertTrue("patches/hbase/pom.xml builds " + flavour, built.contains(flavour));
      assertFalse(flavour + " keeps no series of its own (it shares its line's)",
          Files.exists(dir.resolve(Series.SERIES_FILE)));
      String seriesDir = properties(pom(dir.resolve("pom.xml"))).get("series.dir");
      assertNotNull(flavour + " sets series.dir", seriesDir);
      Path line = dir.resolve(seriesDir.replace("${project.basedir}/", "")).normalize();
      assertTrue(flavour + "'s series.dir " + line + " is a line of hbase.lines",
          list(root.get("hbase.lines")).contains(line.getFileName().toString())
              && Files.isRegularFile(line.resolve(Series.SERIES_FILE)));
    }
  }

  @Test
  public void lineVersions_areTheUpstreamVersionAndTheNewestRevision() throws Exception {
    for (String project : PROJECTS) {
      for (String folder : lineFolders(project)) {
        Path dir = ROOT.resolve("patches").resolve(project).resolve(folder);
        Element pom = pom(dir.resolve("pom.xml"));
        Map<String, String> props = properties(pom);
        Path seriesDir = dir.resolve(props.getOrDefault("series.dir", "${project.basedir}")
            .replace("${project.basedir}", ".")).normalize();
        int revision = Revisions.read(seriesDir.resolve(Revisions.FILE)).last();
        assertEquals("patches/" + project + "/" + folder + "/pom.xml <version>",
            Revisions.version(props.get("upstream.version"), revision), child(pom, "version"));
      }
    }
  }

  @Test
  public void rootForkVersions_nameBuiltLineVersions() throws Exception {
    Set<String> versions = new TreeSet<>();
    for (String project : PROJECTS) {
      for (String folder : lineFolders(project)) {
        versions.add(child(pom(ROOT.resolve("patches").resolve(project).resolve(folder)
            .resolve("pom.xml")), "version"));
      }
    }
    int checked = 0;
    for (Map.Entry<String, String> p : rootProperties().entrySet()) {
      if (p.getKey().endsWith(".fork.version")) {
        checked++;
        assertTrue("root pom " + p.getKey() + "=" + p.getValue() + " is the version of a line"
            + " under patches/ (one of " + versions + "); after a new revision, set it to the"
            + " line's new version", versions.contains(p.getValue()));
      }
    }
    assertTrue("the root pom names the custom jars it uses", checked >= 4);
  }

  @Test
  public void everyLinePinsItsUpstreamJarAndSources_andTheTestsCopiesMatchThePins()
      throws Exception {
    Path copies = Paths.get(System.getProperty("upstream.sources", "target/upstream-sources"));
    int matched = 0;
    for (String project : PROJECTS) {
      Map<String, String> shared = properties(pom(ROOT.resolve("patches").resolve(project)
          .resolve("pom.xml")));
      for (String folder : lineFolders(project)) {
        Path dir = ROOT.resolve("patches").resolve(project).resolve(folder);
        Path pins = dir.resolve(UpstreamArtifacts.PINS_FILE);
        Map<String, String> own = properties(pom(dir.resolve("pom.xml")));
        String version = own.get("upstream.version");
        // A line module of a series over several upstream modules builds its own artifact.
        String artifactId = own.getOrDefault("upstream.artifactId",
            shared.get("upstream.artifactId"));
        for (String classifier : new String[] {"", "sources"}) {
          String gav = UpstreamArtifacts.coordinates(shared.get("upstream.groupId"), artifactId,
              version, classifier);
          String pinned = UpstreamArtifacts.pinned(pins, gav);
          assertNotNull(pins + " pins " + gav + " (docs/building.md, \"Pinned upstream"
              + " inputs\")", pinned);
          Path copy = copies.resolve(artifactId + "-" + version + "-sources.jar");
          if (!classifier.isEmpty() && Files.isRegularFile(copy)) {
            // ProjectSeriesTest reads these copies, which maven-dependency-plugin resolved.
            assertEquals(copy + " is the pinned " + gav, pinned, Checksums.sha256(copy));
            matched++;
          }
        }
      }
    }
    assertTrue("the sources jars ProjectSeriesTest reads were checked (" + copies + ")",
        matched >= 5 || !Files.isDirectory(copies));
  }

  /** Folders under patches/<project>/ that build a custom jar: lines and flavours. */
  private static List<String> lineFolders(String project) throws Exception {
    List<String> out = new ArrayList<>();
    try (Stream<Path> dirs = Files.list(ROOT.resolve("patches").resolve(project))) {
      for (Path d : (Iterable<Path>) dirs.sorted()::iterator) {
        if (Files.isRegularFile(d.resolve("pom.xml"))
            && properties(pom(d.resolve("pom.xml"))).containsKey("upstream.version")
            && child(pom(d.resolve("pom.xml")), "packaging") == null) {
          out.add(d.getFileName().toString());
        }
      }
    }
    assertFalse("patches/" + project + " has lines", out.isEmpty());
    return out;
  }

  /** The Failsafe system properties a module's pom passes to its ITs. */
  private static Set<String> failsafeProperties(Path pomFile) throws Exception {
    Element build = element(pom(pomFile), "build");
    Element plugins = build == null ? null : element(build, "plugins");
    Set<String> keys = new TreeSet<>();
    if (plugins == null) {
      return keys;
    }
    for (Node n = plugins.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element && "maven-failsafe-plugin".equals(child((Element) n, "artifactId"))) {
        Element config = element((Element) n, "configuration");
        Element vars = config == null ? null : element(config, "systemPropertyVariables");
        for (Node v = vars == null ? null : vars.getFirstChild(); v != null; v = v.getNextSibling()) {
          if (v instanceof Element) {
            keys.add(v.getNodeName());
          }
        }
      }
    }
    return keys;
  }

  @Test
  public void hadoop3Its_getEveryNonHazelcastPropertyTheItsRead() throws Exception {
    Set<String> it = failsafeProperties(ROOT.resolve("it/pom.xml"));
    Set<String> hadoop3 = failsafeProperties(ROOT.resolve("it/hadoop3/pom.xml"));
    assertTrue("it/pom.xml passes the custom hbase-server jar", it.contains("forkset.hbase.custom.jar"));
    Set<String> missing = new TreeSet<>();
    for (String key : it) {
      // Hazelcast members, the docs and the 2.1.2 minicluster (its own JVMs and class path) do
      // not depend on the Hadoop flavour of the default line.
      if (!key.startsWith("forkset.hazelcast.") && !key.startsWith("forkset.member.")
          && !key.startsWith("forkset.docs") && !key.startsWith("forkset.hbase21.")
          && !hadoop3.contains(key)) {
        missing.add(key);
      }
    }
    assertEquals("it/hadoop3 runs it/'s HBase ITs: add these Failsafe systemPropertyVariables of"
        + " it/pom.xml to it/hadoop3/pom.xml (with the -hadoop3 artifact where one is named)",
        Set.of(), missing);
  }

  @Test
  public void hazelcastOldestLine_isTheOldestOfTheLines() throws Exception {
    Map<String, String> root = rootProperties();
    String line = root.get("hazelcast.oldest.line");
    Set<String> lines = list(root.get("hazelcast.lines"));
    assertTrue("hazelcast.oldest.line=" + line + " is one of hazelcast.lines " + lines,
        lines.contains(line));
    for (String other : lines) {
      assertTrue("hazelcast.oldest.line=" + line + " is older than " + other,
          compareVersions(line, other) <= 0);
    }
    assertTrue("hazelcast.oldest.fork.version is that line's",
        root.get("hazelcast.oldest.fork.version").startsWith(line + "-fork."));
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
    String readme = new String(Files.readAllBytes(ROOT.resolve("patches/README.md")),
        StandardCharsets.UTF_8);
    for (String project : PROJECTS) {
      for (String line : seriesFolders(project)) {
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

  @Test(timeout = 180_000)
  public void unknownVersion_failsAtOnceListingTheLines() throws Exception {
    List<String> cmd = new ArrayList<>(Arrays.asList(ROOT.resolve("mvnw").toString(), "-B", "-o",
        "-N", "-f", ROOT.resolve("pom.xml").toString(), "validate", "-Dhbase.version=9.9.9"));
    String repo = System.getProperty("forkset.repo.local", "");
    if (!repo.isEmpty() && !repo.startsWith("${")) {
      cmd.add("-Dmaven.repo.local=" + repo);
    }
    File log = File.createTempFile("unknown-version", ".log");
    Process p = new ProcessBuilder(cmd).directory(ROOT.toFile()).redirectErrorStream(true)
        .redirectOutput(log).start();
    boolean finished = p.waitFor(120, TimeUnit.SECONDS);
    if (!finished) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
    String out = new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
    Files.delete(log.toPath());
    if (!finished) {
      fail("Maven did not stop within 120 s (killed). Output:\n" + out);
    }
    assertTrue(out, p.exitValue() != 0);
    assertTrue(out, out.contains("No patch series for -Dhbase.version=9.9.9"));
    assertTrue(out, out.contains("Available HBase lines: " + rootProperties().get("hbase.lines")));
  }
}
