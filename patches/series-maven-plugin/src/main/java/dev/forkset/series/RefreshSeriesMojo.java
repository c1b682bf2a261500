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
 * Writes the commits after the base of a repository made by {@code series:export} back into the
 * line's patch files ({@code git format-patch}, in normal form): a commit keeps the name of the
 * patch with its subject, new commits become new patches, patches without a commit are removed,
 * and the series file takes the commits' order.
 *
 * <pre>./mvnw -pl patches/hbase/2.6.4 series:refresh -Dseries.repo=/tmp/hbase-2.6.4</pre>
 */
@Mojo(name = "refresh", threadSafe = true)
public class RefreshSeriesMojo extends AbstractLineMojo {
  /** The repository to read. */
  @Parameter(property = "series.repo", required = true)
  private File repo;

  /** The commit the series starts after: the tag export made, or an upstream tag. */
  @Parameter(property = "series.base", defaultValue = SeriesRepo.BASE_TAG)
  private String base;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    requireOwnSeries("refresh");
    File sources = resolveUpstream("sources", "sources jar");
    Path scratch = null;
    try (ZipFile jar = new ZipFile(sources)) {
      scratch = Files.createTempDirectory("forkset-series");
      SeriesRepo repos = new SeriesRepo(jar, coordinates(), mainRoot, testRoot,
          new LinkedHashSet<>(modules), scratch).withSiblings(siblingSources());
      report(repos.refresh(seriesDirectory.toPath(), repo.toPath().toAbsolutePath(), base),
          "Refreshed " + line() + " from " + repo);
    } catch (PatchFailure e) {
      throw new MojoFailureException(e.getMessage());
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot refresh from " + repo, e);
    } finally {
      deleteQuietly(scratch);
    }
  }
}
