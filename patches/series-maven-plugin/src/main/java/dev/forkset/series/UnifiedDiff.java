package dev.forkset.series;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The file sections and hunks of a {@code -p1} diff as {@code git diff}/{@code git format-patch}
 * write it. Every line is classified; nothing is skipped:
 *
 * <ol>
 *   <li>A {@code diff --git} section may carry the extended header lines git writes. New and
 *       deleted files (mode 100644, with or without content) and {@code dissimilarity index} are
 *       understood; binary patches, renames, copies, mode changes and other modes (executable,
 *       symlink, submodule) fail, naming the patch, the path and the construct, because a custom
 *       jar is built from Java sources only.
 *   <li>{@code \ No newline at end of file} is applied to the side it follows: a hunk line keeps
 *       its {@code \n} unless the marker follows it, so both a missing and an added final newline
 *       come out exactly. A {@code \r} before the {@code \n} is part of the line.
 *   <li>A hunk must hold exactly the lines its header counts; a hunk header whose new start does
 *       not follow from the hunks before it, or hunks out of order, fail.
 *   <li>Any line outside a section (other than the {@code -- } signature git appends and blank
 *       lines at the end) fails instead of being skipped.
 *   <li>Plain {@code diff -u} sections ({@code ---}/{@code +++} without {@code diff --git}) are read
 *       only from patches in the old DEP-3-first form, so that they can be converted.
 * </ol>
 */
public final class UnifiedDiff {
  private static final Pattern HUNK =
      Pattern.compile("^@@ -(\\d+)(?:,(\\d+))? \\+(\\d+)(?:,(\\d+))? @@.*$");
  private static final Pattern INDEX =
      Pattern.compile("^index ([0-9a-f]{7,40})\\.\\.([0-9a-f]{7,40})(?: ([0-7]{6}))?$");
  /** The only file mode a source file in a jar can have. */
  static final String REGULAR = "100644";
  /** Blob id of the empty file. */
  static final String EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

  /** What a section does to its file. */
  public enum Change { MODIFY, ADD, DELETE }

  /** One file of the diff. Paths have the a/ b/ dropped; the missing side is null. */
  public static final class FileDiff {
    public final String oldPath;
    public final String newPath;
    public final Change change;
    /** Blob ids from the {@code index} line (7 to 40 hex digits), or null without one. */
    public final String oldId;
    public final String newId;
    /** Line of the patch where the section starts (1-based). */
    public final int line;
    public final List<Hunk> hunks = new ArrayList<>();

    FileDiff(String oldPath, String newPath, Change change, String oldId, String newId, int line) {
      this.oldPath = oldPath;
      this.newPath = newPath;
      this.change = change;
      this.oldId = oldId;
      this.newId = newId;
      this.line = line;
    }

    /** The path the section is about. */
    public String path() {
      return newPath != null ? newPath : oldPath;
    }

    public boolean isNewFile() {
      return change == Change.ADD;
    }

    public boolean isDeletedFile() {
      return change == Change.DELETE;
    }

    /** This section with old and new swapped: what undoes it. */
    FileDiff reversed() {
      Change back = change == Change.ADD ? Change.DELETE
          : change == Change.DELETE ? Change.ADD : Change.MODIFY;
      FileDiff r = new FileDiff(newPath, oldPath, back, newId, oldId, line);
      for (Hunk h : hunks) {
        r.hunks.add(h.reversed());
      }
      return r;
    }
  }

  /** One hunk: its header, its lines as written, and each side's lines with their terminators. */
  public static final class Hunk {
    public final int number;
    public final String header;
    public final int oldStart;
    public final int oldCount;
    public final int newStart;
    public final int newCount;
    /** The hunk's lines as in the patch, marker first, without their {@code \n}. */
    public final List<String> lines = new ArrayList<>();
    final List<String> oldLines = new ArrayList<>();
    final List<String> newLines = new ArrayList<>();
    boolean oldNoNewline;
    boolean newNoNewline;

    Hunk(int number, String header, int oldStart, int oldCount, int newStart, int newCount) {
      this.number = number;
      this.header = header;
      this.oldStart = oldStart;
      this.oldCount = oldCount;
      this.newStart = newStart;
      this.newCount = newCount;
    }

    /** The old side's lines, each with its {@code \n} unless the file ends there without one. */
    List<String> oldLines() {
      return oldLines;
    }

    List<String> newLines() {
      return newLines;
    }

    /** 0-based index of the first old line (for an insertion: of the line it goes before). */
    int oldIndex() {
      return oldCount == 0 ? oldStart : oldStart - 1;
    }

