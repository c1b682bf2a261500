package dev.forkset.series;

import java.io.File;
import java.util.List;
import org.apache.maven.plugin.MojoFailureException;
import org.eclipse.aether.RepositorySystem;
import org.eclipse.aether.RepositorySystemSession;
import org.eclipse.aether.artifact.DefaultArtifact;
import org.eclipse.aether.repository.RemoteRepository;
import org.eclipse.aether.resolution.ArtifactRequest;
import org.eclipse.aether.resolution.ArtifactResolutionException;

/** Resolves the upstream jar and sources jar of a line from the build's repositories. */
final class UpstreamArtifacts {
  private UpstreamArtifacts() {}

  static File resolve(RepositorySystem system, RepositorySystemSession session,
      List<RemoteRepository> repos, String groupId, String artifactId, String classifier,
      String version, String what) throws MojoFailureException {
    DefaultArtifact artifact = new DefaultArtifact(groupId, artifactId, classifier, "jar", version);
    try {
      return system.resolveArtifact(session, new ArtifactRequest(artifact, repos, null))
          .getArtifact().getFile();
    } catch (ArtifactResolutionException e) {
      throw new MojoFailureException("Cannot get the upstream " + what + " " + artifact + " ("
          + e.getMessage() + ").\n  The pipeline builds from the upstream release on Maven"
          + " Central. Check that " + groupId + ":" + artifactId + ":" + version + " was released"
          + (classifier.isEmpty() ? "" : " with a '" + classifier + "' jar")
          + " and that Maven Central is reachable (or mirrored in your settings.xml). For an"
          + " unreleased build, install it locally first with mvn install:install-file.", e);
    }
  }
}
