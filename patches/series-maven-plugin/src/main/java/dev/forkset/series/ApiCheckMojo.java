package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.plugins.annotations.ResolutionScope;

/**
 * The API gate ({@link ApiGate}): fails the build naming every member of a replaced class that
 * the custom jar changes or removes, every method it adds as abstract (or makes abstract) to an
 * interface or abstract class, with the implementors in the jar that lack it, and every
 * compile-time constant whose value it changes, against the upstream jar. For a series over
 * several modules ({@code series.modules}) it also names every implementor, in the upstream jar of
 * another module of the line, of a type that one module's custom jar gives a new abstract method,
 * when that module's custom jar has no body for it ({@link ApiGate#acrossJars}). Runs after
 * {@code overlay}.
 */
@Mojo(name = "api-check", defaultPhase = LifecyclePhase.PACKAGE, threadSafe = true,
    requiresDependencyResolution = ResolutionScope.COMPILE)
public class ApiCheckMojo extends AbstractSeriesMojo {
  @Parameter(defaultValue = "${project.build.directory}/${project.artifactId}-${project.version}.jar",
      required = true)
  private File outputJar;

  /**
   * Violations accepted on purpose, each exactly as the gate prints it; they are logged as
   * warnings. Like {@code Max-Offset}, a reviewed exception, never a way to silence the gate.
   */
  @Parameter
  private List<String> acceptedChanges = new ArrayList<>();

  /**
   * The upstream modules built from this line's series, comma-separated (as for the other goals);
   * each is built by a line module with this project's groupId and version and the module's
   * folder name as artifactId.
   */
  @Parameter(property = "series.modules", defaultValue = "")
  private String seriesModules;

  /** The upstream module this line module builds (its artifactId). */
  @Parameter(defaultValue = "${project.artifactId}", required = true)
  private String ownModule;

  @Parameter(defaultValue = "${session}", readonly = true)
  private org.apache.maven.execution.MavenSession session;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    File upstream = resolveUpstream("", "jar");
    List<String> units;
    try {
      units = java.nio.file.Files.readAllLines(stateDirectory.toPath().resolve("units.txt"),
          java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read the patched units of " + stateDirectory, e);
    }
    List<String> found = new ArrayList<>(ApiGate.check(upstream, outputJar, units));
    found.addAll(acrossJars(upstream));
    List<String> violations = new ArrayList<>();
    for (String v : found) {
      if (acceptedChanges.contains(v)) {
        getLog().warn("Accepted API change (acceptedChanges): " + v);
      } else {
        violations.add(v);
      }
    }
    if (!violations.isEmpty()) {
      throw new MojoFailureException(outputJar.getName() + " changes what the upstream classes"
          + " it replaces expose (compared with " + upstream.getName() + "):\n  "
          + String.join("\n  ", violations) + "\n  Upstream classes that were not recompiled,"
          + " and coprocessors or plugins built against the stock release, link against these"
          + " members and inline these constants. Add new members instead of changing existing"
          + " ones, and keep constant values."
          + (violations.stream().anyMatch(v -> v.contains(" abstract "))
              ? "\n  A method added as abstract (or made abstract) breaks every implementor"
                  + " compiled without it: the classes of the jar listed above, and any"
                  + " implementor outside the jar (a coprocessor, a plugin, a test double), throw"
                  + " AbstractMethodError when it is called. Give it a body (a default method on"
                  + " an interface, a concrete method on an abstract class) whose behaviour is"
                  + " right for such an implementor, or, after review, add the line as an"
                  + " <acceptedChange> to the line's pom.xml with the reason in a comment"
                  + " (docs/building.md, \"The API gate\")."
              : ""));
    }
    int accepted = acceptedChanges.size();
    getLog().info("API gate: the " + units.size() + " replaced units of " + outputJar.getName()
        + " only add to upstream's API" + (accepted == 0 ? ""
            : ", apart from the " + accepted + " accepted change(s) above"));
  }

