package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import org.apache.maven.plugin.MojoFailureException;
import org.eclipse.aether.RepositorySystem;
import org.eclipse.aether.RepositorySystemSession;
import org.eclipse.aether.artifact.DefaultArtifact;
import org.eclipse.aether.repository.RemoteRepository;
import org.eclipse.aether.resolution.ArtifactRequest;
import org.eclipse.aether.resolution.ArtifactResolutionException;

/**
 * Resolves the upstream artifacts of a line (jar, sources jar, another release's jars) from the
 * build's repositories and checks each against the line's pins before anything reads it.
 *
 * <p>Pins: {@code upstream.sha256} in the line's folder (a flavour such as 2.6.4-hadoop3 has
 * its own, since its upstream artifact is another), one line per artifact,
 * {@code <sha256>  <groupId>:<artifactId>:<version>[:<classifier>]}, as {@code sha256sum}
 * writes a hash and a name; {@code #} starts a comment. An artifact without a pin, or whose
 * bytes have another digest, stops the build: coordinates alone name whatever a repository or
 * mirror serves.
 */
final class UpstreamArtifacts {
  /** The pins file of a line, in the line's folder. */
  static final String PINS_FILE = "upstream.sha256";

  private UpstreamArtifacts() {}

  /** Resolves {@code groupId:artifactId:version[:classifier]} and {@link #verify verifies} it. */
  static File resolve(RepositorySystem system, RepositorySystemSession session,
      List<RemoteRepository> repos, String groupId, String artifactId, String classifier,
      String version, String what, Path pins) throws MojoFailureException {
    DefaultArtifact artifact = new DefaultArtifact(groupId, artifactId, classifier, "jar", version);
    File file;
    try {
      file = system.resolveArtifact(session, new ArtifactRequest(artifact, repos, null))
          .getArtifact().getFile();
    } catch (ArtifactResolutionException e) {
      throw new MojoFailureException("Cannot get the upstream " + what + " " + artifact + " ("
          + e.getMessage() + ").\n  The pipeline builds from the upstream release on Maven"
          + " Central. Check that " + groupId + ":" + artifactId + ":" + version + " was released"
          + (classifier.isEmpty() ? "" : " with a '" + classifier + "' jar")
          + " and that Maven Central is reachable (or mirrored in your settings.xml). For an"
          + " unreleased build, install it locally first with mvn install:install-file.", e);
    }
    verify(pins, coordinates(groupId, artifactId, version, classifier), file);
    return file;
  }

  /** groupId:artifactId:version, then :classifier unless it is empty: how a pin names it. */
  static String coordinates(String groupId, String artifactId, String version,
      String classifier) {
    return groupId + ":" + artifactId + ":" + version
        + (classifier == null || classifier.isEmpty() ? "" : ":" + classifier);
  }

  /**
   * Fails unless {@code pins} records {@code coordinates} with the SHA-256 of {@code file}. The
   * one check every resolution of an upstream artifact goes through, before any byte is used.
   */
  static void verify(Path pins, String coordinates, File file) throws MojoFailureException {
    String actual;
    try {
      actual = Checksums.sha256(file.toPath());
    } catch (IOException e) {
      throw new MojoFailureException("Cannot read " + file + " to check its SHA-256: " + e);
    }
    String expected = pinned(pins, coordinates);
    String add = "\n    " + actual + "  " + coordinates + "\n  to " + pins
        + ", after checking that these are the released bytes (Maven Central's .sha1 beside the"
        + " artifact, or the release's signature with the project's KEYS). Adding a pin is right"
        + " for an artifact the pipeline did not read before (a new line, a release compared"
        + " against); docs/building.md, \"Pinned upstream inputs\".";
    if (expected == null) {
      throw new MojoFailureException("The upstream artifact " + coordinates + " (" + file
          + ") is not pinned: " + pins + (Files.isRegularFile(pins) ? " has no line for it."
              : " does not exist.") + " Its SHA-256 is " + actual + ". Add the line" + add);
    }
    if (!expected.equals(actual)) {
      throw new MojoFailureException("The upstream artifact " + coordinates + " is not the one"
          + " pinned: " + file + " has SHA-256\n    " + actual + "\n  but " + pins + " pins\n    "
          + expected + "\n  A corrupted or altered download, or a repository or mirror serving"
          + " other bytes under these coordinates. Delete the file from the local repository and"
          + " build again. Do not update the pin to make this pass: a release on Maven Central"
          + " never changes, so the pin changes only when the line moves to other coordinates,"
          + " with a pin checked as for a new one.");
    }
  }

