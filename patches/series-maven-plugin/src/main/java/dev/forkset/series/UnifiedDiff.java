package dev.forkset.series;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The file sections and hunks of a {@code -p1} unified diff, as {@code git format-patch} writes them. */
public final class UnifiedDiff {
  private static final Pattern HUNK =
      Pattern.compile("^@@ -(\\d+)(?:,(\\d+))? \\+(\\d+)(?:,(\\d+))? @@.*$");

  /** One file of the diff. {@code oldPath} is null for a new file. Paths have the a/ b/ dropped. */
  public static final class FileDiff {
    public final String oldPath;
    public final String newPath;
    public final List<Hunk> hunks = new ArrayList<>();

    FileDiff(String oldPath, String newPath) {
      this.oldPath = oldPath;
      this.newPath = newPath;
    }

    public boolean isNewFile() {
      return oldPath == null;
    }
  }

  /** One hunk: its header as written and its lines with their ' ', '-' or '+' marker. */
  public static final class Hunk {
    public final int number;
    public final String header;
    public final int oldStart;
    public final int oldCount;
    public final int newCount;
    public final List<String> lines = new ArrayList<>();
    boolean oldEndsWithoutNewline;
    boolean newEndsWithoutNewline;

    Hunk(int number, String header, int oldStart, int oldCount, int newCount) {
      this.number = number;
      this.header = header;
      this.oldStart = oldStart;
      this.oldCount = oldCount;
      this.newCount = newCount;
    }

    List<String> oldLines() {
      List<String> out = new ArrayList<>();
      for (String l : lines) {
        if (l.charAt(0) != '+') {
          out.add(l.substring(1));
        }
      }
      return out;
    }

    List<String> newLines() {
      List<String> out = new ArrayList<>();
      for (String l : lines) {
        if (l.charAt(0) != '-') {
          out.add(l.substring(1));
        }
      }
      return out;
    }
  }

  private UnifiedDiff() {}

  /** Parses every file section of {@code text}; anything before the first section is ignored. */
  public static List<FileDiff> parse(String patchName, String text) throws PatchFailure {
    String[] lines = text.split("\n", -1);
    List<FileDiff> files = new ArrayList<>();
    int i = 0;
    while (i < lines.length) {
      if (!(lines[i].startsWith("--- ") && i + 1 < lines.length && lines[i + 1].startsWith("+++ "))) {
        i++;
        continue;
      }
      String oldPath = path(patchName, lines[i].substring(4), "a/");
      String newPath = path(patchName, lines[i + 1].substring(4), "b/");
      if (newPath == null) {
        throw new PatchFailure(patchName + ": deletes " + oldPath + "; the pipeline overlays"
            + " classes on the upstream jar and cannot delete a file. Change the file instead.");
      }
      if (oldPath != null && !oldPath.equals(newPath)) {
        throw new PatchFailure(patchName + ": renames " + oldPath + " to " + newPath
            + "; renames are not supported. Add the new file and change callers instead.");
      }
      FileDiff file = new FileDiff(oldPath, newPath);
      files.add(file);
      i += 2;
      while (i < lines.length && lines[i].startsWith("@@")) {
        Matcher m = HUNK.matcher(lines[i]);
        if (!m.matches()) {
          throw new PatchFailure(patchName + ": " + newPath + ": malformed hunk header '" + lines[i]
              + "'. Regenerate the patch with git format-patch.");
        }
        int oldCount = m.group(2) == null ? 1 : Integer.parseInt(m.group(2));
        int newCount = m.group(4) == null ? 1 : Integer.parseInt(m.group(4));
        Hunk hunk = new Hunk(file.hunks.size() + 1, lines[i], Integer.parseInt(m.group(1)),
            oldCount, newCount);
        i++;
        int seenOld = 0;
        int seenNew = 0;
        while (i < lines.length && (seenOld < oldCount || seenNew < newCount)) {
          String l = lines[i];
          char c = l.isEmpty() ? ' ' : l.charAt(0);
          if (l.isEmpty()) {
            l = " "; // an empty context line whose leading space an editor removed
          }
          if (c == '\\') {
            i++;
            continue;
          }
          if (c != ' ' && c != '-' && c != '+') {
            break;
          }
          hunk.lines.add(l);
          if (c != '+') {
            seenOld++;
          }
          if (c != '-') {
            seenNew++;
          }
          i++;
        }
        while (i < lines.length && lines[i].startsWith("\\")) {
          markNoNewline(hunk);
          i++;
        }
        if (seenOld != oldCount || seenNew != newCount) {
          throw new PatchFailure(patchName + ": " + newPath + ": hunk #" + hunk.number + " ("
              + hunk.header + ") is truncated: it says " + oldCount + " old and " + newCount
              + " new lines but has " + seenOld + " and " + seenNew
              + ". The patch was edited by hand or cut off; regenerate it.");
        }
        file.hunks.add(hunk);
      }
      if (file.hunks.isEmpty()) {
        throw new PatchFailure(patchName + ": " + newPath + " has no hunks. Binary and mode-only"
            + " changes are not supported.");
      }
    }
    if (files.isEmpty()) {
      throw new PatchFailure(patchName + ": contains no diff. A patch is a DEP-3 header, a blank"
          + " line and a -p1 unified diff (git format-patch output).");
    }
    return files;
  }

  private static void markNoNewline(Hunk hunk) {
    String last = hunk.lines.get(hunk.lines.size() - 1);
    if (last.charAt(0) != '+') {
      hunk.oldEndsWithoutNewline = true;
    }
    if (last.charAt(0) != '-') {
      hunk.newEndsWithoutNewline = true;
    }
  }

  private static String path(String patchName, String raw, String prefix) throws PatchFailure {
    String p = raw;
    int tab = p.indexOf('\t');
    if (tab >= 0) {
      p = p.substring(0, tab);
    }
    p = p.trim();
    if (p.equals("/dev/null")) {
      return null;
    }
    if (!p.startsWith(prefix)) {
      throw new PatchFailure(patchName + ": path '" + p + "' does not start with " + prefix
          + "; patches are applied with -p1 (git format-patch output).");
    }
    return p.substring(prefix.length());
  }
}