  /**
   * {@link ApiGate#acrossJars} over the modules of {@link #seriesModules} whose custom jar this
   * build has: made earlier in the reactor, or a dependency of this line (as the compat jars are
   * of the 2.6.4 line). A module whose custom jar is made later checks the pair itself.
   */
  private List<String> acrossJars(File upstream) throws MojoExecutionException,
      MojoFailureException {
    List<ApiGate.ModuleJars> line = new ArrayList<>();
    line.add(new ApiGate.ModuleJars(ownModule, upstream, outputJar));
    List<String> waiting = new ArrayList<>();
    for (String m : seriesModules == null ? new String[0] : seriesModules.split(",")) {
      String artifactId = m.strip().contains("/") ? m.strip().substring(m.strip().lastIndexOf('/') + 1)
          : m.strip();
      if (artifactId.isEmpty() || artifactId.equals(ownModule)) {
        continue;
      }
      File custom = customJar(artifactId);
      if (custom == null) {
        waiting.add(artifactId);
        continue;
      }
      line.add(new ApiGate.ModuleJars(artifactId, resolvePinned(upstreamGroupId, artifactId, "",
          upstreamVersion, "upstream jar of " + artifactId + ", whose implementors the gate checks"),
          custom));
    }
    // The line built last checks a pair. A line of this reactor that is not built yet will check
    // it (info); one outside the reactor (-pl of one line) will not, nor, in a parallel build
    // (-T), can two lines that each run the gate before the other's jar exists: warn then.
    boolean parallel = session != null && session.isParallel();
    for (String w : waiting) {
      String message = "API gate: the pair " + ownModule + " + " + w + " is not checked here: the"
          + " custom jar of " + w + " is not built yet";
      if (inReactor(w) && !parallel) {
        getLog().info(message + "; its line, later in this build, checks it");
      } else {
        getLog().warn(message + (parallel
            ? "; in a parallel build (-T) its line may not see this one's jar either, so the"
                + " pair may go unchecked (a build without -T checks it)"
            : "; its line is not part of this build, so the pair goes unchecked (build both)"));
      }
    }
    if (line.size() == 1) {
      return List.of();
    }
    List<String> others = new ArrayList<>();
    for (ApiGate.ModuleJars m : line.subList(1, line.size())) {
      others.add(m.custom.getName());
    }
    getLog().info("API gate: abstract methods added across " + outputJar.getName() + " and "
        + String.join(", ", others) + " checked against the implementors in their upstream jars");
    try {
      return ApiGate.acrossJars(line, ownModule);
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read the jars of " + seriesModules, e);
    }
  }

  /** Whether the line that builds {@code artifactId} is a project of this reactor. */
  private boolean inReactor(String artifactId) {
    if (session == null) {
      return false;
    }
    for (org.apache.maven.project.MavenProject p : session.getProjects()) {
      if (p.getGroupId().equals(project.getGroupId()) && p.getArtifactId().equals(artifactId)
          && p.getVersion().equals(project.getVersion())) {
        return true;
      }
    }
    return false;
  }

  /** The custom jar of {@code artifactId} in this line, if the build has it; else null. */
  private File customJar(String artifactId) {
    if (session != null) {
      for (org.apache.maven.project.MavenProject p : session.getProjects()) {
        if (p.getGroupId().equals(project.getGroupId()) && p.getArtifactId().equals(artifactId)
            && p.getVersion().equals(project.getVersion()) && p.getArtifact() != null
            && p.getArtifact().getFile() != null && p.getArtifact().getFile().isFile()) {
          return p.getArtifact().getFile();
        }
      }
    }
    for (org.apache.maven.artifact.Artifact a : project.getArtifacts()) {
      if (a.getGroupId().equals(project.getGroupId()) && a.getArtifactId().equals(artifactId)
          && a.getVersion().equals(project.getVersion()) && !a.hasClassifier()
          && a.getFile() != null && a.getFile().isFile()) {
        return a.getFile();
      }
    }
    return null;
  }
}
