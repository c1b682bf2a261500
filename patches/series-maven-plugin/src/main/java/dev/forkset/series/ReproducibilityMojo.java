package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/**
 * Proves in the build that the custom jar is reproducible: rebuilds it from a copy of the
 * compiled classes (written in reverse order, with other modification times) into
 * {@code target/reproducibility/} and fails, naming the first differing entry, unless the bytes
 * equal the packaged jar's; also checks that every entry carries
 * {@code project.build.outputTimestamp}. Cheap (one more jar write), so it runs on every line.
 */
@Mojo(name = "check-reproducible", defaultPhase = LifecyclePhase.VERIFY, threadSafe = true)
public class ReproducibilityMojo extends OverlayMojo {
  @Parameter(defaultValue = "${project.build.directory}/reproducibility", required = true)
  private File workDirectory;

  @Parameter(property = "skipTests", defaultValue = "false")
  private boolean skip;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    if (skip) {
      getLog().info("Reproducibility check skipped (skipTests)");
      return;
    }
    File upstreamJar = resolveUpstream("", "jar");
    Instant timestamp = timestamp();
    try {
      Path work = workDirectory.toPath();
      deleteTree(work);
      Path classes = work.resolve("classes");
      copyShuffled(classesDirectory.toPath(), classes);
      State state = readState();
      Path again = work.resolve(outputJar.getName());
      try (JarFile upstream = new JarFile(upstreamJar)) {
        OverlayJar.write(upstream, classes, recompiled(classes, state.units), state.units,
            manifest(upstream, state.applied, Revisions.digest(seriesDirectory.toPath())),
            rewritten(upstreamJar.toPath()), timestamp, again);
      }
      byte[] built = Files.readAllBytes(outputJar.toPath());
      byte[] rebuilt = Files.readAllBytes(again);
      if (!Arrays.equals(built, rebuilt)) {
        throw new MojoFailureException(outputJar.getName() + " is not reproducible: a rebuild"
            + " from the same classes (" + again + ") differs, " + firstDifference(outputJar.toPath(), again)
            + ". Something other than the inputs (clock, file times, directory order) reaches"
            + " the jar; see OverlayJar.");
      }
      LocalDateTime fixed = LocalDateTime.ofInstant(timestamp, ZoneOffset.UTC);
      try (JarFile jar = new JarFile(outputJar)) {
        Enumeration<JarEntry> entries = jar.entries();
        while (entries.hasMoreElements()) {
          JarEntry e = entries.nextElement();
          if (!fixed.equals(e.getTimeLocal())) {
            throw new MojoFailureException(outputJar.getName() + ": entry " + e.getName()
                + " has time " + e.getTimeLocal() + ", not project.build.outputTimestamp ("
                + fixed + " UTC)");
          }
        }
      }
      getLog().info(outputJar.getName() + " is reproducible: rebuilt byte-identical ("
          + built.length + " bytes), every entry at " + fixed + " UTC");
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot check " + outputJar, e);
    }
  }

  private static void copyShuffled(Path from, Path to)
      throws IOException, MojoFailureException {
    List<String> names = new ArrayList<>(recompiled(from, List.of()));
    Collections.reverse(names);
    FileTime other = FileTime.from(Instant.parse("2000-01-01T00:00:00Z"));
    for (String name : names) {
      Path target = to.resolve(name);
      Files.createDirectories(target.getParent());
      Files.copy(from.resolve(name), target);
      Files.setLastModifiedTime(target, other);
    }
  }

  private static String firstDifference(Path a, Path b) throws IOException {
    try (JarFile x = new JarFile(a.toFile()); JarFile y = new JarFile(b.toFile())) {
      Enumeration<JarEntry> ex = x.entries();
      Enumeration<JarEntry> ey = y.entries();
      int i = 0;
      while (ex.hasMoreElements() && ey.hasMoreElements()) {
        JarEntry p = ex.nextElement();
        JarEntry q = ey.nextElement();
        if (!p.getName().equals(q.getName())) {
          return "entry #" + i + " is " + p.getName() + " in one and " + q.getName() + " in the other";
        }
        if (!p.getTimeLocal().equals(q.getTimeLocal())) {
          return "entry " + p.getName() + " has time " + p.getTimeLocal() + " vs " + q.getTimeLocal();
        }
        try (var in1 = x.getInputStream(p); var in2 = y.getInputStream(q)) {
          if (!Arrays.equals(in1.readAllBytes(), in2.readAllBytes())) {
            return "entry " + p.getName() + " has other content";
          }
        }
        i++;
      }
      return ex.hasMoreElements() || ey.hasMoreElements() ? "the entry counts differ"
          : "in their zip headers";
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (var walk = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) walk.sorted(Collections.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
