package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.Component;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.project.MavenProjectHelper;

/**
 * Builds the custom server jar and what an operator receives with it. The jar is a copy of the
 * upstream jar in which every class of a patched compilation unit (with its nested and anonymous
 * classes and multi-release copies) is replaced by the recompiled one ({@link OverlayJar}), after
 * checking that each keeps the upstream class's bytecode level ({@link BytecodeLevel}). The
 * manifest names the upstream artifact, the applied patches and the series digest, and, with
 * the upstream artifact's pom.properties, says what the jar is and who built it
 * ({@link JarIdentity}).
 *
 * <p>The jar becomes the module's artifact; beside it go {@code <jar>.cdx.json}, the CycloneDX
 * SBOM ({@link Sbom}, also attached with classifier {@code cyclonedx}), and
 * {@code <jar>.replaced-classes.txt} (the upstream entries the series replaced, then the entries
 * it added). All three, plus {@code <jar>.sha256}, are copied to the
 * line's distribution folder, from which older versions of the same jar are removed.
 */
@Mojo(name = "overlay", defaultPhase = LifecyclePhase.PACKAGE, threadSafe = true)
public class OverlayMojo extends AbstractSeriesMojo {
  /** Manifest attribute listing the applied patches in series order. */
  public static final String PATCHES_ATTRIBUTE = "Forkset-Patches";
  /** Manifest attribute naming the upstream artifact the jar was built from. */
  public static final String UPSTREAM_ATTRIBUTE = "Forkset-Upstream";
  /** Manifest attribute holding the series digest the jar's revision records. */
  public static final String SERIES_ATTRIBUTE = "Forkset-Series-SHA256";

  @Parameter(defaultValue = "${project.build.outputDirectory}", required = true)
  protected File classesDirectory;

  @Parameter(defaultValue = "${project.build.directory}/${project.artifactId}-${project.version}.jar",
      required = true)
  protected File outputJar;

  /** Folder the jar and its companions are also copied to for operators; empty to skip. */
  @Parameter
  protected File distDirectory;

  /** Folder whose LICENSE and NOTICE are copied beside the jar in {@link #distDirectory}. */
  @Parameter(defaultValue = "${maven.multiModuleProjectDirectory}")
  protected File legalDirectory;

  /** The line directory holding {@code series}, its patches and {@code revisions}. */
  @Parameter(defaultValue = "${project.basedir}", required = true)
  protected File seriesDirectory;

  /** Entry times of the jar (ISO-8601 or epoch seconds), as for maven-jar-plugin. */
  @Parameter(defaultValue = "${project.build.outputTimestamp}")
  protected String outputTimestamp;

  /** The property that sets the patched sources' javac --release, named in errors. */
  @Parameter(defaultValue = "upstream.release")
  protected String releaseProperty;

  /** SPDX id of the upstream licence, which the custom jar keeps. */
  @Parameter(defaultValue = "Apache-2.0")
  protected String license;

  @Parameter(defaultValue = "${plugin.version}", readonly = true)
  protected String pluginVersion;

  /**
   * The project that builds the jar, as its manifest names the vendor and builder (never a user
   * name: the bytes must not depend on who builds).
   */
  @Parameter(defaultValue = "forkset")
  protected String vendor;

  /** javac --release of the patched classes, recorded in the manifest. */
  @Parameter(defaultValue = "${upstream.release}")
  protected String release;

  /**
   * Set (in the line's pom) for a line whose jar is not fit to deploy: why, and until when. The
   * manifest carries it as {@code Forkset-Experimental} and the distribution folder is
   * {@code <distDirectory>-experimental}. Empty for a released line.
   */
  @Parameter
  protected String experimental;

  @Component
  private MavenProjectHelper projectHelper;

  /** What the series state in target/series says. */
  static final class State {
    List<String> units;
    List<String> applied;
  }

