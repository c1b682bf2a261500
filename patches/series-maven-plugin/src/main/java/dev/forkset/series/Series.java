package dev.forkset.series;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
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
 *
 * <p>Applying is exact: the sources are read as strict UTF-8, lines keep their terminators, and
 * where a section's {@code index} line names the blob the patch was made against and the file is
 * that blob, the result must be the blob the line names too (so our patcher and git agree byte for
 * byte). A patch made against another version of a file is noted in {@link Result#notes}.
 */
public final class Series {
  /** Name of the file that orders a line's patches. */
  public static final String SERIES_FILE = "series";

  /** A patch of the series: its file name, its message and its file sections. */
  public static final class Patch {
    public final String name;
    public final Dep3Header header;
    public final List<UnifiedDiff.FileDiff> files;
    /** The patch file's lines, without their newline. */
    final List<String> lines;

    private Patch(String name, Dep3Header header, List<UnifiedDiff.FileDiff> files,
        List<String> lines) {
      this.name = name;
      this.header = header;
      this.files = files;
      this.lines = lines;
    }

    /** Parses and checks a patch file in either form (see {@link Dep3Header.Form}). */
    public static Patch parse(String name, byte[] bytes, Set<String> modules) throws PatchFailure {
      String text = Text.utf8(bytes, name);
      List<String> lines = Text.rawLines(text);
      Dep3Header header = Dep3Header.read(name, lines, modules);
      List<UnifiedDiff.FileDiff> files = UnifiedDiff.parse(name, lines, header.diffStart,
          header.form() == Dep3Header.Form.DEP3_FIRST);
      return new Patch(name, header, files, lines);
    }

    /** This patch with only the sections {@code keep} accepts. */
    Patch only(java.util.function.Predicate<UnifiedDiff.FileDiff> keep) {
      return new Patch(name, header, files.stream().filter(keep).collect(Collectors.toList()), lines);
    }

    /** The diff part of the file, as written. */
    String diffText() {
      return String.join("\n", lines.subList(header.diffStart, lines.size())) + "\n";
    }
  }

  /** What applying the series produced. Paths are relative to a Java source root. */
  public static final class Result {
    public final List<Patch> patches = new ArrayList<>();
    public final Map<String, String> mainSources = new LinkedHashMap<>();
    public final Map<String, String> testSources = new LinkedHashMap<>();
    /** Things that apply but deserve a look, such as a patch made against another file version. */
    public final List<String> notes = new ArrayList<>();
  }

  /**
   * The files of one upstream sources jar as the patches applied so far left them. Patches are
   * applied one at a time, each entirely or not at all.
   */
  static final class Tree {
    private final ZipFile jar;
    private final String mainRoot;
    private final String testRoot;
    /** Repository path to content; null once deleted. In order of first touch. */
    final Map<String, String> work = new LinkedHashMap<>();
    private final Set<String> created = new HashSet<>();
    final List<String> notes = new ArrayList<>();

    Tree(ZipFile jar, String mainRoot, String testRoot) {
      this.jar = jar;
      this.mainRoot = mainRoot;
      this.testRoot = testRoot;
    }

    /** Applies {@code patch} with its own Max-Offset; on failure the tree is unchanged. */
    void apply(Patch patch) throws PatchFailure, IOException {
      apply(patch, patch.header.maxOffset(), false);
    }

    /**
     * Applies {@code patch}, or with {@code reverse} undoes it, hunks moved by up to
     * {@code maxOffset} lines; on failure the tree is unchanged.
     */
    void apply(Patch patch, int maxOffset, boolean reverse) throws PatchFailure, IOException {
      Map<String, String> stage = new LinkedHashMap<>(work);
      Set<String> made = new HashSet<>(created);
      List<String> found = new ArrayList<>();
      for (UnifiedDiff.FileDiff section : patch.files) {
        UnifiedDiff.FileDiff file = reverse ? section.reversed() : section;
        String path = file.path();
        boolean test = root(patch, path);
        String rel = path.substring((test ? testRoot : mainRoot).length());
        String before;
        if (stage.containsKey(path)) {
          before = stage.get(path);
          if (before == null && !file.isNewFile()) {
            throw new PatchFailure(patch.name + ": changes " + path + ", which an earlier patch"
                + " of the series deleted.");
          }
          if (before != null && file.isNewFile()) {
            throw new PatchFailure(patch.name + ": creates " + path + ", which an earlier patch"
                + " of the series already created or changed.");
          }
        } else if (test) {
          if (!file.isNewFile()) {
            throw new PatchFailure(patch.name + ": changes the upstream test " + path + "; the"
                + " pipeline has no upstream test sources. Put the test in a new file instead.");
          }
          before = null;
        } else {
          ZipEntry entry = jar.getEntry(rel);
          before = entry == null ? null : read(entry, path);
          if (file.isNewFile() && before != null) {
            throw new PatchFailure(patch.name + ": creates " + path + ", but upstream already has"
                + " that file. The upstream line changed; refresh the patch (docs/building.md).");
          }
          if (!file.isNewFile() && before == null) {
            throw new PatchFailure(patch.name + ": changes " + path + ", but the upstream sources"
                + " jar " + jar.getName() + " has no " + rel + ". The patch was made for another"
                + " upstream version; refresh it (docs/building.md).");
          }
        }
        if (file.isDeletedFile() && !test && !made.contains(path) && !reverse) {
          throw new PatchFailure(patch.name + ": deletes the upstream class " + path + ". A"
              + " custom jar keeps every upstream class (code compiled against the release, such"
              + " as coprocessors, links to it); change or deprecate the class instead.");
        }
        String after = StrictPatcher.apply(patch.name, file, before, maxOffset);
        if (file.oldId != null && file.newId != null) {
          if (GitBlob.matches(file.oldId, before)) {
            if (!GitBlob.matches(file.newId, after)) {
              throw new PatchFailure(patch.name + ": " + path + ": applying the section gives blob "
                  + GitBlob.id(after) + ", but its index line says " + file.newId + ". The hunks"
                  + " were edited after git wrote the patch; regenerate it (series:refresh).");
            }
          } else {
            found.add(patch.name + ": " + path + " was made against blob " + file.oldId + ", but"
                + " the file here is " + GitBlob.id(before) + " (" + (reverse ? "undone" : "applied")
                + " exactly all the same). Refresh the patch so that git apply --3way finds its"
                + " blobs (docs/building.md).");
          }
        }
        stage.put(path, after);
        if (file.isNewFile()) {
          made.add(path);
        }
      }
      work.clear();
      work.putAll(stage);
      created.clear();
      created.addAll(made);
      notes.addAll(found);
    }

    /** True for a test path, false for a main path; fails for anything else. */
    private boolean root(Patch patch, String path) throws PatchFailure {
      boolean test;
      if (path.startsWith(mainRoot)) {
        test = false;
      } else if (path.startsWith(testRoot)) {
        test = true;
      } else {
        throw new PatchFailure(patch.name + ": touches " + path + ", which is outside the"
            + " sources this line builds (" + mainRoot + " and " + testRoot + "). A patch may"
            + " only change the upstream artifact's own Java sources and add tests.");
      }
      if (!path.endsWith(".java")) {
        throw new PatchFailure(patch.name + ": touches " + path + "; only .java files can be"
            + " recompiled into the custom jar.");
      }
      return test;
    }

    private String read(ZipEntry entry, String path) throws PatchFailure, IOException {
      try (InputStream in = jar.getInputStream(entry)) {
        return Text.utf8(in.readAllBytes(), "upstream file " + path + " (" + jar.getName() + ")");
      }
    }

    /** The current files under the main (or test) root, keyed by path below that root. */
    Map<String, String> sources(boolean test) {
      Map<String, String> out = new LinkedHashMap<>();
      String root = test ? testRoot : mainRoot;
      for (Map.Entry<String, String> e : work.entrySet()) {
        if (e.getValue() != null && e.getKey().startsWith(root)) {
          out.put(e.getKey().substring(root.length()), e.getValue());
        }
      }
      return out;
    }
  }

  private final Path dir;
  private final List<Patch> patches;

  private Series(Path dir, List<Patch> patches) {
    this.dir = dir;
    this.patches = patches;
  }

  /**
   * Reads and checks the series file and every patch it names, without touching upstream. Every
   * patch must be in git format-patch form.
   */
  public static Series read(Path dir, Set<String> modules) throws PatchFailure, IOException {
    Series s = read(dir, modules, true);
    s.requireMailForm("series:convert (docs/building.md, \"Converting a series\")");
    return s;
  }

  /** Fails naming the first patch that is not a git format-patch mail and {@code howToConvert}. */
  public void requireMailForm(String howToConvert) throws PatchFailure {
    for (Patch p : patches) {
      if (p.header.form() != Dep3Header.Form.MAIL) {
        throw new PatchFailure(p.name + ": is in the old form (DEP-3 fields, a blank line, a diff)."
            + " Patches are git format-patch mails now (patches/README.md); convert the line's"
            + " series in place with:" + (howToConvert.startsWith("\n") ? "" : " ") + howToConvert);
      }
    }
  }

  /** As {@link #read(Path, Set)}; with {@code acceptOldForm} patches may also be in the old form. */
  public static Series read(Path dir, Set<String> modules, boolean acceptOldForm)
      throws PatchFailure, IOException {
    if (!acceptOldForm) {
      return read(dir, modules);
    }
    Path seriesFile = dir.resolve(SERIES_FILE);
    if (!Files.isRegularFile(seriesFile)) {
      throw new PatchFailure("No series file at " + seriesFile + ". A line directory holds a"
          + " 'series' file listing its patches in order; see docs/building.md.");
    }
    List<Patch> patches = new ArrayList<>();
    Set<String> seen = new TreeSet<>();
    int lineNo = 0;
    for (String raw : Text.rawLines(Text.utf8(Files.readAllBytes(seriesFile), seriesFile.toString()))) {
      lineNo++;
      String name = entry(raw);
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
      patches.add(Patch.parse(name, Files.readAllBytes(patch), modules));
    }
    if (patches.isEmpty()) {
      throw new PatchFailure(seriesFile + " lists no patches. A line needs at least one patch.");
    }
    return new Series(dir, patches);
  }

  /** The patch named on a line of the series file, or "" for a comment or blank line. */
  static String entry(String line) {
    return line.replaceAll("#.*", "").trim();
  }

  /**
   * The series as the line module that builds the upstream module {@code own} applies it. A series
   * may change several upstream modules (the interface of a metric in one, its implementation in
   * another); each is built by its own line module from the same series, listed in
   * {@code built} (upstream repository folders, such as {@code hbase-server} and
   * {@code hbase-hadoop-compat}). The sections under another built module are left to that
   * module's line; a section under a module no line module builds fails, naming it, since its
   * change would be in no jar.
   */
  public Series forModule(String own, Set<String> built) throws PatchFailure {
    List<Patch> out = new ArrayList<>();
    for (Patch p : patches) {
      out.add(ownSections(p, own, built));
    }
    return new Series(dir, out);
  }

  /** {@code p} with only its sections under {@code own}; see {@link #forModule}. */
  static Patch ownSections(Patch p, String own, Set<String> built) throws PatchFailure {
    for (UnifiedDiff.FileDiff f : p.files) {
      String path = f.path();
      if (path.startsWith(own + "/")) {
        continue;
      }
      boolean sibling = built.stream().anyMatch(m -> !m.equals(own) && path.startsWith(m + "/"));
      if (!sibling && built.size() > 1) {
        String module = path.contains("/") ? path.substring(0, path.indexOf('/')) : path;
        throw new PatchFailure(p.name + ": touches " + path + ", in the upstream module " + module
            + ", which no line module of this series builds (series.modules: "
            + String.join(", ", new TreeSet<>(built)) + "). Its change would be in no jar: add a"
            + " line module for " + module + " and list it in series.modules of every line module"
            + " of the series (docs/building.md, \"A series over several upstream modules\").");
      }
      // With one built module, Tree#root refuses the path in the words of a single-module line.
    }
    return p.only(f -> f.path().startsWith(own + "/")
        || built.stream().noneMatch(m -> f.path().startsWith(m + "/")));
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

  public Path directory() {
    return dir;
  }

  /**
   * Applies the series to {@code sourcesJar}. {@code mainRoot} and {@code testRoot} are the
   * upstream repository folders of main and test Java sources (such as
   * {@code hbase-server/src/main/java/}); the sources jar holds the main tree at its root.
   */
  public Result apply(ZipFile sourcesJar, String mainRoot, String testRoot) throws PatchFailure, IOException {
    Tree tree = new Tree(sourcesJar, mainRoot, testRoot);
    Result result = new Result();
    for (Patch patch : patches) {
      tree.apply(patch);
      result.patches.add(patch);
    }
    result.mainSources.putAll(tree.sources(false));
    result.testSources.putAll(tree.sources(true));
    result.notes.addAll(tree.notes);
    return result;
  }
}