  /**
   * For an upstream artifact Maven resolved as a dependency (a {@code tests} jar whose classes
   * run against a custom jar): verifies it against the pins file under {@code patches}
   * ({@code <project>/<line>/upstream.sha256}) that names it. An artifact no pins file names is
   * let through when no line pins anything of its {@code groupId:artifactId} (a sibling module's
   * tests jar); otherwise it fails as a missing pin, naming the file of the line of its version
   * if there is one. Returns the pins file it was checked against, or null.
   */
  static Path verifyDependency(Path patches, String groupId, String artifactId, String version,
      String classifier, File file) throws MojoFailureException {
    String coordinates = coordinates(groupId, artifactId, version, classifier);
    String project = groupId + ":" + artifactId + ":";
    Path own = null;
    boolean pinsProject = false;
    for (Path pins : pinsFiles(patches)) {
      if (pinned(pins, coordinates) != null) {
        verify(pins, coordinates, file);
        return pins;
      }
      if (own == null && pins.getParent().getFileName().toString().equals(version)) {
        own = pins;
      }
      pinsProject |= pinnedCoordinates(pins).stream().anyMatch(c -> c.startsWith(project));
    }
    if (pinsProject) {
      verify(own != null ? own
          : patches.resolve("<project>/<the line whose tests these are>/" + PINS_FILE),
          coordinates, file);
    }
    return null;
  }

  private static List<Path> pinsFiles(Path patches) throws MojoFailureException {
    List<Path> out = new java.util.ArrayList<>();
    try (java.util.stream.Stream<Path> projects = Files.list(patches)) {
      for (Path project : (Iterable<Path>) projects.sorted()::iterator) {
        if (!Files.isDirectory(project)) {
          continue;
        }
        try (java.util.stream.Stream<Path> lines = Files.list(project)) {
          lines.sorted().map(l -> l.resolve(PINS_FILE)).filter(Files::isRegularFile)
              .forEach(out::add);
        }
      }
    } catch (IOException e) {
      throw new MojoFailureException("Cannot list the lines' pins under " + patches + ": " + e);
    }
    return out;
  }

  /** The digest {@code pins} records for {@code coordinates}, or null. */
  static String pinned(Path pins, String coordinates) throws MojoFailureException {
    return parse(pins).get(coordinates);
  }

  /** Every coordinates {@code pins} records. */
  static java.util.Set<String> pinnedCoordinates(Path pins) throws MojoFailureException {
    return parse(pins).keySet();
  }

  /** Coordinates to digest, as one parser reads them for every use of a pins file. */
  private static java.util.Map<String, String> parse(Path pins) throws MojoFailureException {
    java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
    List<String> lines;
    try {
      lines = Files.readAllLines(pins, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      return out;
    } catch (IOException e) {
      throw new MojoFailureException("Cannot read the upstream pins " + pins + ": " + e);
    }
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] f = line.split("\\s+");
      if (f.length != 2 || !f[0].matches("[0-9a-f]{64}") || f[1].split(":").length < 3) {
        throw new MojoFailureException(pins + " line " + (i + 1) + " is not '<sha256>"
            + "  <groupId>:<artifactId>:<version>[:<classifier>]' (64 lower-case hex digits,"
            + " two spaces, the coordinates): " + line);
      }
      String before = out.putIfAbsent(f[1], f[0]);
      if (before != null && !before.equals(f[0])) {
        throw new MojoFailureException(pins + " pins " + f[1] + " twice, with two digests;"
            + " keep the right one (line " + (i + 1) + ")");
      }
    }
    return out;
  }
}
