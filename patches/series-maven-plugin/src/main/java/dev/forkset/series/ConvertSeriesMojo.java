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
 * Converts the line's series in place to the normal form: every patch a {@code git format-patch}
 * mail with the DEP-3 fields in its message, full {@code index} lines naming the upstream blobs,
 * and a {@code From} line that is the commit {@code series:export} makes. An old DEP-3-first patch
 * takes the author and date of the commit that added it to this repository. Export and refresh in
 * one step; running it again changes nothing.
 *
 * <pre>./mvnw -B -ntp -pl patches/hbase/2.6.4 series:convert</pre>
 */
@Mojo(name = "convert", threadSafe = true)
public class ConvertSeriesMojo extends AbstractLineMojo {
  /** Author of old-form patches not yet committed to git ("Name &lt;email&gt;", dated now). */
  @Parameter(property = "series.author")
  private String author;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    requireOwnSeries("convert");
    File sources = resolveUpstream("sources", "sources jar");
    Path scratch = null;
    try (ZipFile jar = new ZipFile(sources)) {
      scratch = Files.createTempDirectory("forkset-series");
      SeriesRepo repos = new SeriesRepo(jar, coordinates(), mainRoot, testRoot,
          new LinkedHashSet<>(modules), scratch).withSiblings(siblingSources());
      report(repos.convert(seriesDirectory.toPath(),
          SeriesRepo.fromHistory(Files.createDirectories(scratch.resolve("home")), author)),
          "Converted " + line());
    } catch (PatchFailure e) {
      throw new MojoFailureException(e.getMessage());
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot convert " + seriesDirectory, e);
    } finally {
      deleteQuietly(scratch);
    }
  }
}
