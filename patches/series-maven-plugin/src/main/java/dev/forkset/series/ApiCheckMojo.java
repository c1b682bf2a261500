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

/**
 * The API gate ({@link ApiGate}): fails the build naming every member of a replaced class that
 * the custom jar changes or removes, or whose compile-time constant value it changes, against the
 * upstream jar. Runs after {@code overlay}.
 */
@Mojo(name = "api-check", defaultPhase = LifecyclePhase.PACKAGE, threadSafe = true)
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
    List<String> violations = new ArrayList<>();
    for (String v : ApiGate.check(upstream, outputJar, units)) {
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
          + " ones, and keep constant values.");
    }
    getLog().info("API gate: the " + units.size() + " replaced units of " + outputJar.getName()
        + " only add to upstream's API");
  }
}