    Hunk reversed() {
      Hunk r = new Hunk(number, header, newStart, newCount, oldStart, oldCount);
      r.oldLines.addAll(newLines);
      r.newLines.addAll(oldLines);
      r.oldNoNewline = newNoNewline;
      r.newNoNewline = oldNoNewline;
      for (String l : lines) {
        char c = l.isEmpty() ? ' ' : l.charAt(0);
        r.lines.add(c == '-' ? "+" + l.substring(1) : c == '+' ? "-" + l.substring(1) : l);
      }
      return r;
    }
  }

  private final String patch;
  private final List<String> lines;
  private final boolean plainAllowed;
  private int i;
  /** The file whose hunks were read last, to explain a line that follows them. */
  private FileDiff lastFile;

  private UnifiedDiff(String patch, List<String> lines, int from, boolean plainAllowed) {
    this.patch = patch;
    this.lines = lines;
    this.i = from;
    this.plainAllowed = plainAllowed;
  }

  /**
   * Parses {@code lines} (a patch's lines without their {@code \n}) from index {@code from} to the
   * end. {@code plainAllowed} also accepts plain {@code diff -u} sections (old-form patches).
   */
  static List<FileDiff> parse(String patchName, List<String> lines, int from, boolean plainAllowed)
      throws PatchFailure {
    return new UnifiedDiff(patchName, lines, from, plainAllowed).sections();
  }

  /** Parses a whole text that holds only a diff (plain sections accepted); for tests and tools. */
  public static List<FileDiff> parse(String patchName, String diff) throws PatchFailure {
    return parse(patchName, Text.rawLines(diff), 0, true);
  }

  private PatchFailure failure(int index, String what) {
    return new PatchFailure(patch + ": line " + (index + 1) + ": " + what);
  }

  private List<FileDiff> sections() throws PatchFailure {
    List<FileDiff> files = new ArrayList<>();
    while (i < lines.size()) {
      String l = lines.get(i);
      if (l.startsWith("diff --git ")) {
        files.add(gitSection());
      } else if (plainAllowed && l.startsWith("--- ") && i + 1 < lines.size()
          && lines.get(i + 1).startsWith("+++ ")) {
        files.add(plainSection());
      } else if (plainAllowed && l.startsWith("diff ") && i + 1 < lines.size()
          && lines.get(i + 1).startsWith("--- ")) {
        i++; // the command line 'diff -ruN a/x b/x' that diff -r prints before a section
      } else if (l.startsWith("Only in ")) {
        throw failure(i, "'" + l + "': the diff was made without -N, so a new or deleted file"
            + " is missing from it. Regenerate the patch with git format-patch.");
      } else if (isTrailer(i)) {
        break;
      } else if (lastFile != null && !lastFile.hunks.isEmpty() && !l.isEmpty()
          && " +-".indexOf(l.charAt(0)) >= 0) {
        Hunk h = lastFile.hunks.get(lastFile.hunks.size() - 1);
        throw failure(i, "'" + l + "' follows hunk #" + h.number + " (" + h.header + ") of "
            + lastFile.path() + ", which its header counts as complete (" + h.oldCount + " old and "
            + h.newCount + " new lines). The patch was edited by hand; nothing is skipped, so"
            + " regenerate it with git format-patch (or series:refresh).");
      } else {
        throw failure(i, "'" + l + "' belongs to no file section of the diff (a 'diff --git'"
            + " header, its ---/+++ lines and hunks). The patch was edited by hand or cut;"
            + " nothing is skipped, so regenerate it with git format-patch (or series:refresh).");
      }
    }
    if (files.isEmpty()) {
      throw new PatchFailure(patch + ": contains no diff. A patch is a git format-patch message:"
          + " mail header, message with the DEP-3 fields, '---', diffstat and the diff; see"
          + " patches/README.md.");
    }
    return files;
  }

  /** The signature git format-patch appends ("-- ", its version), then only blank lines. */
  private boolean isTrailer(int from) {
    int k = from;
    if (lines.get(k).equals("-- ")) {
      k += 2;
    }
    for (; k < lines.size(); k++) {
      if (!lines.get(k).isEmpty()) {
        return false;
      }
    }
    return true;
  }

