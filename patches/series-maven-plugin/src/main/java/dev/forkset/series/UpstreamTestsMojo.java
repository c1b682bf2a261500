package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.apache.maven.plugin.AbstractMojo;
import org.apache.maven.plugins.annotations.Component;
import org.eclipse.aether.RepositorySystem;
import org.eclipse.aether.RepositorySystemSession;
import org.eclipse.aether.repository.RemoteRepository;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.artifact.Artifact;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.plugins.annotations.ResolutionScope;
import org.apache.maven.project.MavenProject;

/**
 * Reads a line's upstream test list ({@link UpstreamTests}) and sets two project properties for
 * the Surefire executions that run them: {@code upstream.tests} (Surefire's {@code test}
 * parameter: this module's entries with their exclusions), {@code upstream.tests.skip} and
 * {@code upstream.tests.failIfNone} (false when {@code -Dtest} narrowed the list: a pattern of the
 * list may then name a class that does not exist, as a user's pattern may). No
 * pom may declare them: Maven replaces a pom's own properties in the plugin configuration before
 * any goal runs, so the executions would never see these values. A second list (tests run again
 * with other settings) sets the same properties under a prefix of its own ({@link #properties}).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Every entry and method pattern must name something in the module's test classes and
 *       tests jars, and in each of {@code alsoIn}; every exclusion in one of them at least (a
 *       method only the newer line has is left out of both): Surefire runs a list of patterns as
 *       long as one matches, so a misspelt or renamed entry would otherwise drop out unnoticed.
 *   <li>{@code -Dtest=...} narrows the list to the classes and methods it names, as it narrows a
 *       module's own tests, so one class or method runs alone the usual way ({@code ./mvnw
 *       verify -pl <module> -Dtest=TestHRegion#testFlush}); the two sets of patterns are
 *       intersected on the classes and methods the tests jar has. An execution left with nothing
 *       is skipped.
 *   <li>A flavour of a line (the same series built from another upstream artifact) names the
 *       line's custom jar in {@code sameClassesAs}: when every class its series replaced is
 *       byte-identical in both jars, the line's run already tested that bytecode and the
 *       flavour's run is skipped, saying so; any difference runs them.
 *   <li>Entries {@code from <release>} take their classes from that release's tests jar of
 *       {@code testsArtifact}, resolved like the other upstream inputs: they are copied, with the
 *       helpers of that jar they need whose bytes differ from the line's ({@link ReleasedTests}),
 *       into {@code target/upstream-tests-released}, and the properties
 *       {@code upstream.tests.released} and {@code upstream.tests.released.skip} set for the
 *       Surefire execution {@code upstream-tests-released}, whose test classes folder that is.
 * </ol>
 */
@Mojo(name = "upstream-tests", defaultPhase = LifecyclePhase.PROCESS_TEST_CLASSES,
    requiresDependencyResolution = ResolutionScope.TEST, threadSafe = true)
public class UpstreamTestsMojo extends AbstractMojo {
  /** The list: {@code patches/<project>/<line>/upstream-tests} (or the project's, if shared). */
  @Parameter(property = "upstream.tests.list", required = true)
  private File list;

  /** Whose entries: a module's artifactId, or {@code *} for every entry. */
  @Parameter(defaultValue = "${project.artifactId}", required = true)
  private String module;

  /**
   * The prefix of the properties this goal sets ({@code <prefix>}, {@code <prefix>.skip}, ...): a
   * module that runs a second list, in a Surefire execution of its own with other settings,
   * gives that list's execution of this goal another prefix.
   */
  @Parameter(defaultValue = "upstream.tests", required = true)
  private String properties;

  /** The user's Surefire {@code -Dtest}, which narrows the list. */
  @Parameter(property = "test")
  private String test;

  /** With {@link #replacedClasses}: the line's custom jar a flavour is compared with. */
  @Parameter
  private File sameClassesAs;

  /** The flavour's custom jar. */
  @Parameter
  private File jar;

  /**
   * The flavour's {@code <jar>.replaced-classes.txt} (written by series:overlay): the upstream
   * entries the series replaced, including those it dropped, and the entries it added (new units
   * and nested classes), so every class whose bytes come from the series is compared.
   */
  @Parameter
  private File replacedClasses;

  /**
   * Further class folders or jars that must hold every entry's classes too (a second Surefire
   * execution that runs the same list from another tests jar, such as an older line's).
   */
  @Parameter
  private List<File> alsoIn;

  /**
   * groupId:artifactId of the upstream tests jar that entries {@code from <release>} come from;
   * the module's test-jar dependency of the same artifact is the line's.
   */
  @Parameter
  private String testsArtifact;

  @Parameter(defaultValue = "${project}", readonly = true)
  private MavenProject project;

  @Parameter(defaultValue = "${repositorySystemSession}", readonly = true)
  private RepositorySystemSession repoSession;

  @Parameter(defaultValue = "${project.remoteProjectRepositories}", readonly = true)
  private List<RemoteRepository> remoteRepos;

  @Component
  private RepositorySystem repoSystem;

