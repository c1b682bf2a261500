package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipFile;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/**
 * Reports, per patch of the line: whether it applies, its Upstream and Forwarded state, and with
 * {@code -Dseries.against=<version>} whether that upstream version already contains it (undoing
 * it there works) and whether the series applies to it. Then, for each patch whose
 * {@code Applied-Upstream:} names the release that has its change, every hunk in which the files
 * it changes differ from that release, with the reason {@code upstream-differences} records for
 * it ({@link AppliedUpstream}). Writes the table to the log and to
 * {@code target/series/status.txt}; never fails on what it reports.
 *
 * <p>With {@code check} (the build's execution, at verify) it only compares the patches with
 * their releases, and fails on a hunk no record accepts or a record no hunk matches.
 *
 * <pre>./mvnw -pl patches/hbase/2.6.4 series:status -Dseries.against=2.6.5</pre>
 */
@Mojo(name = "status", threadSafe = true)
public class StatusSeriesMojo extends AbstractLineMojo {
  /** Another upstream version of the same artifact to compare with. */
  @Parameter(property = "series.against")
  private String against;

  /** Fail on differences from Applied-Upstream releases that upstream-differences does not record. */
  @Parameter(defaultValue = "false")
  private boolean check;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    Series series = readSeries(!check);
    File sources = resolveUpstream("sources", "sources jar");
    List<String> applied = appliedUpstream(series, sources);
    if (check) {
      return;
    }
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
      for (String l : applied) {
        getLog().info(l);
      }
      List<String> all = new ArrayList<>(table);
      all.addAll(applied);
      Files.createDirectories(stateDirectory.toPath());
      Files.write(stateDirectory.toPath().resolve("status.txt"), all, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read the sources jars", e);
    }
  }

  /**
   * Compares each patch that names an Applied-Upstream release with that release's sources jar:
   * with {@link #check}, fails on what the record does not accept; else returns the lines to report.
   */
  private List<String> appliedUpstream(Series series, File sources)
      throws MojoExecutionException, MojoFailureException {
    List<String> out = new ArrayList<>();
    if (AppliedUpstream.releases(series).isEmpty()) {
      if (check) {
        getLog().info("No patch of " + line() + " names an Applied-Upstream release.");
      }
      return out;
    }
    Map<String, ZipFile> releases = new LinkedHashMap<>();
    try (ZipFile jar = new ZipFile(sources)) {
      for (String release : AppliedUpstream.releases(series)) {
        releases.put(release, new ZipFile(resolveUpstream("sources", release,
            "sources jar of the release a patch names in Applied-Upstream")));
      }
      List<AppliedUpstream.Hunk> hunks =
          AppliedUpstream.hunks(series, jar, releases, mainRoot, testRoot);
      Path record = seriesDirectory.toPath().resolve(AppliedUpstream.FILE);
      List<String> problems = AppliedUpstream.check(hunks, record);
      if (check && !problems.isEmpty()) {
        throw new MojoFailureException("The series of " + line() + " differs from the upstream"
            + " release its patches name in Applied-Upstream, where " + record + " records no"
            + " reason (docs/building.md, \"Backports and their release\"):\n  "
            + String.join("\n  ", problems));
      }
      out.add("Differences from the Applied-Upstream releases (" + hunks.size() + " hunks; '-'"
          + " the series, '+' the release):");
      out.addAll(AppliedUpstream.report(hunks));
      out.addAll(problems);
      if (check) {
        getLog().info("Patches of " + line() + " against their Applied-Upstream releases "
            + releases.keySet() + ": " + hunks.size() + " differing hunks, each recorded in "
            + record.getFileName() + " with its reason.");
      }
      return out;
    } catch (PatchFailure e) {
      if (check) {
        throw new MojoFailureException(e.getMessage());
      }
      // The table above says which patch does not apply; the report does not fail on it.
      out.add("Not compared with the Applied-Upstream releases: " + e.getMessage());
      return out;
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot compare the series with its Applied-Upstream"
          + " releases", e);
    } finally {
      for (ZipFile z : releases.values()) {
        try {
          z.close();
        } catch (IOException e) {
          getLog().debug(e);
        }
      }
    }
  }
}
