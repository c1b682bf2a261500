package dev.forkset.series;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * One upstream line's patch series: {@code patches/<project>/<version>/series} lists the patches
 * in the order they apply. Applying it reads only the files the patches touch from the upstream
 * sources jar and returns them patched, split into main sources (recompiled into the custom jar)
 * and test sources (the patches' own tests, which may only add files).
 */
public final class Series {
  /** Name of the file that orders a line's patches. */
  public static final String SERIES_FILE = "series";

  /** A patch of the series with its header. */
  public static final class Patch {
    public final String name;
    public final Dep3Header header;
    final List<UnifiedDiff.FileDiff> files;

    Patch(String name, Dep3Header header, List<UnifiedDiff.FileDiff> files) {
      this.name = name;
      this.header = header;
      this.files = files;
    }
  }

  /** What applying the series produced. Paths are relative to a Java source root. */
  public static final class Result {
    public final List<Patch> patches = new ArrayList<>();
    public final Map<String, String> mainSources = new LinkedHashMap<>();
    public final Map<String, String> testSources = new LinkedHashMap<>();
  }

  private final Path dir;
  private final List<Patch> patches;

  private Series(Path dir, List<Patch> patches) {
    this.dir = dir;
    this.patches = patches;
  }

  /** Reads and checks the series file and every patch it names, without touching upstream. */
  public static Series read(Path dir, Set<String> modules) throws PatchFailure, IOException {
    Path seriesFile = dir.resolve(SERIES_FILE);
    if (!Files.isRegularFile(seriesFile)) {
      throw new PatchFailure("No series file at " + seriesFile + ". A line directory holds a"
          + " 'series' file listing its patches in order; see docs/building.md.");
    }
    List<Patch> patches = new ArrayList<>();
    Set<String> seen = new TreeSet<>();
    int lineNo = 0;
    for (String raw : Files.readAllLines(seriesFile, StandardCharsets.UTF_8)) {
      lineNo++;
      String name = raw.replaceAll("#.*", "").trim();
      if (name.isEmpty()) {
        continue;
      }
      if (!seen.add(name)) {
        throw new PatchFailure(seriesFile + " line " + lineNo + ": '" + name + "' is listed twice.");
      }
      Path patch = dir.resolve(name);
      if (!Files.isRegularFile(patch)) {
        throw new PatchFailure(seriesFile + " line " + lineNo + " names '" + name + "', but "
            + patch + " does not exist. Add the patch file or remove the line from the series.");
      }
      String text = new String(Files.readAllBytes(patch), StandardCharsets.UTF_8).replace("\r\n", "\n");
      Dep3Header header = Dep3Header.parse(name, text, modules);
      patches.add(new Patch(name, header, UnifiedDiff.parse(name, text)));
    }
    if (patches.isEmpty()) {
      throw new PatchFailure(seriesFile + " lists no patches. A line needs at least one patch.");
    }
    return new Series(dir, patches);
  }

  /** Patch files in the directory that the series does not name (a forgotten series entry). */
  public List<String> unlisted() throws IOException {
    Set<String> listed = patches.stream().map(p -> p.name).collect(Collectors.toSet());
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".patch") && !listed.contains(n))
          .sorted().collect(Collectors.toList());
    }
  }

  public List<Patch> patches() {
    return patches;
  }

  /**
   * Applies the series to {@code sourcesJar}. {@code mainRoot} and {@code testRoot} are the
   * upstream repository folders of main and test Java sources (such as
   * {@code hbase-server/src/main/java/}); the sources jar holds the main tree at its root.
   */
  public Result apply(ZipFile sourcesJar, String mainRoot, String testRoot) throws PatchFailure, IOException {
    Result result = new Result();
    Map<String, List<String>> work = new LinkedHashMap<>();
    Map<String, Boolean> isTest = new LinkedHashMap<>();
    for (Patch patch : patches) {
      for (UnifiedDiff.FileDiff file : patch.files) {
        String path = file.newPath;
        boolean test;
        String rel;
        if (path.startsWith(mainRoot)) {
          test = false;
          rel = path.substring(mainRoot.length());
        } else if (path.startsWith(testRoot)) {
          test = true;
          rel = path.substring(testRoot.length());
        } else {
          throw new PatchFailure(patch.name + ": touches " + path + ", which is outside the"
              + " sources this line builds (" + mainRoot + " and " + testRoot + "). A patch may"
              + " only change the upstream artifact's own Java sources and add tests.");
        }
        if (!rel.endsWith(".java")) {
          throw new PatchFailure(patch.name + ": touches " + path + "; only .java files can be"
              + " recompiled into the custom jar.");
        }
        List<String> before = work.get(path);
        if (before == null) {
          if (file.isNewFile()) {
            before = new ArrayList<>();
          } else if (test) {
            throw new PatchFailure(patch.name + ": changes the upstream test " + path + "; the"
                + " pipeline has no upstream test sources. Put the test in a new file instead.");
          } else {
            before = readEntry(sourcesJar, rel, patch.name, path);
          }
        } else if (file.isNewFile()) {
          throw new PatchFailure(patch.name + ": creates " + path + ", which an earlier patch"
              + " of the series already created or changed.");
        }
        if (file.isNewFile() && !test && sourcesJar.getEntry(rel) != null) {
          throw new PatchFailure(patch.name + ": creates " + path + ", but upstream already has"
              + " that file. The upstream line changed; refresh the patch (docs/building.md).");
        }
        work.put(path, StrictPatcher.apply(patch.name, file, before, patch.header.maxOffset()));
        isTest.put(path, test);
      }
      result.patches.add(patch);
    }
    for (Map.Entry<String, List<String>> e : work.entrySet()) {
      String text = String.join("\n", e.getValue()) + "\n";
      if (isTest.get(e.getKey())) {
        result.testSources.put(e.getKey().substring(testRoot.length()), text);
      } else {
        result.mainSources.put(e.getKey().substring(mainRoot.length()), text);
      }
    }
    return result;
  }

  private static List<String> readEntry(ZipFile jar, String rel, String patchName, String path)
      throws PatchFailure, IOException {
    ZipEntry entry = jar.getEntry(rel);
    if (entry == null) {
      throw new PatchFailure(patchName + ": changes " + path + ", but the upstream sources jar "
          + jar.getName() + " has no " + rel + ". The patch was made for another upstream"
          + " version; refresh it (docs/building.md).");
    }
    try (InputStream in = jar.getInputStream(entry)) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("\r\n", "\n");
      if (text.endsWith("\n")) {
        text = text.substring(0, text.length() - 1);
      }
      return new ArrayList<>(Arrays.asList(text.split("\n", -1)));
    }
  }
}
