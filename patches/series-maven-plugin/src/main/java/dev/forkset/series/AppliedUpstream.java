package dev.forkset.series;

import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Whether a backport is the change upstream released. For each patch whose
 * {@code Applied-Upstream:} field names the upstream release that has its change, every main file
 * the patch changes, as the series leaves it up to and including that patch, is compared with that
 * release's sources, and each differing hunk is listed. The differences a review accepted (upstream
 * reformatting, members kept for code compiled against the line) are recorded beside the series in
 * {@value #FILE}, one line each with its reason:
 *
 * <pre>
 * &lt;patch&gt; &lt;file below the main root&gt; &lt;hunk id&gt;  &lt;why&gt;
 * </pre>
 *
 * A hunk's id is the start of the SHA-256 of its removed and added lines, so it names the
 * difference, not where it is. Any other hunk, and a record that matches no hunk, is a problem.
 * The patch's own test files are not in a sources jar and are left out.
 */
final class AppliedUpstream {
  /** The record of reviewed differences, in the series folder. */
  static final String FILE = "upstream-differences";
  /** Unchanged lines shown around a difference, and the gap below which two make one hunk. */
  private static final int CONTEXT = 3;
  private static final Pattern REASON = Pattern.compile("\\s{2,}");

  /** One hunk in which a patched file differs from the release. */
  static final class Hunk {
    final String patch;
    final String release;
    /** Path below the main root, as the sources jar has it. */
    final String file;
    final String id;
    /** The hunk as a unified diff: "@@" line, then ' ', '-' (the series') and '+' (the release's) lines. */
    final List<String> lines;
    /** The recorded reason, or null when no record accepts the hunk. */
    String reason;

    Hunk(String patch, String release, String file, List<String> lines) {
      this.patch = patch;
      this.release = release;
      this.file = file;
      this.lines = lines;
      StringBuilder changed = new StringBuilder();
      for (String l : lines) {
        if (l.startsWith("-") || l.startsWith("+")) {
          changed.append(l).append('\n');
        }
      }
      this.id = Revisions.hex(Revisions.sha256().digest(
          changed.toString().getBytes(StandardCharsets.UTF_8))).substring(0, 12);
    }

    /** The record line that would accept this hunk. */
    String record(String why) {
      return patch + " " + file + " " + id + "  " + why;
    }
  }

  private AppliedUpstream() {}

  /** The release a patch declares with {@code Applied-Upstream:}, or null. */
  static String release(Series.Patch p) {
    return p.header.appliedUpstream();
  }

  /** The releases the series' patches name, in order. */
  static Set<String> releases(Series series) {
    Set<String> out = new LinkedHashSet<>();
    for (Series.Patch p : series.patches()) {
      // A patch with no section in this line's module (a series over several modules) has
      // nothing here to compare with its release.
      if (release(p) != null && !p.files.isEmpty()) {
        out.add(release(p));
      }
    }
    return out;
  }

  /**
   * The differing hunks of every patch that names a release: {@code jar} is the line's sources
   * jar, {@code releases} the sources jar of each release the patches name.
   */
  static List<Hunk> hunks(Series series, ZipFile jar, Map<String, ZipFile> releases,
      String mainRoot, String testRoot) throws PatchFailure, IOException {
    List<Hunk> out = new ArrayList<>();
    Series.Tree tree = new Series.Tree(jar, mainRoot, testRoot);
    for (Series.Patch p : series.patches()) {
      tree.apply(p);
      String release = release(p);
      if (release == null) {
        continue;
      }
      Set<String> files = new LinkedHashSet<>();
      for (UnifiedDiff.FileDiff f : p.files) {
        if (f.path().startsWith(mainRoot)) {
          files.add(f.path());
        }
      }
      for (String path : files) {
        String file = path.substring(mainRoot.length());
        String ours = tree.work.get(path);
        String theirs = read(releases.get(release), file);
        List<String> a = ours == null ? Collections.emptyList() : Text.rawLines(ours);
        List<String> b = theirs == null ? Collections.emptyList() : Text.rawLines(theirs);
        List<String> unified = UnifiedDiffUtils.generateUnifiedDiff("a/" + file, "b/" + file, a,
            DiffUtils.diff(a, b), CONTEXT);
        List<String> hunk = null;
        for (String l : unified.subList(Math.min(2, unified.size()), unified.size())) {
          if (l.startsWith("@@")) {
            if (hunk != null) {
              out.add(new Hunk(p.name, release, file, hunk));
            }
            hunk = new ArrayList<>();
          }
          hunk.add(l);
        }
        if (hunk != null) {
          out.add(new Hunk(p.name, release, file, hunk));
        }
      }
    }
    return out;
  }

  private static String read(ZipFile jar, String file) throws PatchFailure, IOException {
    ZipEntry e = jar.getEntry(file);
    if (e == null) {
      return null;
    }
    try (InputStream in = jar.getInputStream(e)) {
      return Text.utf8(in.readAllBytes(), file + " (" + jar.getName() + ")");
    }
  }

  /**
   * Sets each hunk's reason from the record {@code file} (which may be missing: nothing recorded)
   * and returns what is wrong: each hunk no record accepts, and each record no hunk matches.
   */
  static List<String> check(List<Hunk> hunks, Path file) throws IOException {
    List<String> problems = new ArrayList<>();
    List<String[]> records = new ArrayList<>();
    List<String> lines = Files.isRegularFile(file)
        ? Files.readAllLines(file, StandardCharsets.UTF_8) : Collections.emptyList();
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).trim();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] parts = REASON.split(line, 2);
      String[] key = parts[0].trim().split("\\s+");
      if (key.length != 3 || parts.length < 2 || parts[1].trim().isEmpty()) {
        problems.add(file + ":" + (n + 1) + ": a record is '<patch> <file> <hunk id>  <why>' (the"
            + " reason after two spaces is required): " + line);
        continue;
      }
      records.add(new String[] {key[0], key[1], key[2], parts[1].trim(), file + ":" + (n + 1)});
    }
    boolean[] used = new boolean[records.size()];
    for (Hunk h : hunks) {
      for (int r = 0; r < records.size(); r++) {
        String[] rec = records.get(r);
        if (rec[0].equals(h.patch) && rec[1].equals(h.file) && rec[2].equals(h.id)) {
          h.reason = rec[3];
          used[r] = true;
        }
      }
      if (h.reason == null) {
        problems.add(h.patch + ": " + h.file + " differs from " + h.release + " (its"
            + " Applied-Upstream) in hunk " + h.id + ", which " + file.getFileName()
            + " does not record ('-' the series, '+' " + h.release + "):\n      "
            + String.join("\n      ", h.lines)
            + "\n    Make the patch match the release (series:export, edit, series:refresh), or,"
            + " if the difference is intended, add to " + file + ":\n      " + h.record("<why>"));
      }
    }
    for (int r = 0; r < records.size(); r++) {
      if (!used[r]) {
        String[] rec = records.get(r);
        problems.add(rec[4] + ": records hunk " + rec[2] + " of " + rec[1] + " for " + rec[0]
            + ", but no such hunk differs any more; remove the line.");
      }
    }
    return problems;
  }

  /** The hunks for the build log: each with its id and its reason, or that none is recorded. */
  static List<String> report(List<Hunk> hunks) {
    List<String> out = new ArrayList<>();
    for (Hunk h : hunks) {
      out.add(h.patch + " " + h.file + " " + h.id + " vs " + h.release + ": "
          + (h.reason == null ? "NOT RECORDED" : h.reason));
      for (String l : h.lines) {
        out.add("    " + l);
      }
    }
    return out;
  }
}
