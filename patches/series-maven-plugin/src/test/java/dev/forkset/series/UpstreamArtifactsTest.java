package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.maven.plugin.MojoFailureException;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class UpstreamArtifactsTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final String GAV = "org.example:server:1.0:sources";
  /** A well-formed digest that is not the artifact's. */
  private static final String DIGEST =
      "0d3e7d5cf5ce9e2e1ea4c9df4b0b8b9e8e1f6b7c0b3a6cf1e9a53c2b4f7a5d11";

  private File artifact() throws Exception {
    Path f = tmp.getRoot().toPath().resolve("server-1.0-sources.jar");
    Files.write(f, "upstream".getBytes(StandardCharsets.UTF_8));
    return f.toFile();
  }

  private Path pins(String... lines) throws Exception {
    Path p = tmp.getRoot().toPath().resolve("upstream.sha256");
    Files.write(p, String.join("\n", lines).getBytes(StandardCharsets.UTF_8));
    return p;
  }

  private static String failure(Path pins, String gav, File file) {
    try {
      UpstreamArtifacts.verify(pins, gav, file);
    } catch (MojoFailureException e) {
      return e.getMessage();
    }
    fail("verify accepted " + file + " for " + gav);
    return null;
  }

  @Test
  public void verify_passes_whenThePinIsTheArtifactsDigest() throws Exception {
    File jar = artifact();
    String actual = Checksums.sha256(jar.toPath());
    UpstreamArtifacts.verify(pins("# comment", "", actual + "  " + GAV,
        DIGEST + "  org.example:server:1.0"), GAV, jar);
  }

  @Test
  public void verify_fails_onAWrongPin_namingTheArtifactBothDigestsAndTheFile() throws Exception {
    File jar = artifact();
    String actual = Checksums.sha256(jar.toPath());
    Path pins = pins(DIGEST + "  " + GAV);
    String m = failure(pins, GAV, jar);
    assertTrue(m, m.startsWith("The upstream artifact " + GAV + " is not the one pinned: " + jar
        + " has SHA-256\n    " + actual + "\n  but " + pins + " pins\n    " + DIGEST + "\n"));
    assertTrue(m, m.contains("Do not update the pin to make this pass"));
  }

  @Test
  public void verify_fails_whenThePinIsMissing_givingTheLineToAdd() throws Exception {
    File jar = artifact();
    String actual = Checksums.sha256(jar.toPath());
    Path pins = pins(DIGEST + "  org.example:server:1.0");
    String m = failure(pins, GAV, jar);
    assertTrue(m, m.startsWith("The upstream artifact " + GAV + " (" + jar + ") is not pinned: "
        + pins + " has no line for it."));
    assertTrue(m, m.contains("\n    " + actual + "  " + GAV + "\n  to " + pins));
    Files.delete(pins);
    assertTrue(failure(pins, GAV, jar).contains(pins + " does not exist."));
  }

  @Test
  public void verify_fails_onAMalformedLine_namingFileAndLine() throws Exception {
    Path pins = pins("# pins", DIGEST.toUpperCase() + "  " + GAV);
    String m = failure(pins, GAV, artifact());
    assertTrue(m, m.startsWith(pins + " line 2 is not '<sha256>  <groupId>:<artifactId>:"));
  }

  @Test
  public void coordinates_addTheClassifierOnlyWhenThereIsOne() {
    assertEquals("g:a:1", UpstreamArtifacts.coordinates("g", "a", "1", ""));
    assertEquals("g:a:1:tests", UpstreamArtifacts.coordinates("g", "a", "1", "tests"));
  }

  @Test
  public void verifyDependency_withPinsWrittenWithATab_stillRefusesAnUnpinnedTestsJar()
      throws Exception {
    File jar = artifact();
    Path patches = tmp.newFolder("patches-tab").toPath();
    Path line = Files.createDirectories(patches.resolve("server/1.0"));
    Files.write(line.resolve("upstream.sha256"), (DIGEST + "\torg.example:server:1.0\n")
        .getBytes(StandardCharsets.UTF_8));
    try {
      UpstreamArtifacts.verifyDependency(patches, "org.example", "server", "1.0", "tests", jar);
      fail("a tests jar of a pinned project passed without a pin");
    } catch (MojoFailureException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("is not pinned"));
    }
  }

  @Test
  public void verifyDependency_checksAnUpstreamTestsJarAgainstThePinsOfTheLines() throws Exception {
    File jar = artifact();
    String actual = Checksums.sha256(jar.toPath());
    Path patches = tmp.newFolder("patches").toPath();
    Path line = Files.createDirectories(patches.resolve("server/1.0"));
    Path other = Files.createDirectories(patches.resolve("server/0.9"));
    Files.write(line.resolve("upstream.sha256"), (DIGEST + "  org.example:server:1.0\n"
        + actual + "  org.example:server:1.0:tests\n").getBytes(StandardCharsets.UTF_8));
    Files.write(other.resolve("upstream.sha256"), (DIGEST + "  org.example:server:0.9\n"
        + DIGEST + "  org.example:server:1.1:tests\n").getBytes(StandardCharsets.UTF_8));
    UpstreamArtifacts.verifyDependency(patches, "org.example", "server", "1.0", "tests", jar);
    // a sibling's tests jar: no line pins anything of org.example:sibling
    UpstreamArtifacts.verifyDependency(patches, "org.example", "sibling", "1.0", "tests", jar);
    try {
      // pinned by another line (a release whose tests that line runs), with other bytes
      UpstreamArtifacts.verifyDependency(patches, "org.example", "server", "1.1", "tests", jar);
      fail("a tests jar with other bytes than its pin was accepted");
    } catch (MojoFailureException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("but " + other.resolve("upstream.sha256")
          + " pins\n    " + DIGEST));
    }
    try {
      UpstreamArtifacts.verifyDependency(patches, "org.example", "server", "0.9", "tests", jar);
      fail("an unpinned tests jar of a pinned upstream artifact was accepted");
    } catch (MojoFailureException e) {
      assertTrue(e.getMessage(), e.getMessage().startsWith("The upstream artifact"
          + " org.example:server:0.9:tests (" + jar + ") is not pinned: "
          + other.resolve("upstream.sha256") + " has no line for it."));
    }
  }
}