  private FileDiff gitSection() throws PatchFailure {
    int start = i;
    String header = lines.get(i);
    String names = header.substring("diff --git ".length());
    if (names.startsWith("\"") || names.endsWith("\"")) {
      throw failure(i, "'" + header + "' has a quoted path (special characters); Java source"
          + " paths never need quoting.");
    }
    String[] ab = splitNames(names);
    String shown = ab != null ? ab[1] : names;
    i++;
    String oldMode = null;
    String newMode = null;
    String newFileMode = null;
    String deletedMode = null;
    String renameFrom = null;
    String renameTo = null;
    String copyFrom = null;
    String copyTo = null;
    String indexMode = null;
    String oldId = null;
    String newId = null;
    boolean binary = false;
    for (; i < lines.size(); i++) {
      String l = lines.get(i);
      if (l.startsWith("old mode ")) {
        oldMode = l.substring(9);
      } else if (l.startsWith("new mode ")) {
        newMode = l.substring(9);
      } else if (l.startsWith("deleted file mode ")) {
        deletedMode = l.substring(18);
      } else if (l.startsWith("new file mode ")) {
        newFileMode = l.substring(14);
      } else if (l.startsWith("rename from ") || l.startsWith("rename old ")) {
        renameFrom = l.substring(l.indexOf(' ', 7) + 1);
      } else if (l.startsWith("rename to ") || l.startsWith("rename new ")) {
        renameTo = l.substring(l.indexOf(' ', 7) + 1);
      } else if (l.startsWith("copy from ")) {
        copyFrom = l.substring(10);
      } else if (l.startsWith("copy to ")) {
        copyTo = l.substring(8);
      } else if (l.matches("(dis)?similarity index \\d{1,3}%")) {
        continue; // information only: renames and copies fail below, a rewrite is a modification
      } else if (l.startsWith("index ")) {
        Matcher m = INDEX.matcher(l);
        if (!m.matches()) {
          throw failure(i, shown + ": malformed index line '" + l + "'.");
        }
        oldId = m.group(1);
        newId = m.group(2);
        indexMode = m.group(3);
      } else if (l.equals("GIT binary patch")
          || (l.startsWith("Binary files ") && l.endsWith(" differ"))) {
        binary = true;
        break;
      } else if (l.startsWith("--- ") || l.startsWith("@@") || l.startsWith("diff --git ")
          || isTrailer(i)) {
        break;
      } else {
        throw failure(i, shown + ": '" + l + "' is not a line git writes in a 'diff --git' header;"
            + " the section cannot be classified, so the build stops instead of skipping it.");
      }
    }
    String at = patch + ": line " + (start + 1) + ": ";
    if (binary) {
      throw new PatchFailure(at + "a binary patch of " + shown + ". A custom jar is compiled from"
          + " Java sources; binary files cannot be patched. Keep binary data out of the series.");
    }
    if (renameFrom != null || renameTo != null) {
      throw new PatchFailure(at + "renames " + renameFrom + " to " + renameTo + ". Renames are"
          + " not supported: the upstream class must stay (code compiled against it links to it)."
          + " Add the new file and keep or change the old one instead.");
    }
    if (copyFrom != null || copyTo != null) {
      throw new PatchFailure(at + "copies " + copyFrom + " to " + copyTo + ". Copies are not"
          + " supported; regenerate the patch with --no-renames (git format-patch) so the new file"
          + " is written out in full.");
    }
    if (oldMode != null || newMode != null) {
      throw new PatchFailure(at + "changes the mode of " + shown + " from " + oldMode + " to "
          + newMode + ". A jar has no file modes; drop the mode change (git config"
          + " core.fileMode, git update-index --chmod=-x) and regenerate the patch.");
    }
    for (String mode : new String[] {newFileMode, deletedMode, indexMode}) {
      if (mode != null && !mode.equals(REGULAR)) {
        throw new PatchFailure(at + shown + " has mode " + mode + " (" + modeName(mode)
            + "); only regular files (" + REGULAR + ") can be patched.");
      }
    }
    if (newFileMode != null && deletedMode != null) {
      throw new PatchFailure(at + shown + " is both a new and a deleted file.");
    }
    Change change = newFileMode != null ? Change.ADD
        : deletedMode != null ? Change.DELETE : Change.MODIFY;
    FileDiff file;
    if (i < lines.size() && lines.get(i).startsWith("--- ")) {
      if (i + 1 >= lines.size() || !lines.get(i + 1).startsWith("+++ ")) {
        throw failure(i, shown + ": '---' line without a '+++' line after it.");
      }
      String oldPath = path(i, lines.get(i).substring(4), "a/");
      String newPath = path(i + 1, lines.get(i + 1).substring(4), "b/");
      check(start, change, oldPath, newPath, ab);
      file = new FileDiff(oldPath, newPath, change, oldId, newId, start + 1);
      i += 2;
      hunks(file);
    } else {
      if (ab == null) {
        throw new PatchFailure(at + "cannot tell the path from '" + header + "'.");
      }
      if (change == Change.MODIFY) {
        throw new PatchFailure(at + shown + ": the section changes nothing that can be applied"
            + " (no hunks). Regenerate the patch with git format-patch.");
      }
      String id = change == Change.ADD ? newId : oldId;
      if (id != null && !EMPTY_BLOB.startsWith(id)) {
        throw new PatchFailure(at + shown + ": a " + (change == Change.ADD ? "new" : "deleted")
            + " file without content lines, but its index line names blob " + id + ", not the"
            + " empty file. The content was cut from the patch; regenerate it.");
      }
      file = new FileDiff(change == Change.ADD ? null : ab[0], change == Change.DELETE ? null : ab[1],
          change, oldId, newId, start + 1);
    }
    return file;
  }