  @Parameter(property = "skipTests", defaultValue = "false")
  private boolean skipTests;

  /**
   * {@code -Dmaven.test.skip}: the executions' own {@code skip} replaces Surefire's, which that
   * property sets, so this goal skips them.
   */
  @Parameter(property = "maven.test.skip", defaultValue = "false")
  private boolean mavenTestSkip;

  /**
   * The folder of the lines, whose {@code upstream.sha256} files pin the upstream tests jars
   * this goal reads ({@link UpstreamArtifacts#verifyDependency}).
   */
  @Parameter(defaultValue = "${maven.multiModuleProjectDirectory}/patches", required = true)
  private File patchesDirectory;

  /**
   * Skips the upstream tests as {@code -DskipTests} would, for a module whose tests need what is
   * missing here (a JDK 8: {@code ${forkset.jdk8.skip}}).
   */
  @Parameter(defaultValue = "false")
  private boolean skip;

  @Override
  public void execute() throws MojoExecutionException, MojoFailureException {
    if (skipTests || mavenTestSkip || skip) {
      project.getProperties().setProperty(properties, "");
      project.getProperties().setProperty(properties + ".skip", "true");
      project.getProperties().setProperty(properties + ".failIfNone", "false");
      project.getProperties().setProperty(properties + ".released", "");
      project.getProperties().setProperty(properties + ".released.skip", "true");
      return;
    }
    UpstreamTests all;
    try {
      all = UpstreamTests.read(list.toPath());
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read the upstream test list " + list, e);
    } catch (IllegalArgumentException e) {
      throw new MojoFailureException(e.getMessage());
    }
    released(all);
    UpstreamTests tests = all.from(null);
    TestClasses classes = classes(testClassLocations());
    List<TestClasses> lines = new ArrayList<>();
    lines.add(classes);
    if (alsoIn != null) {
      for (File f : alsoIn) {
        lines.add(classes(Collections.singletonList(f)));
      }
    }
    List<String> problems = new ArrayList<>(tests.problems(module, classes, lines));
    for (TestClasses line : lines.subList(1, lines.size())) {
      for (String p : tests.problems(module, line, Collections.<TestClasses>emptyList())) {
        problems.add(p + " (in " + line.where() + ")");
      }
    }
    if (!problems.isEmpty()) {
      throw new MojoFailureException("The upstream test list " + list + " names what the tests"
          + " do not have (" + classes.where() + "); correct or remove these entries or"
          + " exclusions:\n  " + String.join("\n  ", problems));
    }
    List<UpstreamTests.Entry> selected = tests.select(module, test, classes);
    String why = null;
    if (selected.isEmpty()) {
      why = test == null ? "the list " + list + " has no entry for " + module
          : "-Dtest=" + test + " names none of them";
    } else if (sameClassesAs != null) {
      List<String> differing = differing();
      if (differing.isEmpty()) {
        why = "every class the series replaced is byte-identical in " + jar.getName() + " and "
            + sameClassesAs.getName() + ", whose build ran them";
      } else {
        getLog().info("Classes the series replaced that differ from " + sameClassesAs.getName()
            + ": " + differing);
      }
    }
    project.getProperties().setProperty(properties, UpstreamTests.surefireTest(selected));
    project.getProperties().setProperty(properties + ".skip", Boolean.toString(why != null));
    project.getProperties().setProperty(properties + ".failIfNone",
        Boolean.toString(test == null || test.trim().isEmpty()));
    String named = list.getParentFile().getName() + "/" + list.getName();
    if (why != null) {
      getLog().info("Upstream tests of " + named + " skipped: " + why);
    } else {
      getLog().info("Upstream tests of " + named + " for " + module + ": "
          + UpstreamTests.surefireTest(selected));
    }
  }

