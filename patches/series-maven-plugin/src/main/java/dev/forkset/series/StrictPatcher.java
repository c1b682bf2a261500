package dev.forkset.series;

import java.util.ArrayList;
import java.util.List;

/**
 * Applies one file section of a diff with no fuzz, byte for byte.
 *
 * <ol>
 *   <li>Lines are compared with their terminators: a {@code \r} is part of the line, and a line
 *       without {@code \n} (the end of a file, marked {@code \ No newline at end of file} in the
 *       diff) matches only itself. So CRLF files and missing final newlines come out exactly.
 *   <li>Every context and removed line must match. A hunk may sit at most {@code maxOffset} lines
 *       away from where its header says (after the shift of the hunks before it); anything else
 *       is a reject, and the failure names the patch, the file, the hunk and the differing line.
 *   <li>A new file must not exist; a deleted file must hold exactly what the hunk removes.
 * </ol>
 */
public final class StrictPatcher {
  private StrictPatcher() {}

  /**
   * Returns the content of {@code file}'s path after the section: {@code before} (null when the
   * file does not exist) with the hunks applied, or null when the section deletes the file.
   */
  public static String apply(String patchName, UnifiedDiff.FileDiff file, String before,
      int maxOffset) throws PatchFailure {
    String at = patchName + ": " + file.path();
    switch (file.change) {
      case ADD: {
        if (before != null) {
          throw new PatchFailure(at + ": the patch creates it, but it exists already.");
        }
        return file.hunks.isEmpty() ? "" : String.join("", file.hunks.get(0).newLines());
      }
      case DELETE: {
        if (before == null) {
          throw new PatchFailure(at + ": the patch deletes it, but it does not exist.");
        }
        List<String> expected = file.hunks.isEmpty() ? List.of() : file.hunks.get(0).oldLines();
        List<String> have = Text.lines(before);
        for (int k = 0; k < Math.max(expected.size(), have.size()); k++) {
          String e = k < expected.size() ? expected.get(k) : null;
          String h = k < have.size() ? have.get(k) : null;
          if (e == null || !e.equals(h)) {
            throw new PatchFailure(at + ": the patch deletes it, but line " + (k + 1) + " is\n    "
                + show(h) + "\n  where the patch removes\n    " + show(e)
                + "\n  The file changed under the patch; refresh it (docs/building.md).");
          }
        }
        return null;
      }
      default:
        if (before == null) {
          throw new PatchFailure(at + ": the patch changes it, but it does not exist.");
        }
        return String.join("", hunks(patchName, file, Text.lines(before), maxOffset));
    }
  }

  /** Returns {@code original} (lines with their terminators) with the hunks of {@code file} applied. */
  static List<String> hunks(String patchName, UnifiedDiff.FileDiff file, List<String> original,
      int maxOffset) throws PatchFailure {
    List<String> out = new ArrayList<>(original);
    int shift = 0; // lines added minus removed by the hunks applied so far
    int floor = 0; // hunks must not overlap or go backwards
    for (UnifiedDiff.Hunk hunk : file.hunks) {
      List<String> oldLines = hunk.oldLines();
      List<String> newLines = hunk.newLines();
      int expected = hunk.oldIndex() + shift;
      int at = -1;
      int reach = Math.min(maxOffset, out.size() + oldLines.size());
      for (int d = 0; d <= reach && at < 0; d++) {
        if (matches(out, expected - d, oldLines, floor, hunk)) {
          at = expected - d;
        } else if (d > 0 && matches(out, expected + d, oldLines, floor, hunk)) {
          at = expected + d;
        }
      }
      if (at < 0) {
        throw new PatchFailure(reject(patchName, file, hunk, out, expected, oldLines, maxOffset));
      }
      for (int k = 0; k < oldLines.size(); k++) {
        out.remove(at);
      }
      out.addAll(at, newLines);
      floor = at + newLines.size();
      shift += newLines.size() - oldLines.size();
    }
    return out;
  }

  private static boolean matches(List<String> text, int at, List<String> oldLines, int floor,
      UnifiedDiff.Hunk hunk) {
    if (at < floor || at + oldLines.size() > text.size()) {
      return false;
    }
    // A new side that ends without a newline ends the file: nothing may follow the hunk.
    if ((hunk.newNoNewline || hunk.oldNoNewline) && at + oldLines.size() != text.size()) {
      return false;
    }
    // Lines added after an old last line that lacks its newline would be glued onto it.
    if (oldLines.isEmpty() && at == text.size() && at > 0 && !text.get(at - 1).endsWith("\n")) {
      return false;
    }
    for (int k = 0; k < oldLines.size(); k++) {
      if (!text.get(at + k).equals(oldLines.get(k))) {
        return false;
      }
    }
    return true;
  }

  private static String show(String line) {
    if (line == null) {
      return "<end of file>";
    }
    String s = line;
    String note = "";
    if (s.endsWith("\n")) {
      s = s.substring(0, s.length() - 1);
    } else {
      note = " (no newline at end of file)";
    }
    if (s.endsWith("\r")) {
      s = s.substring(0, s.length() - 1);
      note = " (CRLF)" + note;
    }
    return "'" + s + "'" + note;
  }

  private static String reject(String patchName, UnifiedDiff.FileDiff file, UnifiedDiff.Hunk hunk,
      List<String> text, int expected, List<String> oldLines, int maxOffset) {
    StringBuilder why = new StringBuilder();
    why.append(patchName).append(": ").append(file.path()).append(": hunk #").append(hunk.number)
        .append(" (").append(hunk.header).append(") does not apply");
    int found = find(text, oldLines, hunk);
    if (found >= 0) {
      int off = Math.abs(found - expected);
      why.append(": its lines are at line ").append(found + 1).append(", ")
          .append(off).append(off == 1 ? " line" : " lines").append(" from where the diff says, and the")
          .append(" header allows Max-Offset: ").append(maxOffset);
    } else {
      for (int k = 0; k < Math.max(oldLines.size(), 1); k++) {
        int line = expected + k;
        String have = line >= 0 && line < text.size() ? text.get(line) : null;
        String want = k < oldLines.size() ? oldLines.get(k) : null;
        if (want == null) {
          why.append(": the file has ").append(text.size()).append(" lines, the hunk inserts after")
              .append(" line ").append(expected);
          break;
        }
        if (have == null || !have.equals(want)) {
          why.append(": line ").append(line + 1).append(" is\n    ").append(show(have))
              .append("\n  but the patch expects\n    ").append(show(want));
          break;
        }
        if (k == oldLines.size() - 1) {
          why.append(": the lines match but the hunk ends the file (no newline at end of file)"
              + " and the file goes on after line ").append(line + 1);
        }
      }
    }
    why.append(".\n  The upstream source changed under this patch (fuzz is never allowed)."
        + " Refresh it as docs/building.md (\"Refreshing a patch\") describes.");
    return why.toString();
  }

  private static int find(List<String> text, List<String> needle, UnifiedDiff.Hunk hunk) {
    if (needle.isEmpty()) {
      return -1;
    }
    for (int i = 0; i + needle.size() <= text.size(); i++) {
      if (matches(text, i, needle, 0, hunk)) {
        return i;
      }
    }
    return -1;
  }
}
