package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipFile;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/**
 * Applies the line's series strictly to the upstream sources jar. Patched main sources go to a
 * compile source root (only they are compiled), tests added by patches to a test source root, and
 * the list of applied patches and replaced compilation units to {@code target/series/}.
 */
@Mojo(name = "apply", defaultPhase = LifecyclePhase.GENERATE_SOURCES, threadSafe = true)
public class ApplySeriesMojo extends AbstractLineMojo {
  @Parameter(defaultValue = "${project.build.directory}/generated-sources/series", required = true)
  private File mainOutput;

  @Parameter(defaultValue = "${project.build.directory}/generated-test-sources/series", required = true)
  private File testOutput;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    String line = line();
    Series series = readSeries(false);
    try {
      for (String stray : series.unlisted()) {
        getLog().warn(stray + " is in " + seriesDirectory + " but not in its series file; it is"
            + " not applied.");
      }
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot list " + seriesDirectory, e);
    }
    File sourcesJar = resolveUpstream("sources", "sources jar");
    Series.Result result;
    try (ZipFile jar = new ZipFile(sourcesJar)) {
      result = series.apply(jar, mainRoot, testRoot);
    } catch (PatchFailure e) {
      throw new MojoFailureException("Patch series for " + line + " does not apply.\n  "
          + e.getMessage());
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read " + sourcesJar, e);
    }
    for (String note : result.notes) {
      getLog().warn(note);
    }
    try {
      write(mainOutput.toPath(), result.mainSources);
      write(testOutput.toPath(), result.testSources);
      List<String> units = new ArrayList<>();
      for (String source : result.mainSources.keySet()) {
        units.add(source.substring(0, source.length() - ".java".length()));
      }
      Path state = stateDirectory.toPath();
      Files.createDirectories(state);
      Files.write(state.resolve("units.txt"), units, StandardCharsets.UTF_8);
      List<String> applied = new ArrayList<>();
      for (Series.Patch p : result.patches) {
        applied.add(p.name + "\t" + p.header.upstream() + "\t" + p.header.module() + "\t"
            + p.header.subject());
      }
      Files.write(state.resolve("applied.txt"), applied, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot write patched sources", e);
    }
    project.addCompileSourceRoot(mainOutput.getPath());
    project.addTestCompileSourceRoot(testOutput.getPath());
    getLog().info("Applied " + result.patches.size() + " patches to " + line + ": "
        + result.mainSources.size() + " main and " + result.testSources.size()
        + " test sources to compile");
    for (Series.Patch p : result.patches) {
      getLog().info("  " + p.name + " [" + p.header.upstream() + ", module " + p.header.module()
          + "] " + p.header.subject());
    }
  }

  private static void write(Path root, Map<String, String> files) throws IOException {
    if (Files.isDirectory(root)) {
      try (var walk = Files.walk(root)) {
        walk.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
      }
    }
    Files.createDirectories(root);
    for (Map.Entry<String, String> e : files.entrySet()) {
      Path out = root.resolve(e.getKey());
      Files.createDirectories(out.getParent());
      Files.write(out, e.getValue().getBytes(StandardCharsets.UTF_8));
    }
  }
}
