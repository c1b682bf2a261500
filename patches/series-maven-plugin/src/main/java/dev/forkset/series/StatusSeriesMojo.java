package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.zip.ZipFile;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/**
 * Reports, per patch of the line: whether it applies, its Upstream and Forwarded state, and with
 * {@code -Dseries.against=<version>} whether that upstream version already contains it (undoing
 * it there works) and whether the series applies to it. Writes the table to the log and to
 * {@code target/series/status.txt}; never fails on what it reports.
 *
 * <pre>./mvnw -pl patches/hbase/2.6.4 series:status -Dseries.against=2.6.5</pre>
 */
@Mojo(name = "status", threadSafe = true)
public class StatusSeriesMojo extends AbstractLineMojo {
  /** Another upstream version of the same artifact to compare with. */
  @Parameter(property = "series.against")
  private String against;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    Series series = readSeries(true);
    File sources = resolveUpstream("sources", "sources jar");
    File other = against == null || against.isBlank() ? null
        : resolveUpstream("sources", against.strip(), "sources jar to compare with");
    try (ZipFile jar = new ZipFile(sources);
        ZipFile there = other == null ? null : new ZipFile(other)) {
      List<String> table = SeriesStatus.table(
          SeriesStatus.of(series, jar, there, mainRoot, testRoot), upstreamVersion,
          other == null ? null : against.strip());
      getLog().info("Series of " + line() + " (" + seriesDirectory + "):");
      for (String l : table) {
        getLog().info(l);
      }
      Files.createDirectories(stateDirectory.toPath());
      Files.write(stateDirectory.toPath().resolve("status.txt"), table, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read the sources jars", e);
    }
  }
}
