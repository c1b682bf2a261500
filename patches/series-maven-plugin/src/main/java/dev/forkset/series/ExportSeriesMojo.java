package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.zip.ZipFile;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/**
 * Exports the line's series to a new git repository of the upstream sources: the sources jar's
 * Java files under the module path as one commit tagged {@code series-base}, then one commit per
 * patch (by {@code git am}, so with the patch's author, date and message) on branch
 * {@code series}. Edit there (amend, {@code git rebase -i series-base}, new commits), then
 * {@code series:refresh}.
 *
 * <p>With {@code -Dseries.onto=<version>} the series is then moved onto that upstream version:
 * its sources become a commit on top of the old base (tagged {@code upstream-<old version>}), which
 * becomes {@code series-base}, and the commits are rebased there with 3-way merges. A conflict is
 * left for the developer to resolve; then {@code series:refresh} on the new version's line.
 *
 * <pre>
 * ./mvnw -pl patches/hbase/2.6.4 series:export -Dseries.repo=/tmp/hbase-2.6.4
 * ./mvnw -pl patches/hbase/2.6.4 series:export -Dseries.repo=/tmp/hbase-2.6.7 -Dseries.onto=2.6.7
 * </pre>
 */
@Mojo(name = "export", threadSafe = true)
public class ExportSeriesMojo extends AbstractLineMojo {
  /** The repository to create; must not exist or be empty. */
  @Parameter(property = "series.repo", required = true)
  private File repo;

  /** Another upstream version to rebase the exported series onto. */
  @Parameter(property = "series.onto")
  private String onto;

  /** Author of old-form patches that git does not know yet (see series:convert). */
  @Parameter(property = "series.author")
  private String author;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    Series series = readSeries(true);
    File sources = resolveUpstream("sources", "sources jar");
    String target = onto == null || onto.isBlank() ? null : onto.strip();
    File ontoSources = target == null ? null : resolveUpstream("sources", target, "sources jar to move onto");
    // Resolved before anything is written: a version without one of the modules stops here.
    List<SeriesRepo.Sibling> ontoSiblings = target == null ? List.of() : ontoSiblings(target);
    Path scratch = null;
    try (ZipFile jar = new ZipFile(sources)) {
      scratch = Files.createTempDirectory("forkset-series");
      SeriesRepo repos = new SeriesRepo(jar, coordinates(), mainRoot, testRoot,
          new LinkedHashSet<>(modules), scratch).withSiblings(siblingSources());
      Path to = repo.toPath().toAbsolutePath();
      int n = repos.export(series, to,
          SeriesRepo.fromHistory(Files.createDirectories(scratch.resolve("home")), author));
      getLog().info("Exported " + line() + " and its " + n + " patches to " + repo + ":");
      getLog().info("  tag " + SeriesRepo.BASE_TAG + " = the upstream sources, branch "
          + SeriesRepo.BRANCH + " = one commit per patch.");
      String refresh = "./mvnw -pl " + modulePath() + " series:refresh -Dseries.repo=" + repo;
      if (target != null) {
        String conflict;
        try (ZipFile ontoJar = new ZipFile(ontoSources)) {
          List<SeriesRepo.Sibling> parts = new ArrayList<>();
          parts.add(new SeriesRepo.Sibling(ontoJar, mainRoot, upstreamGroupId + ":"
              + upstreamArtifactId + ":" + target));
          parts.addAll(ontoSiblings);
          conflict = repos.moveOnto(to, parts, upstreamVersion);
        }
        refresh = "./mvnw -pl <the line of " + target + "> series:refresh -Dseries.repo=" + repo
            + "   (copy this line's folder first if there is none: docs/building.md)";
        getLog().info("  Moved onto " + target + ": tag " + SeriesRepo.BASE_TAG + " = its sources,"
            + " upstream-" + upstreamVersion + " = the old base.");
        if (conflict != null) {
          getLog().warn("The series does not rebase cleanly onto " + target + "; git stopped at a"
              + " conflict in " + repo + ":\n" + conflict + "\n  Resolve it there (edit, git add,"
              + " git rebase --continue; git rebase --abort gives up), then:\n  " + refresh);
          return;
        }
      }
      getLog().info("  Edit there (git commit --amend, git rebase -i " + SeriesRepo.BASE_TAG
          + ", new commits with the DEP-3 fields as the last paragraph), then:");
      getLog().info("  " + refresh);
    } catch (PatchFailure e) {
      throw new MojoFailureException(e.getMessage());
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot export to " + repo, e);
    } finally {
      for (SeriesRepo.Sibling s : ontoSiblings) {
        try {
          s.jar.close();
        } catch (IOException e) {
          getLog().debug("Cannot close " + s.jar.getName(), e);
        }
      }
      deleteQuietly(scratch);
    }
  }

  /**
   * The sources jars of the other modules of series.modules at {@code target}: the base commit
   * of the exported series holds every module's sources, so the new base must too.
   */
  private List<SeriesRepo.Sibling> ontoSiblings(String target) throws MojoFailureException,
      MojoExecutionException {
    try {
      return siblingSources(target);
    } catch (MojoFailureException e) {
      throw new MojoFailureException("-Dseries.onto=" + target + ": the series changes the"
          + " modules " + String.join(", ", builtModules()) + " (series.modules of " + modulePath()
          + "), so moving it needs the " + target + " sources jar of each of them, pinned in "
          + upstreamPins + ":\n  " + e.getMessage() + "\n  If " + target + " no longer has one of"
          + " these modules, move the series by hand: export it, then git am -3 its patches onto"
          + " an upstream checkout of " + target + " (docs/building.md, \"When a new upstream"
          + " version breaks a patch\").");
    }
  }
}
