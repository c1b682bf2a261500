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
 * the custom jar changes or removes, every method it adds as abstract (or makes abstract) to an
 * interface or abstract class, with the implementors in the jar that lack it, and every
 * compile-time constant whose value it changes, against the upstream jar. Runs after
 * {@code overlay}.
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
}