  private static String modeName(String mode) {
    switch (mode) {
      case "100755":
        return "executable";
      case "120000":
        return "symbolic link";
      case "160000":
        return "submodule";
      default:
        return "not a regular file";
    }
  }

  /** Splits "a/P b/P" (git's header for a section without rename) into P and P. */
  private static String[] splitNames(String names) {
    if (names.startsWith("a/") && (names.length() - 5) % 2 == 0 && names.length() > 5) {
      int p = (names.length() - 5) / 2;
      String a = names.substring(2, 2 + p);
      if (names.substring(2 + p).equals(" b/" + a)) {
        return new String[] {a, a};
      }
    }
    int b = names.indexOf(" b/");
    if (names.startsWith("a/") && b > 0 && names.indexOf(" b/", b + 1) < 0) {
      return new String[] {names.substring(2, b), names.substring(b + 3)};
    }
    return null;
  }

  private void check(int start, Change change, String oldPath, String newPath, String[] ab)
      throws PatchFailure {
    String at = patch + ": line " + (start + 1) + ": ";
    if (change == Change.ADD && oldPath != null) {
      throw new PatchFailure(at + "'new file mode' but '--- a/" + oldPath + "' (expected"
          + " '--- /dev/null').");
    }
    if (change == Change.DELETE && newPath != null) {
      throw new PatchFailure(at + "'deleted file mode' but '+++ b/" + newPath + "' (expected"
          + " '+++ /dev/null').");
    }
    if (change == Change.MODIFY && (oldPath == null || newPath == null)) {
      throw new PatchFailure(at + "'/dev/null' on the ---/+++ lines of " + (oldPath == null ? newPath
          : oldPath) + " without a 'new file mode' or 'deleted file mode' line.");
    }
    if (oldPath != null && newPath != null && !oldPath.equals(newPath)) {
      throw new PatchFailure(at + "renames " + oldPath + " to " + newPath + ". Renames are not"
          + " supported; add the new file and keep or change the old one instead.");
    }
    String p = newPath != null ? newPath : oldPath;
    if (ab != null && !(ab[0].equals(p) && ab[1].equals(p))) {
      throw new PatchFailure(at + "the 'diff --git' line names " + ab[0] + " and " + ab[1]
          + " but the ---/+++ lines name " + p + ".");
    }
  }

  private FileDiff plainSection() throws PatchFailure {
    int start = i;
    String oldPath = path(i, lines.get(i).substring(4), "a/");
    String newPath = path(i + 1, lines.get(i + 1).substring(4), "b/");
    if (oldPath == null && newPath == null) {
      throw failure(i, "both sides are /dev/null.");
    }
    if (oldPath != null && newPath != null && !oldPath.equals(newPath)) {
      throw failure(i, "renames " + oldPath + " to " + newPath + ". Renames are not supported;"
          + " add the new file and keep or change the old one instead.");
    }
    Change change = oldPath == null ? Change.ADD : newPath == null ? Change.DELETE : Change.MODIFY;
    FileDiff file = new FileDiff(oldPath, newPath, change, null, null, start + 1);
    i += 2;
    hunks(file);
    return file;
  }

  private String path(int index, String raw, String prefix) throws PatchFailure {
    String p = raw;
    int tab = p.indexOf('\t');
    if (tab >= 0) {
      p = p.substring(0, tab); // diff -u appends a time stamp; git a tab after paths with spaces
    }
    if (p.endsWith("\r")) {
      throw failure(index, "ends with a carriage return: the patch file was converted to CRLF"
          + " line endings. Patches are kept byte-exact (patches/.gitattributes: -text); restore"
          + " the file with git checkout.");
    }
    if (p.equals("/dev/null")) {
      return null;
    }
    if (!p.startsWith(prefix)) {
      throw failure(index, "path '" + p + "' does not start with " + prefix + "; patches are"
          + " applied with -p1 (git format-patch output).");
    }
    return p.substring(prefix.length());
  }

