package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/**
 * Stops the build at once when the line's series changed without a new revision, or when the
 * line's version is not {@code <upstream>-fork.<newest revision>} ({@link Revisions}).
 */
@Mojo(name = "revision", defaultPhase = LifecyclePhase.VALIDATE, threadSafe = true)
public class RevisionMojo extends AbstractSeriesMojo {
  /** The line directory holding {@code series}, its patches and {@code revisions}. */
  @Parameter(defaultValue = "${project.basedir}", required = true)
  private File seriesDirectory;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    try {
      Revisions revisions = Revisions.read(seriesDirectory.toPath().resolve(Revisions.FILE));
      String digest = Revisions.digest(seriesDirectory.toPath());
      String pom = project.getFile().getPath();
      String root = System.getProperty("maven.multiModuleProjectDirectory");
      if (root != null && pom.startsWith(root + File.separator)) {
        pom = pom.substring(root.length() + 1);
      }
      revisions.check(digest, project.getVersion(), upstreamVersion, pom);
      getLog().info(project.getVersion() + ": revision " + revisions.last() + " of "
          + seriesDirectory + ", series sha256 " + digest);
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read the series in " + seriesDirectory, e);
    }
  }
}