  protected State readState() throws IOException {
    State s = new State();
    s.units = Files.readAllLines(stateDirectory.toPath().resolve("units.txt"), StandardCharsets.UTF_8);
    s.applied = Files.readAllLines(stateDirectory.toPath().resolve("applied.txt"), StandardCharsets.UTF_8);
    return s;
  }

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    File upstreamJar = resolveUpstream("", "jar");
    Instant timestamp = timestamp();
    try {
      State state = readState();
      Path classes = classesDirectory.toPath();
      SortedSet<String> ours = recompiled(classes, state.units);
      String digest = Revisions.digest(seriesDirectory.toPath());
      OverlayJar.Result result;
      try (JarFile upstream = new JarFile(upstreamJar)) {
        refuseVersionedCopies(upstream, upstreamJar, state.units);
        BytecodeLevel.check(upstream, classes, ours, releaseProperty, relative(project.getFile()));
        result = OverlayJar.write(upstream, classes, ours, state.units,
            manifest(upstream, state.applied, digest), rewritten(upstreamJar.toPath()), timestamp,
            outputJar.toPath());
      }
      if (identity().isExperimental()) {
        getLog().warn(outputJar.getName() + " is EXPERIMENTAL (" + JarIdentity.EXPERIMENTAL_ATTRIBUTE
            + " in its manifest): " + experimental.strip());
      }
      project.getArtifact().setFile(outputJar);
      getLog().info("Custom jar " + outputJar.getName() + ": " + result.added.size()
          + " recompiled classes replace " + result.replaced.size() + " upstream entries of "
          + upstreamJar.getName());

      Path base = outputJar.toPath();
      Path replacedList = companion(base, ".replaced-classes.txt");
      Files.write(replacedList, result.fromSeries(), StandardCharsets.UTF_8);
      Path sbom = companion(base, ".cdx.json");
      Files.write(sbom, Sbom.json(sbomInput(upstreamJar.toPath(), state, digest, result,
          timestamp)).getBytes(StandardCharsets.UTF_8));
      projectHelper.attachArtifact(project, "json", "cyclonedx", sbom.toFile());
      if (distDirectory != null) {
        copyToDist(base, replacedList, sbom);
      }
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot build " + outputJar, e);
    }
  }

  /** Fails naming each patched unit's multi-release copies ({@link OverlayJar#versionedCopies}). */
  static void refuseVersionedCopies(JarFile upstream, File upstreamJar, List<String> units)
      throws IOException, MojoFailureException {
    List<String> copies = OverlayJar.versionedCopies(upstream, units);
    if (copies.isEmpty()) {
      return;
    }
    Manifest mf = upstream.getManifest();
    boolean multiRelease = mf != null
        && "true".equalsIgnoreCase(mf.getMainAttributes().getValue("Multi-Release"));
    throw new MojoFailureException(upstreamJar.getName() + " has multi-release copies of classes"
        + " the series patches:\n  " + String.join("\n  ", copies) + "\n  "
        + (multiRelease ? "The jar is Multi-Release: on those JDK versions and later the JVM loads"
            + " these copies, not the patched class."
            : "Its manifest does not declare Multi-Release: true, so the JVM ignores them today.")
        + " The pipeline compiles only the base source (src/main/java), so it can neither keep"
        + " these copies (unpatched code) nor drop them (the patched base class would run on every"
        + " JDK without their JDK-specific code). Keep the series out of these classes, or"
        + " extend the pipeline to apply the patch to the versioned sources (src/main/javaN) and"
        + " compile them at release N too (docs/building.md, the pipeline, step 4).");
  }

  protected Instant timestamp() throws MojoFailureException {
    try {
      return OverlayJar.outputTimestamp(outputTimestamp);
    } catch (IllegalArgumentException e) {
      throw new MojoFailureException(e.getMessage());
    }
  }

  /** The compiled files under {@code classes}, after checking each patched unit produced one. */
  protected static SortedSet<String> recompiled(Path classes, List<String> units)
      throws IOException, MojoFailureException {
    for (String unit : units) {
      if (!Files.isRegularFile(classes.resolve(unit + ".class"))) {
        throw new MojoFailureException("Patched source " + unit + ".java produced no class in "
            + classes + ". Was it compiled? Run the build through the package phase.");
      }
    }
    if (!Files.isDirectory(classes)) {
      return new TreeSet<>();
    }
    try (Stream<Path> walk = Files.walk(classes)) {
      return walk.filter(Files::isRegularFile)
          .map(p -> classes.relativize(p).toString().replace(File.separatorChar, '/'))
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  /** True for Unit.class, Unit$Nested.class and their multi-release copies. */
  static boolean ofReplacedUnit(String entry, List<String> units) {
    return OverlayJar.ofReplacedUnit(entry, units);
  }

  private static Path companion(Path jar, String suffix) {
    String name = jar.getFileName().toString();
    return jar.resolveSibling(name.substring(0, name.length() - ".jar".length()) + suffix);
  }

  /**
   * The line's distribution folder: {@code distDirectory}, or {@code distDirectory-experimental}
   * for an experimental line.
   */
  protected Path distFolder() {
    Path dist = distDirectory.toPath();
    return identity().isExperimental()
        ? dist.resolveSibling(dist.getFileName() + "-experimental") : dist;
  }

  private void copyToDist(Path jar, Path... companions)
      throws IOException, MojoExecutionException {
    Path dist = distFolder();
    Files.createDirectories(dist);
    String stale = upstreamArtifactId + "-" + upstreamVersion + "-fork";
    // A line that became (or stopped being) experimental leaves the other folder behind.
    Path other = identity().isExperimental() ? distDirectory.toPath()
        : dist.resolveSibling(dist.getFileName() + "-experimental");
    if (Files.isDirectory(other)) {
      try (Stream<Path> files = Files.list(other)) {
        for (Path f : (Iterable<Path>) files::iterator) {
          Files.delete(f);
        }
      }
      Files.delete(other);
      getLog().info("Removed " + other + " (this line's folder is now " + dist.getFileName() + ")");
    }
    String current = jar.getFileName().toString();
    current = current.substring(0, current.length() - ".jar".length());
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dist)) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        if (name.startsWith(stale) && !name.startsWith(current + ".")) {
          Files.delete(f);
          getLog().info("Removed " + f + " (an older version of this jar)");
        }
      }
    }
    Path copied = dist.resolve(jar.getFileName());
    Files.copy(jar, copied, StandardCopyOption.REPLACE_EXISTING);
    Checksums.write(copied);
    for (Path c : companions) {
      Files.copy(c, dist.resolve(c.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
    for (String legal : new String[] {"LICENSE", "NOTICE"}) {
      Path from = legalDirectory == null ? null : legalDirectory.toPath().resolve(legal);
      if (from == null || !Files.isRegularFile(from)) {
        throw new MojoExecutionException("No " + legal + " in legalDirectory=" + legalDirectory
            + ": every dist folder carries the project's LICENSE and NOTICE. Build from the"
            + " repository root or set legalDirectory.");
      }
      Files.copy(from, dist.resolve(legal), StandardCopyOption.REPLACE_EXISTING);
    }
    getLog().info("Copied to " + copied + " with its .sha256, SBOM, replaced-class list,"
        + " LICENSE and NOTICE");
  }

  protected Manifest manifest(JarFile upstream, List<String> applied, String digest)
      throws IOException {
    Manifest manifest = upstream.getManifest() == null ? new Manifest()
        : new Manifest(upstream.getManifest());
    Attributes main = manifest.getMainAttributes();
    main.putIfAbsent(Attributes.Name.MANIFEST_VERSION, "1.0");
    main.putValue(UPSTREAM_ATTRIBUTE, upstreamGroupId + ":" + upstreamArtifactId + ":" + upstreamVersion);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < applied.size(); i++) {
      String[] f = applied.get(i).split("\t", 4);
      names.add(f[0]);
      main.putValue(String.format("Forkset-Patch-%02d", i + 1),
          f[0] + "; upstream=" + f[1] + "; module=" + f[2] + "; " + f[3]);
    }
    main.putValue(PATCHES_ATTRIBUTE, String.join(" ", names));
    main.putValue(SERIES_ATTRIBUTE, digest);
    identity().apply(main);
    // Entries for per-file signatures would no longer match; keep only main attributes.
    manifest.getEntries().clear();
    return manifest;
  }

  /** What the jar says it is: the custom artifact, this build, and the upstream it comes from. */
  protected JarIdentity identity() {
    JarIdentity id = new JarIdentity();
    id.groupId = project.getGroupId();
    id.artifactId = project.getArtifactId();
    id.version = project.getVersion();
    id.upstreamGroupId = upstreamGroupId;
    id.upstreamArtifactId = upstreamArtifactId;
    id.upstreamVersion = upstreamVersion;
    id.vendor = vendor;
    id.createdBy = "dev.forkset:series-maven-plugin:" + pluginVersion + " (series:overlay)";
    // The feature release of the JDK whose javac compiled the patched classes (the one running
    // Maven: the compiler plugin does not fork), never its patch release: two 17.0.x give the
    // same bytes.
    id.jdkSpec = System.getProperty("java.specification.version");
    id.release = release;
    id.experimental = experimental;
    return id;
  }

  /**
   * Upstream entries the custom jar replaces besides classes: the artifact's pom.properties and
   * pom.xml (when upstream has one), with the custom version.
   */
  protected SortedMap<String, byte[]> rewritten(Path upstreamJar) throws IOException {
    JarIdentity id = identity();
    SortedMap<String, byte[]> out = new TreeMap<>();
    out.put(id.pomPropertiesEntry(), id.pomProperties());
    try (java.util.zip.ZipFile jar = new java.util.zip.ZipFile(upstreamJar.toFile())) {
      java.util.zip.ZipEntry pom = jar.getEntry(id.pomXmlEntry());
      if (pom != null) {
        try (java.io.InputStream in = jar.getInputStream(pom)) {
          out.put(id.pomXmlEntry(), id.pomXml(in.readAllBytes()));
        }
      }
    }
    return out;
  }

  private Sbom.Input sbomInput(Path upstreamJar, State state, String digest,
      OverlayJar.Result result, Instant timestamp) throws IOException, MojoFailureException {
    Sbom.Input in = new Sbom.Input();
    in.customGav = project.getGroupId() + ":" + project.getArtifactId() + ":" + project.getVersion();
    in.customJar = outputJar.toPath();
    in.upstreamGav = upstreamGroupId + ":" + upstreamArtifactId + ":" + upstreamVersion;
    in.upstreamJar = upstreamJar;
    in.license = license;
    in.seriesSha256 = digest;
    in.revision = Revisions.read(seriesDirectory.toPath().resolve(Revisions.FILE)).last();
    in.replacedClasses = result.replaced;
    in.timestamp = timestamp;
    in.toolVersion = pluginVersion;
    for (String line : state.applied) {
      String[] f = line.split("\t", 4);
      Path patch = seriesDirectory.toPath().resolve(f[0]);
      in.patches.add(new Sbom.PatchRef(f[0], f[1], f[2], f[3], relative(patch.toFile()),
          new String(Files.readAllBytes(patch), StandardCharsets.UTF_8)));
    }
    return in;
  }

  /** A path relative to the repository root, for messages and the SBOM. */
  protected String relative(File file) {
    String root = System.getProperty("maven.multiModuleProjectDirectory");
    Path p = file.toPath().toAbsolutePath().normalize();
    if (root != null) {
      Path r = new File(root).toPath().toAbsolutePath().normalize();
      if (p.startsWith(r)) {
        return r.relativize(p).toString().replace(File.separatorChar, '/');
      }
    }
    return p.toString();
  }
}