  private void hunks(FileDiff file) throws PatchFailure {
    int shift = 0;
    int floor = 0;
    while (i < lines.size() && lines.get(i).startsWith("@@")) {
      Matcher m = HUNK.matcher(lines.get(i));
      if (!m.matches()) {
        throw failure(i, file.path() + ": malformed hunk header '" + lines.get(i) + "'.");
      }
      int oldCount = m.group(2) == null ? 1 : Integer.parseInt(m.group(2));
      int newCount = m.group(4) == null ? 1 : Integer.parseInt(m.group(4));
      Hunk hunk = new Hunk(file.hunks.size() + 1, lines.get(i), Integer.parseInt(m.group(1)),
          oldCount, Integer.parseInt(m.group(3)), newCount);
      String name = file.path() + ": hunk #" + hunk.number + " (" + hunk.header + ")";
      int oldIndex = hunk.oldIndex();
      int newIndex = newCount == 0 ? hunk.newStart : hunk.newStart - 1;
      if (oldIndex < floor) {
        throw failure(i, name + " starts before the end of the hunk before it.");
      }
      if (newIndex != oldIndex + shift) {
        throw failure(i, name + ": its new start +" + hunk.newStart + " does not follow from its"
            + " old start and the hunks before it (expected +" + (oldIndex + shift
            + (newCount == 0 ? 0 : 1)) + "). The patch was edited by hand; regenerate it.");
      }
      int headerLine = i;
      i++;
      body(file, hunk, name, headerLine);
      if (file.change == Change.ADD && (hunk.oldCount != 0 || file.hunks.size() > 0)) {
        throw failure(headerLine, name + ": a new file has one hunk with no old lines.");
      }
      if (file.change == Change.DELETE && (hunk.newCount != 0 || file.hunks.size() > 0)) {
        throw failure(headerLine, name + ": a deleted file has one hunk with no new lines.");
      }
      file.hunks.add(hunk);
      floor = oldIndex + oldCount;
      shift += newCount - oldCount;
    }
    if (file.hunks.isEmpty()) {
      throw failure(i - 1, file.path() + ": the ---/+++ lines are followed by no hunk.");
    }
    lastFile = file;
  }

  private void body(FileDiff file, Hunk hunk, String name, int headerLine) throws PatchFailure {
    int seenOld = 0;
    int seenNew = 0;
    char last = 0;
    while (i < lines.size()) {
      String l = lines.get(i);
      char c = l.isEmpty() ? ' ' : l.charAt(0);
      if (c == '\\') {
        if (last == 0 || last == '\\') {
          throw failure(i, name + ": '" + l + "' does not follow a line of the hunk.");
        }
        if (last != '+') {
          hunk.oldNoNewline = true;
          dropNewline(hunk.oldLines);
        }
        if (last != '-') {
          hunk.newNoNewline = true;
          dropNewline(hunk.newLines);
        }
        last = c;
        i++;
        continue;
      }
      if (seenOld == hunk.oldCount && seenNew == hunk.newCount) {
        break;
      }
      if (c != ' ' && c != '-' && c != '+') {
        break;
      }
      boolean old = c != '+';
      boolean neu = c != '-';
      if ((old && seenOld == hunk.oldCount) || (neu && seenNew == hunk.newCount)) {
        throw failure(i, name + ": '" + l + "' does not fit: the header counts " + hunk.oldCount
            + " old and " + hunk.newCount + " new lines. The patch was edited by hand; regenerate"
            + " it.");
      }
      if ((old && hunk.oldNoNewline) || (neu && hunk.newNoNewline)) {
        throw failure(i, name + ": a line follows '\\ No newline at end of file' on the same side.");
      }
      String content = (l.isEmpty() ? "" : l.substring(1)) + "\n";
      hunk.lines.add(l.isEmpty() ? " " : l);
      if (old) {
        hunk.oldLines.add(content);
        seenOld++;
      }
      if (neu) {
        hunk.newLines.add(content);
        seenNew++;
      }
      last = c;
      i++;
    }
    if (seenOld != hunk.oldCount || seenNew != hunk.newCount) {
      throw failure(headerLine, name + " is truncated: it says " + hunk.oldCount + " old and "
          + hunk.newCount + " new lines but has " + seenOld + " and " + seenNew + ". The patch was"
          + " edited by hand or cut off; regenerate it.");
    }
  }

  private static void dropNewline(List<String> side) {
    int k = side.size() - 1;
    side.set(k, side.get(k).substring(0, side.get(k).length() - 1));
  }
}
