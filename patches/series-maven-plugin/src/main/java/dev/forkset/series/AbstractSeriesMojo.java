package dev.forkset.series;

import java.io.File;
import java.util.List;
import org.apache.maven.plugin.AbstractMojo;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Component;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.project.MavenProject;
import org.eclipse.aether.RepositorySystem;
import org.eclipse.aether.RepositorySystemSession;
import org.eclipse.aether.repository.RemoteRepository;

/** What both goals of a line share: the upstream artifact and how to resolve it. */
abstract class AbstractSeriesMojo extends AbstractMojo {
  @Parameter(property = "upstream.groupId", required = true)
  protected String upstreamGroupId;

  @Parameter(property = "upstream.artifactId", required = true)
  protected String upstreamArtifactId;

  @Parameter(property = "upstream.version", required = true)
  protected String upstreamVersion;

  /** Where apply leaves the list of applied patches and replaced units for overlay. */
  @Parameter(defaultValue = "${project.build.directory}/series", required = true)
  protected File stateDirectory;

  @Parameter(defaultValue = "${project}", readonly = true)
  protected MavenProject project;

  /**
   * The line's pins: the SHA-256 of every upstream artifact the goals read
   * ({@link UpstreamArtifacts}). In the line's own folder, also for a flavour that builds
   * another line's series: its upstream artifact is another.
   */
  @Parameter(defaultValue = "${project.basedir}/" + UpstreamArtifacts.PINS_FILE, required = true)
  protected File upstreamPins;

  @Parameter(defaultValue = "${repositorySystemSession}", readonly = true)
  private RepositorySystemSession repoSession;

  @Parameter(defaultValue = "${project.remoteProjectRepositories}", readonly = true)
  private List<RemoteRepository> remoteRepos;

  @Component
  private RepositorySystem repoSystem;

  @Override
  public final void execute() throws MojoExecutionException, MojoFailureException {
    if ("pom".equals(project.getPackaging())) {
      getLog().debug("No series in a pom-packaged project; skipped");
      return;
    }
    run();
  }

  protected abstract void run() throws MojoExecutionException, MojoFailureException;

  /**
   * The upstream jar with {@code classifier} ("" for the main jar), from the build's
   * repositories, checked against {@link #upstreamPins}.
   */
  protected File resolveUpstream(String classifier, String what) throws MojoFailureException {
    return resolveUpstream(classifier, upstreamVersion, what);
  }

  /** As {@link #resolveUpstream(String, String)}, for another upstream {@code version}. */
  protected File resolveUpstream(String classifier, String version, String what)
      throws MojoFailureException {
    return resolvePinned(upstreamGroupId, upstreamArtifactId, classifier, version, what);
  }

  /** Any upstream artifact, from the build's repositories, checked against {@link #upstreamPins}. */
  protected File resolvePinned(String groupId, String artifactId, String classifier,
      String version, String what) throws MojoFailureException {
    return UpstreamArtifacts.resolve(repoSystem, repoSession, remoteRepos, groupId, artifactId,
        classifier, version, what, upstreamPins.toPath());
  }
}
