package dev.forkset.series;

import java.util.ArrayList;
import java.util.List;

/**
 * Applies hunks with no fuzz: every context and removed line must match exactly. A hunk may sit
 * at most {@code maxOffset} lines away from where its header says (after the shift of the hunks
 * before it); anything else is a reject, and the failure names the patch, the file and the hunk.
 */
public final class StrictPatcher {
  private StrictPatcher() {}

  /** Returns {@code original} with the hunks of {@code file} applied. */
  public static List<String> apply(String patchName, UnifiedDiff.FileDiff file,
      List<String> original, int maxOffset) throws PatchFailure {
    List<String> out = new ArrayList<>(original);
    int shift = 0; // lines added minus removed by the hunks applied so far
    int floor = 0; // hunks must not overlap or go backwards
    for (UnifiedDiff.Hunk hunk : file.hunks) {
      List<String> oldLines = hunk.oldLines();
      List<String> newLines = hunk.newLines();
      int expected = (hunk.oldCount == 0 ? hunk.oldStart : hunk.oldStart - 1) + shift;
      int at = -1;
      for (int d = 0; d <= maxOffset && at < 0; d++) {
        if (matches(out, expected - d, oldLines, floor)) {
          at = expected - d;
        } else if (d > 0 && matches(out, expected + d, oldLines, floor)) {
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

  private static boolean matches(List<String> text, int at, List<String> oldLines, int floor) {
    if (at < floor || at + oldLines.size() > text.size()) {
      return false;
    }
    for (int k = 0; k < oldLines.size(); k++) {
      if (!text.get(at + k).equals(oldLines.get(k))) {
        return false;
      }
    }
    return true;
  }

  private static String reject(String patchName, UnifiedDiff.FileDiff file, UnifiedDiff.Hunk hunk,
      List<String> text, int expected, List<String> oldLines, int maxOffset) {
    StringBuilder why = new StringBuilder();
    why.append(patchName).append(": ").append(file.newPath).append(": hunk #").append(hunk.number)
        .append(" (").append(hunk.header).append(") does not apply");
    int found = find(text, oldLines);
    if (found >= 0) {
      why.append(": its lines are at line ").append(found + 1).append(", ")
          .append(Math.abs(found - expected)).append(" lines from where the diff says, and the")
          .append(" header allows Max-Offset: ").append(maxOffset);
    } else {
      for (int k = 0; k < oldLines.size(); k++) {
        int line = expected + k;
        String have = line >= 0 && line < text.size() ? text.get(line) : "<end of file>";
        if (!have.equals(oldLines.get(k))) {
          why.append(": line ").append(line + 1).append(" is\n    '").append(have)
              .append("'\n  but the patch expects\n    '").append(oldLines.get(k)).append("'");
          break;
        }
      }
    }
    why.append(".\n  The upstream source changed under this patch (fuzz is never allowed)."
        + " Refresh it as docs/building.md (\"Refreshing a patch\") describes.");
    return why.toString();
  }

  private static int find(List<String> text, List<String> needle) {
    if (needle.isEmpty()) {
      return -1;
    }
    for (int i = 0; i + needle.size() <= text.size(); i++) {
      if (matches(text, i, needle, 0)) {
        return i;
      }
    }
    return -1;
  }
}