  /**
   * Copies the classes of this module's entries {@code from <release>} out of each release's
   * tests jar and sets the properties of the Surefire execution that runs them.
   */
  private void released(UpstreamTests all) throws MojoExecutionException, MojoFailureException {
    project.getProperties().setProperty(properties + ".released", "");
    project.getProperties().setProperty(properties + ".released.skip", "true");
    // target/upstream-tests-released for the default prefix; another list's run keeps apart
    java.nio.file.Path dir = new File(project.getBuild().getDirectory(),
        properties.replace('.', '-') + "-released").toPath();
    try {
      SeriesRepo.delete(dir);
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot make " + dir, e);
    }
    if (all.releases(module).isEmpty()) {
      return;
    }
    String[] ga = testsArtifact == null ? new String[0] : testsArtifact.split(":");
    if (ga.length != 2) {
      throw new MojoFailureException(list + " has entries 'from <release>' for " + module + ";"
          + " set <testsArtifact>groupId:artifactId</testsArtifact> (the upstream artifact whose"
          + " tests jar they come from) in this module's series-maven-plugin execution"
          + " upstream-tests.");
    }
    File lineJar = null;
    for (Artifact a : project.getArtifacts()) {
      if (a.getGroupId().equals(ga[0]) && a.getArtifactId().equals(ga[1])
          && ("tests".equals(a.getClassifier()) || "test-jar".equals(a.getType()))) {
        lineJar = a.getFile();
      }
    }
    if (lineJar == null) {
      throw new MojoFailureException(module + " has no test-jar dependency on " + testsArtifact
          + ", the line's tests jar that entries 'from <release>' in " + list + " run beside.");
    }
    List<String> problems = new ArrayList<>();
    for (String release : all.releases(module)) {
      UpstreamTests of = all.from(release);
      File jar = UpstreamArtifacts.resolve(repoSystem, repoSession, remoteRepos, ga[0], ga[1],
          "tests", release, "tests jar of " + release + ", which entries 'from " + release
          + "' in " + list + " name",
          list.getParentFile().toPath().resolve(UpstreamArtifacts.PINS_FILE));
      List<UpstreamTests.Entry> entries = new ArrayList<>();
      for (UpstreamTests.Entry e : of.entries()) {
        if (module.equals("*") || module.equals(e.module)) {
          entries.add(e);
        }
      }
      try (ZipFile released = new ZipFile(jar); ZipFile line = new ZipFile(lineJar)) {
        List<String> helpers = ReleasedTests.extract(entries, released, line, dir);
        getLog().info("Upstream tests from " + jar.getName() + " for " + module + ": "
            + entries + (helpers.isEmpty() ? "; every class of " + jar.getName() + " they use"
                + " that " + lineJar.getName() + " has too is byte-identical there"
                : "; helpers taken from it too, since they differ from " + lineJar.getName()
                    + ": " + helpers));
      } catch (IOException e) {
        throw new MojoExecutionException("Cannot copy the test classes of " + jar, e);
      }
      for (String p : of.problems(module, classes(Collections.singletonList(dir.toFile())))) {
        problems.add(p + " (in " + jar.getName() + ")");
      }
    }
    if (!problems.isEmpty()) {
      throw new MojoFailureException("The upstream test list " + list + " names what the"
          + " release tests jars do not have; correct or remove these entries or exclusions:\n  "
          + String.join("\n  ", problems));
    }
    UpstreamTests released = all.released();
    List<UpstreamTests.Entry> selected = released.select(module, test,
        classes(Collections.singletonList(dir.toFile())));
    project.getProperties().setProperty(properties + ".released",
        UpstreamTests.surefireTest(selected));
    project.getProperties().setProperty(properties + ".released.skip",
        Boolean.toString(selected.isEmpty()));
  }

  /**
   * Where Surefire finds the upstream tests: this module's test classes and its tests jars,
   * each upstream tests jar checked against its line's pins first.
   */
  private List<File> testClassLocations() throws MojoFailureException {
    List<File> out = new ArrayList<>();
    out.add(new File(project.getBuild().getTestOutputDirectory()));
    for (Artifact a : project.getArtifacts()) {
      if (("tests".equals(a.getClassifier()) || "test-jar".equals(a.getType()))
          && a.getFile() != null) {
        String classifier = a.getClassifier() == null ? "tests" : a.getClassifier();
        java.nio.file.Path pins = UpstreamArtifacts.verifyDependency(patchesDirectory.toPath(),
            a.getGroupId(), a.getArtifactId(), a.getVersion(), classifier, a.getFile());
        if (pins != null) {
          getLog().info(UpstreamArtifacts.coordinates(a.getGroupId(), a.getArtifactId(),
              a.getVersion(), classifier) + " has the SHA-256 pinned in " + pins);
        }
        out.add(a.getFile());
      }
    }
    return out;
  }

  private static TestClasses classes(List<File> locations) throws MojoExecutionException {
    try {
      return TestClasses.read(locations);
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot read the test classes of " + locations, e);
    }
  }

  /** The replaced classes whose bytes differ between {@link #jar} and {@link #sameClassesAs}. */
  private List<String> differing() throws MojoExecutionException {
    if (jar == null || replacedClasses == null) {
      throw new MojoExecutionException("sameClassesAs needs jar and replacedClasses too");
    }
    try {
      return differing(jar, sameClassesAs,
          Files.readAllLines(replacedClasses.toPath(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot compare " + jar + " with " + sameClassesAs, e);
    }
  }

  /** The entries of {@code names} whose bytes differ between two jars. */
  static List<String> differing(File jar, File other, List<String> names) throws IOException {
    List<String> out = new ArrayList<>();
    try (ZipFile mine = new ZipFile(jar); ZipFile theirs = new ZipFile(other)) {
      for (String line : names) {
        String name = line.trim();
        if (name.isEmpty()) {
          continue;
        }
        // An upstream entry the series dropped (an anonymous class a patch removed) is in
        // neither jar: the same in both.
        ZipEntry a = mine.getEntry(name);
        ZipEntry b = theirs.getEntry(name);
        if ((a == null) != (b == null) || a != null
            && !Arrays.equals(mine.getInputStream(a).readAllBytes(),
                theirs.getInputStream(b).readAllBytes())) {
          out.add(name);
        }
      }
    }
    return out;
  }
}
