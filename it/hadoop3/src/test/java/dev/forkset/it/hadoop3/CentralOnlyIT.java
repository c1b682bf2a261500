package dev.forkset.it.hadoop3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The build asks Maven Central only. Maven's resolver leaves a trace in the local repository of
 * every remote request it makes: {@code _remote.repositories} names the repository each
 * downloaded file came from, {@code maven-metadata-<id>.xml} and {@code resolver-status.properties}
 * record each metadata look-up (a version range, a snapshot) per repository id, successful or
 * not, and {@code <file>.lastUpdated} each failed download per repository URL. This IT, in the
 * reactor's last module, reads every such file the running build wrote (modified since the
 * session started, {@code maven.build.timestamp}) and fails naming each one that records another
 * repository. The project's own artifacts (dev/forkset) are left out: they are installed, not
 * downloaded.
 *
 * <p>What it cannot see: a request answered from a cached record (a failure is cached for a day,
 * so only the first build of a fresh local repository, as in CI, repeats every request); requests
 * of a build run with a mirror whose id is not listed in {@code forkset.central.repositories}
 * (a corporate mirror of Central: add its id and URL there).
 */
public class CentralOnlyIT {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void theBuildWroteNoTraceOfARepositoryOtherThanCentral() throws IOException {
    Path repo = Paths.get(property("forkset.local.repository"));
    assertTrue("forkset.local.repository=" + repo, Files.isDirectory(repo));
    Instant start = Instant.parse(property("forkset.build.start"));
    List<String> allowed = Arrays.asList(property("forkset.central.repositories").trim().split("\\s+"));
    List<String> found = otherRepositories(repo, start, allowed);
    assertEquals("Since the build started (" + start + "), Maven asked repositories other than"
        + " Maven Central (" + allowed + "): a dependency's pom declares them and something made"
        + " Maven look there (a version range, a snapshot, an artifact missing from Central)."
        + " Pin the artifact in the root pom's dependencyManagement (\"Pinned version ranges\")"
        + " or exclude it; docs/building.md, \"Maven Central only\". Traces:\n  "
        + String.join("\n  ", found), 0, found.size());
  }

  /** The scanner must see each kind of trace, and only those written since the start. */
  @Test
  public void otherRepositories_findsEveryKindOfTraceWrittenSinceTheStart() throws IOException {
    Path repo = tmp.getRoot().toPath();
    Instant start = Instant.now().minusSeconds(60);
    write(repo.resolve("org/x/a/1.0/_remote.repositories"),
        "a-1.0.jar>central=\na-1.0.pom>apache.snapshots=\n");
    write(repo.resolve("org/x/b/resolver-status.properties"),
        "maven-metadata-central.xml.lastUpdated=1\nmaven-metadata-repository.jboss.org.xml.error=\n");
    write(repo.resolve("org/x/c/maven-metadata-java.net.Releases.xml"), "<metadata/>");
    write(repo.resolve("org/x/d/1.0/d-1.0.jar.lastUpdated"),
        "https\\://repo.maven.apache.org/maven2/.lastUpdated=1\n"
            + "https\\://maven.java.net/content/repositories/releases/.error=\n");
    write(repo.resolve("org/x/ok/1.0/_remote.repositories"), "ok-1.0.jar>central=\n");
    write(repo.resolve("org/x/ok/maven-metadata-central.xml"), "<metadata/>");
    Path old = write(repo.resolve("org/x/old/1.0/_remote.repositories"), "old-1.0.jar>jboss=\n");
    Files.setLastModifiedTime(old, java.nio.file.attribute.FileTime.from(start.minusSeconds(60)));
    write(repo.resolve("dev/forkset/x/1.0/_remote.repositories"), "x-1.0.jar>elsewhere=\n");

    List<String> found = otherRepositories(repo, start,
        Arrays.asList("central", "https://repo.maven.apache.org/maven2/"));
    String all = String.join("\n", found);
    assertEquals(all, 4, found.size());
    assertTrue(all, all.contains("org/x/a/1.0/_remote.repositories: a-1.0.pom from apache.snapshots"));
    assertTrue(all, all.contains("org/x/b/resolver-status.properties: metadata from repository.jboss.org"));
    assertTrue(all, all.contains("org/x/c/maven-metadata-java.net.Releases.xml: metadata from java.net.Releases"));
    assertTrue(all, all.contains("org/x/d/1.0/d-1.0.jar.lastUpdated: https://maven.java.net/content/repositories/releases/"));
  }

  static List<String> otherRepositories(Path repo, Instant start, List<String> allowed)
      throws IOException {
    List<String> found = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(repo)) {
      files = walk.filter(Files::isRegularFile).sorted().collect(Collectors.toList());
    }
    for (Path f : files) {
      String rel = repo.relativize(f).toString().replace('\\', '/');
      String name = f.getFileName().toString();
      boolean trace = name.equals("_remote.repositories") || name.equals("resolver-status.properties")
          || name.endsWith(".lastUpdated")
          || (name.startsWith("maven-metadata-") && name.endsWith(".xml"));
      if (!trace || rel.startsWith("dev/forkset/")
          || Files.getLastModifiedTime(f).toInstant().isBefore(start)) {
        continue;
      }
      if (name.equals("_remote.repositories")) {
        for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
          int gt = line.indexOf('>');
          if (line.startsWith("#") || gt < 0 || !line.endsWith("=")) {
            continue;
          }
          String id = line.substring(gt + 1, line.length() - 1);
          if (!id.isEmpty() && !allowed.contains(id)) {
            found.add(rel + ": " + line.substring(0, gt) + " from " + id);
          }
        }
      } else if (name.startsWith("maven-metadata-") && name.endsWith(".xml")) {
        String id = name.substring("maven-metadata-".length(), name.length() - ".xml".length());
        if (!id.equals("local") && !allowed.contains(id)) {
          found.add(rel + ": metadata from " + id);
        }
      } else {
        for (String key : keys(f)) {
          if (name.equals("resolver-status.properties")) {
            // maven-metadata-<id>.xml.lastUpdated / .error
            if (key.startsWith("maven-metadata-") && key.contains(".xml.")) {
              String id = key.substring("maven-metadata-".length(), key.lastIndexOf(".xml."));
              if (!allowed.contains(id)) {
                found.add(rel + ": metadata from " + id);
              }
            }
          } else if (key.contains("://")) {
            // <repository url>.lastUpdated / .error
            String url = key.substring(0, key.lastIndexOf('.'));
            if (allowed.stream().noneMatch(url::startsWith)) {
              found.add(rel + ": " + url);
            }
          }
        }
      }
    }
    return found.stream().distinct().collect(Collectors.toList());
  }

  private static List<String> keys(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1)) {
      p.load(in);
    }
    return p.stringPropertyNames().stream().sorted().collect(Collectors.toList());
  }

  private static Path write(Path file, String text) throws IOException {
    Files.createDirectories(file.getParent());
    return Files.write(file, text.getBytes(StandardCharsets.UTF_8));
  }

  private static String property(String name) {
    String v = System.getProperty(name);
    assertTrue(name + " is set by it/hadoop3/pom.xml; run through Maven",
        v != null && !v.isEmpty() && !v.startsWith("${"));
    return v;
  }
}
