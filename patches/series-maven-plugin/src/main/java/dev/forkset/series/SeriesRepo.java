package dev.forkset.series;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * A line's series as a git repository of the upstream sources, and back.
 *
 * <ol>
 *   <li><b>Export.</b> The sources jar's Java files are unpacked under the module path
 *       ({@code hbase-server/src/main/java/...}) and committed once, with a fixed author, committer
 *       and date, tagged {@value #BASE_TAG}; then each patch is committed with {@code git am}, so
 *       the commit message is the patch's message. Because the sources jar holds the files of the
 *       upstream release tag, the blob ids are those of the upstream repository, and the patches'
 *       {@code index} lines name them.
 *   <li><b>Refresh.</b> {@code git format-patch} of each commit after the base, written back over
 *       the patch files. Commits are matched to patches by subject (then by the files they touch,
 *       for a reworded subject); the rest become new patches, and patches without a commit are
 *       removed. The series file keeps its comments and takes the commits' order.
 *   <li><b>Normal form.</b> Before writing, the commits are replayed with {@code git am} onto a
 *       fresh base in a scratch repository (fixed committer, committer date = author date) and
 *       formatted from there. So a patch's {@code From <sha>} line is the commit an export
 *       creates, and refreshing or converting an unchanged series changes no byte: the operations
 *       are idempotent.
 *   <li><b>Convert.</b> Refresh from the series itself: old DEP-3-first patches become mails (the
 *       author and date of the commit that added the file to this repository), mails are
 *       normalised.
 * </ol>
 *
 * Every patch is also applied with {@link StrictPatcher} before git sees it, so a series that
 * would not build is refused with the build's own message.
 */
final class SeriesRepo {
  static final String BASE_TAG = "series-base";
  static final String BRANCH = "series";
  /** Commit time of the base: fixed, so that the base commit id depends only on the sources. */
  private static final String BASE_DATE = "@946684800 +0000";
  private static final String[] FORMAT_PATCH =
      {"format-patch", "--no-numbered", "--no-signature", "--full-index", "--stat", "--summary"};
  private static final Pattern NUMBER = Pattern.compile("^(\\d+)-");

  /** Where an old-form patch's author and date come from. */
  interface Authorship {
    /** {@code {"Name <email>", "RFC 2822 date"}} for the patch file {@code name} of the line. */
    String[] of(Path lineDir, String name) throws PatchFailure, IOException;
  }

  /** One line per patch: what refresh or convert did to it. */
  static final class Report {
    final List<String> lines = new ArrayList<>();
    int changed;

    void add(String what, boolean change) {
      lines.add(what);
      if (change) {
        changed++;
      }
    }
  }

  /** Another upstream module built from the same series: its sources jar and main root. */
  static final class Sibling {
    final ZipFile jar;
    final String mainRoot;
    final String coordinates;

    Sibling(ZipFile jar, String mainRoot, String coordinates) {
      this.jar = jar;
      this.mainRoot = mainRoot;
      this.coordinates = coordinates;
    }
  }

  private final ZipFile sourcesJar;
  private final String coordinates;
  /** The other modules the series changes, whose sources the base commit holds too. */
  private List<Sibling> siblings = List.of();
  private final String mainRoot;
  private final String testRoot;
  private final Set<String> modules;
  private final Path scratch;

  /**
   * {@code coordinates} name the upstream artifact in the base commit's message; {@code scratch}
   * is an empty folder for git's HOME and temporary repositories, owned by the caller.
   */
  SeriesRepo(ZipFile sourcesJar, String coordinates, String mainRoot, String testRoot,
      Set<String> modules, Path scratch) {
    this.sourcesJar = sourcesJar;
    this.coordinates = coordinates;
    this.mainRoot = mainRoot;
    this.testRoot = testRoot;
    this.modules = modules;
    this.scratch = scratch;
  }

  /**
   * Adds the sources of the other modules built from the series to the base commit (after this
   * one's, in {@code siblings}' order), and checks each patch's sections under this line's module
   * only. A series of one module has none: its base commit is as before.
   */
  SeriesRepo withSiblings(List<Sibling> siblings) {
    this.siblings = List.copyOf(siblings);
    return this;
  }

  /** {@code p} with the sections of this line's module (and any the build would refuse). */
  private Series.Patch own(Series.Patch p) throws PatchFailure {
    if (siblings.isEmpty()) {
      return p;
    }
    Set<String> built = new HashSet<>();
    String own = mainRoot.substring(0, mainRoot.indexOf("/src/"));
    built.add(own);
    for (Sibling s : siblings) {
      built.add(s.mainRoot.substring(0, s.mainRoot.indexOf("/src/")));
    }
    return Series.ownSections(p, own, built);
  }

  private Path home() throws IOException {
    return Files.createDirectories(scratch.resolve("home"));
  }

  // --- export ---------------------------------------------------------------------------------

  /** Exports {@code series} to a new repository at {@code repo}; returns the number of commits. */
  int export(Series series, Path repo, Authorship authors) throws PatchFailure, IOException {
    return export(series, repo, authors, false);
  }

  /**
   * As {@link #export(Series, Path, Authorship)}; with {@code sparse} only the files the series
   * touches are checked out (the commits are the same), which is all git am needs.
   */
  int export(Series series, Path repo, Authorship authors, boolean sparse)
      throws PatchFailure, IOException {
    series.apply(sourcesJar, mainRoot, testRoot); // fails in the build's words first
    if (Files.exists(repo)) {
      try (Stream<Path> s = Files.list(repo)) {
        if (s.findAny().isPresent()) {
          throw new PatchFailure(repo + " exists and is not empty. Export writes a new repository:"
              + " remove it or name another folder with -Dseries.repo=...");
        }
      }
    }
    Set<String> touched = null;
    if (sparse) {
      touched = new HashSet<>();
      for (Series.Patch p : series.patches()) {
        for (UnifiedDiff.FileDiff f : p.files) {
          touched.add(f.path());
        }
      }
    }
    Git git = base(repo, touched);
    for (Series.Patch p : series.patches()) {
      am(git, p.name, mailOf(series.directory(), p, authors));
    }
    return series.patches().size();
  }

  /**
   * A new repository at {@code repo} with the upstream sources as one commit tagged
   * {@value #BASE_TAG} on branch {@value #BRANCH}. With {@code only} null the whole tree is checked
   * out; otherwise only those paths (a scratch repository needs no more for git am).
   */
  private Git base(Path repo, Set<String> only) throws PatchFailure, IOException {
    Files.createDirectories(repo);
    Git git = new Git(repo, home());
    git.run("init", "--quiet");
    git.run("symbolic-ref", "HEAD", "refs/heads/" + BRANCH);
    importSources(git, parts(), "refs/heads/" + BRANCH, null);
    git.run("tag", BASE_TAG);
    if (only != null) {
      git.run("config", "core.sparseCheckout", "true");
      Path patterns = repo.resolve(".git/info/sparse-checkout");
      Files.createDirectories(patterns.getParent());
      Files.write(patterns, only.stream().map(p -> "/" + p).sorted()
          .collect(Collectors.joining("\n", "", "\n")).getBytes(StandardCharsets.UTF_8));
    }
    git.run("read-tree", "-mu", "HEAD");
    return git;
  }

  /** The sources of the base commit: this module's, then its siblings' in their order. */
  private List<Sibling> parts() {
    List<Sibling> parts = new ArrayList<>();
    parts.add(new Sibling(sourcesJar, mainRoot, coordinates));
    parts.addAll(siblings);
    return parts;
  }

  /**
   * Writes a commit whose tree is the Java files of each part's sources jar under its main root,
   * straight from the jars with git fast-import (one pack, no files on disk): the same commit git
   * add and git commit would make, with the fixed author, committer and date of a base. Its
   * message names every part; with {@code parent}, the commit replaces that commit's whole tree.
   */
  private void importSources(Git git, List<Sibling> parts, String ref, String parent)
      throws PatchFailure, IOException {
    int files = 0;
    List<List<ZipEntry>> all = new ArrayList<>();
    for (Sibling part : parts) {
      List<ZipEntry> sources = javaSources(part.jar, part.mainRoot);
      files += sources.size();
      all.add(sources);
    }
    // The one-module wording ("the sources jar") is part of the base commit of every
    // single-module series: its bytes, and so every patch's From line, must not change.
    String message = "Upstream sources of "
        + parts.stream().map(p -> p.coordinates).collect(Collectors.joining(", "))
        + "\n\nThe " + files + " Java files of the sources " + (parts.size() == 1 ? "jar" : "jars")
        + " (Maven Central) under "
        + parts.stream().map(p -> p.mainRoot).collect(Collectors.joining(", "))
        + ". The patches of the series are the commits after this one.\n";
    String who = Git.NAME + " <" + Git.EMAIL + "> " + BASE_DATE.substring(1);
    git.feed(out -> {
      byte[] msg = message.getBytes(StandardCharsets.UTF_8);
      out.write(("commit " + ref + "\nauthor " + who + "\ncommitter " + who + "\ndata "
          + msg.length + "\n").getBytes(StandardCharsets.UTF_8));
      out.write(msg);
      out.write('\n');
      if (parent != null) {
        out.write(("from " + parent + "\ndeleteall\n").getBytes(StandardCharsets.UTF_8));
      }
      for (int k = 0; k < parts.size(); k++) {
        ZipFile jar = parts.get(k).jar;
        for (ZipEntry e : all.get(k)) {
          byte[] bytes;
          try (InputStream in = jar.getInputStream(e)) {
            bytes = in.readAllBytes();
          }
          out.write(("M 100644 inline " + parts.get(k).mainRoot + e.getName() + "\ndata "
              + bytes.length + "\n").getBytes(StandardCharsets.UTF_8));
          out.write(bytes);
          out.write('\n');
        }
      }
      out.write("done\n".getBytes(StandardCharsets.UTF_8));
    }, "fast-import", "--quiet", "--done");
  }

  /** The Java files of {@code jar}, checked to stay under {@code root}. */
  private static List<ZipEntry> javaSources(ZipFile jar, String root) throws PatchFailure {
    List<ZipEntry> sources = new ArrayList<>();
    Enumeration<? extends ZipEntry> entries = jar.entries();
    while (entries.hasMoreElements()) {
      ZipEntry e = entries.nextElement();
      if (e.isDirectory() || !e.getName().endsWith(".java")) {
        continue;
      }
      String path = java.nio.file.Paths.get(root, e.getName()).normalize().toString()
          .replace(java.io.File.separatorChar, '/');
      if (!path.startsWith(root) || e.getName().startsWith("/")) {
        throw new PatchFailure(jar.getName() + " holds " + e.getName() + ", which points"
            + " outside " + root + "; not unpacked.");
      }
      sources.add(e);
    }
    return sources;
  }

  /**
   * Moves an exported series onto another upstream version: the old base is tagged
   * {@code upstream-<old>}, a commit with {@code onto}'s sources on top of it becomes
   * {@value #BASE_TAG}, and the series is rebased there with git's 3-way merges (both versions'
   * blobs are in the repository). Returns null when the rebase went through, or git's account of
   * the conflict, left in place for the developer to resolve.
   */
  String moveOnto(Path repo, ZipFile onto, String ontoCoordinates, String oldVersion)
      throws PatchFailure, IOException {
    return moveOnto(repo, List.of(new Sibling(onto, mainRoot, ontoCoordinates)), oldVersion);
  }

  /**
   * As {@link #moveOnto(Path, ZipFile, String, String)} for a series over several modules:
   * {@code onto} holds the new version's sources jar of every module the base commit holds (this
   * module's first, then the siblings'), each under the same main root, so that the new base
   * commit replaces every module's sources, as export would make it for that version.
   */
  String moveOnto(Path repo, List<Sibling> onto, String oldVersion)
      throws PatchFailure, IOException {
    List<String> have = parts().stream().map(p -> p.mainRoot).collect(Collectors.toList());
    List<String> given = onto.stream().map(p -> p.mainRoot).collect(Collectors.toList());
    if (!have.equals(given)) {
      throw new PatchFailure("Cannot move the series onto " + String.join(", ", onto.stream()
          .map(p -> p.coordinates).collect(Collectors.toList())) + ": its base commit holds the"
          + " sources under " + String.join(", ", have) + " (the modules of series.modules), but"
          + " the new version's sources jars give " + String.join(", ", given) + ". Give a"
          + " sources jar of the new version for every module of series.modules, in that order.");
    }
    Git git = new Git(repo, home());
    String oldTag = "upstream-" + oldVersion;
    git.run("tag", oldTag, BASE_TAG);
    String temp = "refs/heads/forkset-upstream-" + System.nanoTime();
    importSources(git, onto, temp, git.run("rev-parse", BASE_TAG).strip());
    git.run("tag", "--force", BASE_TAG, temp);
    git.run("update-ref", "-d", temp);
    Git.Outcome o = git.exec(Map.of(), "rebase", "--quiet", "--onto", BASE_TAG, oldTag, BRANCH);
    if (o.exit == 0) {
      return null;
    }
    return Git.indent(o.out + o.err) + "\n" + Git.indent(git.run("status", "--short"));
  }

  private void am(Git git, String name, byte[] mail) throws PatchFailure, IOException {
    Path file = Files.createTempFile(scratch, "mail", ".patch");
    try {
      Files.write(file, mail);
      Git.Outcome o = git.exec(Map.of(), "am", "--quiet", "--keep-cr",
          "--committer-date-is-author-date", file.toString());
      if (o.exit != 0) {
        git.exec(Map.of(), "am", "--abort");
        throw new PatchFailure(name + ": git am does not apply it on " + coordinates + ":\n"
            + Git.indent(o.err.isEmpty() ? o.out : o.err));
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  // --- refresh and convert ----------------------------------------------------------------------

  /** Writes the commits after {@code baseRef} in {@code repo} back as {@code lineDir}'s series. */
  Report refresh(Path lineDir, Path repo, String baseRef) throws PatchFailure, IOException {
    Series old = Series.read(lineDir, modules, true);
    Git dev = new Git(repo, home());
    if (!Files.isDirectory(repo)) {
      throw new PatchFailure("No repository at " + repo + ". Export the series first"
          + " (series:export -Dseries.repo=" + repo + ").");
    }
    if (dev.exec(Map.of(), "rev-parse", "--verify", "--quiet", baseRef + "^{commit}").exit != 0) {
      throw new PatchFailure(repo + " has no commit '" + baseRef + "'. series:export tags the"
          + " upstream base " + BASE_TAG + "; in another checkout pass the upstream tag with"
          + " -Dseries.base=... (such as rel/2.6.4).");
    }
    String dirty = dev.run("status", "--porcelain", "--untracked-files=no");
    if (!dirty.isBlank()) {
      throw new PatchFailure(repo + " has changes that are not committed:\n" + Git.indent(dirty)
          + "\n  Commit them (or stash them) first; refresh reads commits only.");
    }
    String merges = dev.run("rev-list", "--merges", baseRef + "..HEAD");
    if (!merges.isBlank()) {
      throw new PatchFailure(repo + ": the commits after " + baseRef + " include merges ("
          + merges.strip().replace('\n', ' ') + "). A series is a straight line of commits;"
          + " rebase onto " + baseRef + " first.");
    }
    List<String> commits = nonEmpty(dev.run("rev-list", "--reverse", baseRef + "..HEAD"));
    if (commits.isEmpty()) {
      throw new PatchFailure(repo + " has no commits after " + baseRef + "; nothing to refresh.");
    }
    Path out = Files.createDirectories(scratch.resolve("format-patch-" + System.nanoTime()));
    List<String> args = new ArrayList<>(Arrays.asList(FORMAT_PATCH));
    args.addAll(List.of("-o", out.toString(), baseRef + "..HEAD"));
    dev.run(args.toArray(new String[0]));
    List<byte[]> mails = readAll(out);
    if (mails.size() != commits.size()) {
      throw new PatchFailure("git format-patch wrote " + mails.size() + " patches for "
          + commits.size() + " commits in " + repo + "; empty commits cannot be patches. Drop them"
          + " (git rebase -i " + baseRef + ").");
    }
    List<String> labels = new ArrayList<>();
    for (String c : commits) {
      labels.add("commit " + c.substring(0, 12) + " in " + repo);
    }
    List<Series.Patch> parsed = new ArrayList<>();
    for (int k = 0; k < mails.size(); k++) {
      Series.Patch p = Series.Patch.parse(labels.get(k), mails.get(k), modules);
      if (p.header.form() != Dep3Header.Form.MAIL) {
        throw new PatchFailure(labels.get(k) + ": git format-patch wrote no mail.");
      }
      parsed.add(p);
    }
    return write(lineDir, old, parsed, mails, labels);
  }

  /** Rewrites {@code lineDir}'s series in the normal form: old-form patches become mails. */
  Report convert(Path lineDir, Authorship authors) throws PatchFailure, IOException {
    Series old = Series.read(lineDir, modules, true);
    List<byte[]> mails = new ArrayList<>();
    List<String> labels = new ArrayList<>();
    for (Series.Patch p : old.patches()) {
      mails.add(mailOf(lineDir, p, authors));
      labels.add(p.name);
    }
    return write(lineDir, old, old.patches(), mails, labels);
  }

  private byte[] mailOf(Path lineDir, Series.Patch p, Authorship authors)
      throws PatchFailure, IOException {
    if (p.header.form() == Dep3Header.Form.MAIL) {
      return Files.readAllBytes(lineDir.resolve(p.name));
    }
    String[] who = authors.of(lineDir, p.name);
    return mailOfOldForm(p, who[0], who[1]).getBytes(StandardCharsets.UTF_8);
  }

  /** The mail git am takes for an old-form patch: its fields go into the message. */
  static String mailOfOldForm(Series.Patch p, String author, String date) throws PatchFailure {
    StringBuilder m = new StringBuilder();
    m.append("From ").append(GitBlob.NONE).append(" Mon Sep 17 00:00:00 2001\n");
    m.append("From: ").append(encodeAddress(author)).append('\n');
    m.append("Date: ").append(date).append('\n');
    m.append("Subject: [PATCH] ").append(encodeWord(p.header.subject())).append('\n');
    m.append("MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n");
    m.append("Content-Transfer-Encoding: 8bit\n\n");
    for (String l : p.header.description()) {
      if (l.startsWith("---") || l.startsWith("diff -") || l.startsWith("Index: ")) {
        throw new PatchFailure(p.name + ": the description line '" + l + "' would end the"
            + " message for git am (which takes '---', 'diff -' and 'Index: ' as the start of the"
            + " diff). Reword it and convert again.");
      }
      m.append(l).append('\n');
    }
    if (!p.header.description().isEmpty()) {
      m.append('\n');
    }
    for (Map.Entry<String, String> f : p.header.fields().entrySet()) {
      if (f.getKey().equals("Subject") || f.getKey().equals("Description")) {
        continue;
      }
      m.append(f.getKey()).append(": ").append(f.getValue().replace("\n", "\n ")).append('\n');
    }
    m.append("---\n").append(p.diffText());
    return m.toString();
  }

  private static String encodeAddress(String address) {
    int lt = address.lastIndexOf(" <");
    return lt < 0 ? address : encodeWord(address.substring(0, lt)) + address.substring(lt);
  }

  /** RFC 2047 Q encoding of a header value that is not plain ASCII. */
  static String encodeWord(String value) {
    if (value.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
      return value;
    }
    StringBuilder b = new StringBuilder("=?UTF-8?q?");
    for (byte x : value.getBytes(StandardCharsets.UTF_8)) {
      int c = x & 0xff;
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || "!*+-/".indexOf(c) >= 0) {
        b.append((char) c);
      } else {
        b.append(String.format("=%02X", c));
      }
    }
    return b.append("?=").toString();
  }

  /**
   * Checks the new series ({@code patches}, the parsed {@code mails}), brings it to the normal form through a scratch repository and writes
   * it over {@code lineDir}'s series.
   */
  private Report write(Path lineDir, Series old, List<Series.Patch> patches, List<byte[]> mails,
      List<String> labels) throws PatchFailure, IOException {
    Series.Tree tree = new Series.Tree(sourcesJar, mainRoot, testRoot);
    for (Series.Patch p : patches) {
      tree.apply(own(p)); // the build's own check, in its words, before git sees the patches
    }
    Set<String> touched = new HashSet<>();
    for (Series.Patch p : patches) {
      for (UnifiedDiff.FileDiff f : p.files) {
        touched.add(f.path());
      }
    }
    Path repo = scratch.resolve("normal-" + System.nanoTime());
    Git git = base(repo, touched);
    for (int k = 0; k < mails.size(); k++) {
      am(git, labels.get(k), mails.get(k));
    }
    Path out = Files.createDirectories(scratch.resolve("out-" + System.nanoTime()));
    List<String> args = new ArrayList<>(Arrays.asList(FORMAT_PATCH));
    args.addAll(List.of("-o", out.toString(), BASE_TAG + "..HEAD"));
    git.run(args.toArray(new String[0]));
    List<byte[]> normal = readAll(out);
    List<Series.Patch> fresh = new ArrayList<>();
    for (int k = 0; k < normal.size(); k++) {
      fresh.add(Series.Patch.parse(labels.get(k), normal.get(k), modules));
    }
    Report report = new Report();
    List<String> names = names(old.patches(), fresh, report);
    Set<String> kept = new HashSet<>(names);
    for (int k = 0; k < names.size(); k++) {
      Path file = lineDir.resolve(names.get(k));
      boolean exists = Files.isRegularFile(file);
      if (exists && Arrays.equals(Files.readAllBytes(file), normal.get(k))) {
        report.add("unchanged " + names.get(k), false);
      } else {
        Files.write(file, normal.get(k));
        report.add((exists ? "updated   " : "new       ") + names.get(k) + "  ("
            + fresh.get(k).header.subject() + ")", true);
      }
    }
    for (Series.Patch p : old.patches()) {
      if (!kept.contains(p.name)) {
        Files.deleteIfExists(lineDir.resolve(p.name));
        report.add("removed   " + p.name + "  (no commit has its subject or touches its files:"
            + " dropped or squashed)", true);
      }
    }
    writeSeriesFile(lineDir.resolve(Series.SERIES_FILE), names);
    return report;
  }

  /**
   * Names the fresh patches: the old name of the patch with the same subject, else of a patch no
   * commit took that touches one of the same files, else a new name numbered after the patch
   * before it.
   */
  static List<String> names(List<Series.Patch> old, List<Series.Patch> fresh, Report report) {
    String[] names = new String[fresh.size()];
    Set<Integer> taken = new HashSet<>();
    for (int j = 0; j < fresh.size(); j++) {
      for (int i = 0; i < old.size(); i++) {
        if (!taken.contains(i) && old.get(i).header.subject().equals(fresh.get(j).header.subject())) {
          names[j] = old.get(i).name;
          taken.add(i);
          break;
        }
      }
    }
    for (int j = 0; j < fresh.size(); j++) {
      if (names[j] != null) {
        continue;
      }
      Set<String> paths = paths(fresh.get(j));
      for (int i = 0; i < old.size(); i++) {
        if (!taken.contains(i) && paths.stream().anyMatch(paths(old.get(i))::contains)) {
          names[j] = old.get(i).name;
          taken.add(i);
          report.lines.add("subject of " + names[j] + " changed from '" + old.get(i).header.subject()
              + "' to '" + fresh.get(j).header.subject() + "' (matched by the files it touches)");
          break;
        }
      }
    }
    Set<Integer> numbers = new HashSet<>();
    for (Series.Patch p : old) {
      numbers.add(number(p.name));
    }
    for (int j = 0; j < fresh.size(); j++) {
      if (names[j] != null) {
        continue;
      }
      int n = j == 0 ? 1 : number(names[j - 1]) + 1;
      if (numbers.contains(n)) {
        n = numbers.stream().max(Integer::compare).orElse(0) + 1;
      }
      numbers.add(n);
      names[j] = String.format("%04d-%s.patch", n, slug(fresh.get(j).header.subject()));
    }
    return Arrays.asList(names);
  }

  private static Set<String> paths(Series.Patch p) {
    return p.files.stream().map(UnifiedDiff.FileDiff::path).collect(Collectors.toSet());
  }

  private static int number(String name) {
    Matcher m = NUMBER.matcher(name);
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }

  /** A file name from a subject, as git format-patch makes one, in lower case. */
  static String slug(String subject) {
    String s = subject.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9]+", "-")
        .replaceAll("^-+|-+$", "");
    if (s.length() > 52) {
      s = s.substring(0, 52);
      int dash = s.lastIndexOf('-');
      if (dash > 20) {
        s = s.substring(0, dash);
      }
    }
    return s.isEmpty() ? "patch" : s;
  }

  /** Rewrites the series file with {@code names} in order, keeping comments and entry comments. */
  static void writeSeriesFile(Path file, List<String> names) throws IOException, PatchFailure {
    List<String> lines = Files.isRegularFile(file)
        ? Text.rawLines(Text.utf8(Files.readAllBytes(file), file.toString())) : List.of();
    List<String> head = new ArrayList<>();
    Map<String, List<String>> before = new LinkedHashMap<>();
    Map<String, String> written = new LinkedHashMap<>();
    List<String> pending = new ArrayList<>();
    boolean seenEntry = false;
    for (String l : lines) {
      String name = Series.entry(l);
      if (name.isEmpty()) {
        (seenEntry ? pending : head).add(l);
        continue;
      }
      seenEntry = true;
      before.put(name, new ArrayList<>(pending));
      pending.clear();
      written.put(name, l);
    }
    List<String> out = new ArrayList<>(head);
    for (String n : names) {
      out.addAll(before.getOrDefault(n, List.of()));
      out.add(written.getOrDefault(n, n));
    }
    out.addAll(pending);
    Files.write(file, (String.join("\n", out) + "\n").getBytes(StandardCharsets.UTF_8));
  }

  private static List<byte[]> readAll(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".patch"))
          .sorted(Comparator.comparing(p -> p.getFileName().toString()))
          .map(p -> {
            try {
              return Files.readAllBytes(p);
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          })
          .collect(Collectors.toList());
    }
  }

  private static List<String> nonEmpty(String lines) {
    List<String> out = new ArrayList<>();
    for (String l : lines.split("\n")) {
      if (!l.isBlank()) {
        out.add(l.strip());
      }
    }
    return out;
  }

  /** Authors from this repository's history: who added the patch file, and when. */
  static Authorship fromHistory(Path home, String fallbackAuthor) {
    return (lineDir, name) -> {
      Git git = new Git(lineDir, home);
      Git.Outcome o = git.exec(Map.of(), "log", "--diff-filter=A", "--follow",
          "--format=%an <%ae>%x09%aD", "--", name);
      List<String> found = o.exit == 0 ? nonEmpty(o.out) : List.of();
      if (!found.isEmpty()) {
        return found.get(found.size() - 1).split("\t", 2); // the first commit that added it
      }
      if (fallbackAuthor != null && !fallbackAuthor.isBlank()) {
        return new String[] {fallbackAuthor.strip(), java.time.format.DateTimeFormatter
            .RFC_1123_DATE_TIME.format(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC))};
      }
      throw new PatchFailure(name + " (in " + lineDir + ") is in the old form and not committed"
          + " in git, so its author and date are unknown. Commit it first (the commit that added"
          + " it gives both), or pass -Dseries.author='Name <email>' (dated now).");
    };
  }

  /** Deletes a scratch folder and everything in it. */
  static void delete(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        p.toFile().setWritable(true);
        Files.deleteIfExists(p);
      }
    }
  }
}
