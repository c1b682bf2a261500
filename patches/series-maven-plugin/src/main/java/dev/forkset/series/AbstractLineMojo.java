package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashSet;
import java.util.List;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Parameter;

/** What the goals that read a line's series share: where it is and what it may touch. */
abstract class AbstractLineMojo extends AbstractSeriesMojo {
  /** The line directory: holds {@code series} and the patches it names. */
  @Parameter(defaultValue = "${project.basedir}", required = true)
  protected File seriesDirectory;

  /** Upstream repository folder of the artifact's main Java sources, e.g. hbase-server/src/main/java/. */
  @Parameter(required = true)
  protected String mainRoot;

  /** Upstream repository folder of the artifact's test Java sources. */
  @Parameter(required = true)
  protected String testRoot;

  /** Accepted values of the {@code Module:} header besides {@code none}. */
  @Parameter(required = true)
  protected List<String> modules;

  /**
   * The upstream modules (repository folders) built from this line's series, comma-separated,
   * each by one line module; empty for the usual line that builds only its own
   * ({@link Series#forModule}). Every line module of a series lists the same modules. A module's
   * artifactId is its folder's name, with the line's groupId and version.
   */
  @Parameter(property = "series.modules", defaultValue = "")
  protected String seriesModules;

  /** The upstream module this line module builds: the folder above {@link #mainRoot}'s src/. */
  protected String ownModule() {
    int i = mainRoot.indexOf("/src/");
    return i < 0 ? mainRoot : mainRoot.substring(0, i);
  }

  /** The modules built from the series: {@link #seriesModules}, always with {@link #ownModule}. */
  protected java.util.Set<String> builtModules() throws MojoFailureException {
    java.util.Set<String> built = new java.util.TreeSet<>();
    if (seriesModules != null) {
      for (String m : seriesModules.split(",")) {
        if (!m.isBlank()) {
          built.add(m.strip());
        }
      }
    }
    if (!built.isEmpty() && !built.contains(ownModule())) {
      throw new MojoFailureException("series.modules (" + seriesModules + ") of " + modulePath()
          + " does not list " + ownModule() + ", the module it builds. List every module built"
          + " from the series, this one too.");
    }
    built.add(ownModule());
    return built;
  }

  /**
   * The sources jars of the other modules built from the series (for export, refresh and
   * convert, whose repository holds every module's sources), pinned in this line's
   * upstream.sha256, and the main roots they go under.
   */
  protected java.util.List<SeriesRepo.Sibling> siblingSources() throws MojoFailureException,
      MojoExecutionException {
    return siblingSources(upstreamVersion);
  }

  /** As {@link #siblingSources()}, of upstream {@code version} (series:export -Dseries.onto). */
  protected java.util.List<SeriesRepo.Sibling> siblingSources(String version)
      throws MojoFailureException, MojoExecutionException {
    java.util.List<SeriesRepo.Sibling> out = new java.util.ArrayList<>();
    String suffix = mainRoot.substring(ownModule().length());
    for (String m : builtModules()) {
      if (m.equals(ownModule())) {
        continue;
      }
      String artifactId = m.contains("/") ? m.substring(m.lastIndexOf('/') + 1) : m;
      File jar = resolvePinned(upstreamGroupId, artifactId, "sources", version,
          "sources jar of " + m);
      try {
        out.add(new SeriesRepo.Sibling(new java.util.zip.ZipFile(jar), m + suffix,
            upstreamGroupId + ":" + artifactId + ":" + version));
      } catch (IOException e) {
        throw new MojoExecutionException("Cannot read " + jar, e);
      }
    }
    return out;
  }

  /** The series; with {@code acceptOldForm} patches may still be in the old DEP-3-first form. */
  protected Series readSeries(boolean acceptOldForm) throws MojoFailureException,
      MojoExecutionException {
    try {
      Series series = Series.read(seriesDirectory.toPath(), new LinkedHashSet<>(modules), true)
          .forModule(ownModule(), builtModules());
      if (!acceptOldForm) {
        series.requireMailForm(convertCommand() + "\n  (docs/building.md, \"Converting a"
            + " series\"; the first command installs this plugin, which the second one runs).");
      }
      return series;
    } catch (PatchFailure e) {
      throw new MojoFailureException(e.getMessage());
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read the series in " + seriesDirectory, e);
    }
  }

  /**
   * Fails when this line builds the series of another line's folder (as a flavour of the same
   * upstream release does): the patch files are written by the line that holds them, so that their
   * From lines are the commits that line's export makes.
   */
  protected void requireOwnSeries(String goal) throws MojoFailureException {
    try {
      Path own = project.getBasedir().toPath().toRealPath();
      Path series = seriesDirectory.toPath().toRealPath();
      if (!own.equals(series)) {
        String root = System.getProperty("maven.multiModuleProjectDirectory");
        String where = root == null ? series.toString()
            : Paths.get(root).toRealPath().relativize(series).toString().replace(File.separatorChar, '/');
        throw new MojoFailureException(modulePath() + " builds the series in " + where + ", which"
            + " another line holds. Run series:" + goal + " on that line: ./mvnw -pl " + where
            + " series:" + goal);
      }
    } catch (IOException e) {
      throw new MojoFailureException("Cannot read " + seriesDirectory + ": " + e.getMessage());
    }
  }

  /** The commands that convert this line's series in place, from the reactor root. */
  protected String convertCommand() {
    return "\n    ./mvnw -B -ntp -q install -pl patches/series-maven-plugin -DskipTests"
        + "\n    ./mvnw -B -ntp -pl " + modulePath() + " series:convert";
  }

  /** This line's folder relative to the reactor root, as -pl takes it. */
  protected String modulePath() {
    String root = System.getProperty("maven.multiModuleProjectDirectory");
    Path base = project.getBasedir().toPath().toAbsolutePath().normalize();
    if (root != null) {
      Path r = Paths.get(root).toAbsolutePath().normalize();
      if (base.startsWith(r) && !base.equals(r)) {
        return r.relativize(base).toString().replace(File.separatorChar, '/');
      }
    }
    return base.toString();
  }

  /** A description of the line for messages, such as "hbase-server 2.6.4". */
  protected String line() {
    return upstreamArtifactId + " " + upstreamVersion;
  }

  /** groupId:artifactId:version of the upstream artifact. */
  protected String coordinates() {
    return upstreamGroupId + ":" + upstreamArtifactId + ":" + upstreamVersion;
  }

  /** Logs what refresh or convert did, patch by patch. */
  protected void report(SeriesRepo.Report report, String what) {
    getLog().info(what + ": " + (report.changed == 0 ? "no patch changed"
        : report.changed + " change(s)") + " in " + seriesDirectory + ":");
    for (String l : report.lines) {
      getLog().info("  " + l);
    }
  }

  /** Deletes a scratch folder, logging instead of failing. */
  protected void deleteQuietly(java.nio.file.Path dir) {
    if (dir == null) {
      return;
    }
    try {
      SeriesRepo.delete(dir);
    } catch (IOException e) {
      getLog().warn("Could not delete the scratch folder " + dir + ": " + e.getMessage());
    }
  }
}
