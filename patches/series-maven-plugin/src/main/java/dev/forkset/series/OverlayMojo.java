package dev.forkset.series;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/**
 * Builds the custom server jar: a copy of the upstream jar in which every class of a patched
 * compilation unit (including its nested and anonymous classes, and multi-release copies) is
 * replaced by the recompiled one. The manifest lists the applied patches. The jar becomes the
 * module's artifact and is copied to the distribution folder.
 */
@Mojo(name = "overlay", defaultPhase = LifecyclePhase.PACKAGE, threadSafe = true)
public class OverlayMojo extends AbstractSeriesMojo {
  /** Manifest attribute listing the applied patches in series order. */
  public static final String PATCHES_ATTRIBUTE = "Forkset-Patches";
  /** Manifest attribute naming the upstream artifact the jar was built from. */
  public static final String UPSTREAM_ATTRIBUTE = "Forkset-Upstream";

  @Parameter(defaultValue = "${project.build.outputDirectory}", required = true)
  private File classesDirectory;

  @Parameter(defaultValue = "${project.build.directory}/${project.artifactId}-${project.version}.jar",
      required = true)
  private File outputJar;

  /** Folder the jar is also copied to for operators; empty to skip. */
  @Parameter
  private File distDirectory;

  @Override
  protected void run() throws MojoExecutionException, MojoFailureException {
    File upstreamJar = resolveUpstream("", "jar");
    try {
      List<String> units = Files.readAllLines(stateDirectory.toPath().resolve("units.txt"));
      List<String> applied = Files.readAllLines(stateDirectory.toPath().resolve("applied.txt"));
      Path classes = classesDirectory.toPath();
      for (String unit : units) {
        if (!Files.isRegularFile(classes.resolve(unit + ".class"))) {
          throw new MojoFailureException("Patched source " + unit + ".java produced no class in "
              + classes + ". Was it compiled? Run the build through the package phase.");
        }
      }
      Set<String> ours = listClasses(classes);
      int replaced = write(upstreamJar, classes, ours, units, applied);
      project.getArtifact().setFile(outputJar);
      getLog().info("Custom jar " + outputJar.getName() + ": " + ours.size()
          + " recompiled classes replace " + replaced + " upstream entries of "
          + upstreamJar.getName());
      if (distDirectory != null) {
        Files.createDirectories(distDirectory.toPath());
        Path target = distDirectory.toPath().resolve(outputJar.getName());
        Files.copy(outputJar.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
        getLog().info("Copied to " + target);
      }
    } catch (IOException e) {
      throw new MojoExecutionException("Cannot build " + outputJar, e);
    }
  }

  private int write(File upstreamJar, Path classes, Set<String> ours, List<String> units,
      List<String> applied) throws IOException {
    int replaced = 0;
    Files.createDirectories(outputJar.toPath().getParent());
    try (JarFile upstream = new JarFile(upstreamJar);
        OutputStream file = Files.newOutputStream(outputJar.toPath());
        JarOutputStream out = new JarOutputStream(file, manifest(upstream, applied))) {
      Set<String> written = new HashSet<>();
      written.add(JarFile.MANIFEST_NAME);
      written.add("META-INF/");
      for (String entry : ours) {
        out.putNextEntry(new JarEntry(entry));
        Files.copy(classes.resolve(entry), out);
        out.closeEntry();
        written.add(entry);
      }
      Enumeration<JarEntry> entries = upstream.entries();
      while (entries.hasMoreElements()) {
        JarEntry e = entries.nextElement();
        String name = e.getName();
        if (ofReplacedUnit(name, units)) {
          replaced++;
          continue;
        }
        if (written.contains(name) || dropped(name)) {
          continue;
        }
        JarEntry copy = new JarEntry(name);
        copy.setTime(e.getTime());
        out.putNextEntry(copy);
        try (InputStream in = upstream.getInputStream(e)) {
          in.transferTo(out);
        }
        out.closeEntry();
        written.add(name);
      }
    }
    return replaced;
  }

  private static boolean dropped(String name) {
    String upper = name.toUpperCase();
    return upper.equals("META-INF/INDEX.LIST")
        || (upper.startsWith("META-INF/") && (upper.endsWith(".SF") || upper.endsWith(".RSA")
            || upper.endsWith(".DSA") || upper.endsWith(".EC")));
  }

  /** True for Unit.class, Unit$Nested.class and their multi-release copies. */
  static boolean ofReplacedUnit(String entry, List<String> units) {
    String name = entry;
    if (name.startsWith("META-INF/versions/")) {
      int slash = name.indexOf('/', "META-INF/versions/".length());
      if (slash < 0) {
        return false;
      }
      name = name.substring(slash + 1);
    }
    if (!name.endsWith(".class")) {
      return false;
    }
    for (String unit : units) {
      if (name.equals(unit + ".class") || name.startsWith(unit + "$")) {
        return true;
      }
    }
    return false;
  }

  private Manifest manifest(JarFile upstream, List<String> applied) throws IOException {
    Manifest manifest = upstream.getManifest() == null ? new Manifest() : upstream.getManifest();
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
    // Entries for per-file signatures would no longer match; keep only main attributes.
    manifest.getEntries().clear();
    return manifest;
  }

  private static Set<String> listClasses(Path classes) throws IOException {
    if (!Files.isDirectory(classes)) {
      return new java.util.TreeSet<>();
    }
    try (Stream<Path> walk = Files.walk(classes)) {
      return walk.filter(Files::isRegularFile)
          .map(p -> classes.relativize(p).toString().replace(File.separatorChar, '/'))
          .collect(Collectors.toCollection(java.util.TreeSet::new));
    }
  }
}
