package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
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
 * <pre>./mvnw -pl patches/hbase/2.6.4 series:export -Dseries.repo=/tmp/hbase-2.6.4</pre>
 */
@Mojo(name = "export", threadSafe = true)
public class ExportSeriesMojo extends AbstractLineMojo {
  /** The repository to create; must not exist or be empty. */
  @Parameter(property = "series.repo", required = true)
  private File repo;

  /** Author of old-form patches that git does not know yet (see series:convert). */
  @Parameter(property = "series.author")
  private String author;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    Series series = readSeries(true);
    File sources = resolveUpstream("sources", "sources jar");
    Path scratch = null;
    try (ZipFile jar = new ZipFile(sources)) {
      scratch = Files.createTempDirectory("forkset-series");
      SeriesRepo repos = new SeriesRepo(jar, coordinates(), mainRoot, testRoot,
          new LinkedHashSet<>(modules), scratch);
      int n = repos.export(series, repo.toPath().toAbsolutePath(),
          SeriesRepo.fromHistory(Files.createDirectories(scratch.resolve("home")), author));
      getLog().info("Exported " + line() + " and its " + n + " patches to " + repo + ":");
      getLog().info("  tag " + SeriesRepo.BASE_TAG + " = the upstream sources, branch "
          + SeriesRepo.BRANCH + " = one commit per patch.");
      getLog().info("  Edit there (git commit --amend, git rebase -i " + SeriesRepo.BASE_TAG
          + ", new commits with the DEP-3 fields as the last paragraph), then:");
      getLog().info("  ./mvnw -pl " + modulePath() + " series:refresh -Dseries.repo=" + repo);
    } catch (PatchFailure e) {
      throw new MojoFailureException(e.getMessage());
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot export to " + repo, e);
    } finally {
      deleteQuietly(scratch);
    }
  }
}
