package dev.forkset.series;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipFile;

/**
 * Where each patch of a series stands: does it apply to its line, is it forwarded upstream, and
 * does a given upstream version already contain it.
 *
 * <ol>
 *   <li><b>Applies</b>: the series applied in order, strictly, as the build does; a patch that
 *       fails is reported and the next ones are tried on what the earlier ones left.
 *   <li><b>Contained in another version</b>: each file a patch changes under the main sources
 *       is undone (reverse-applied) on that version's sources jar, with no fuzz but any offset,
 *       since upstream moves code around a merged change. Every file undoes: contained; some:
 *       partly; none: not contained. Tests a patch adds are not in a sources jar and are left out.
 *   <li><b>Applies to another version</b>: the series applied in order to that version's sources
 *       jar, as a new line for that version would build it.
 * </ol>
 */
final class SeriesStatus {
  /** One patch's row. */
  static final class Row {
    final String patch;
    final String form;
    final String upstream;
    final String forwarded;
    String applies;
    String contained = "";
    String appliesThere = "";
    /** Why it does not apply here or there, in full. */
    final List<String> why = new ArrayList<>();

    Row(Series.Patch p) {
      patch = p.name;
      form = p.header.form() == Dep3Header.Form.MAIL ? "mail" : "old form";
      upstream = p.header.upstream();
      forwarded = p.header.forwarded();
    }
  }

  private SeriesStatus() {}

  /**
   * The rows of {@code series} on {@code jar}, and with {@code against} (null for none) whether
   * that version contains each patch and whether the series applies to it.
   */
  static List<Row> of(Series series, ZipFile jar, ZipFile against, String mainRoot, String testRoot)
      throws IOException {
    List<Row> rows = new ArrayList<>();
    Series.Tree tree = new Series.Tree(jar, mainRoot, testRoot);
    Series.Tree there = against == null ? null : new Series.Tree(against, mainRoot, testRoot);
    for (Series.Patch p : series.patches()) {
      Row row = new Row(p);
      row.applies = apply(tree, p, row, "");
      if (against != null) {
        row.contained = contained(p, against, mainRoot, testRoot);
        row.appliesThere = apply(there, p, row, " (against)");
      }
      rows.add(row);
    }
    return rows;
  }

  private static String apply(Series.Tree tree, Series.Patch p, Row row, String where)
      throws IOException {
    int notes = tree.notes.size();
    try {
      tree.apply(p);
      return tree.notes.size() > notes ? "yes (made against other file versions)" : "yes";
    } catch (PatchFailure e) {
      row.why.add(where + e.getMessage());
      return "no (see below)";
    }
  }

  private static String contained(Series.Patch p, ZipFile against, String mainRoot,
      String testRoot) throws IOException {
    Map<String, Series.Patch> byFile = new LinkedHashMap<>();
    for (UnifiedDiff.FileDiff f : p.files) {
      if (f.path().startsWith(mainRoot)) {
        byFile.putIfAbsent(f.path(), p.only(g -> g.path().equals(f.path())));
      }
    }
    if (byFile.isEmpty()) {
      return "n/a (adds tests only)";
    }
    int undone = 0;
    for (Series.Patch one : byFile.values()) {
      try {
        new Series.Tree(against, mainRoot, testRoot).apply(one, Integer.MAX_VALUE, true);
        undone++;
      } catch (PatchFailure e) {
        // this file does not hold the patch's change
      }
    }
    return undone == byFile.size() ? "yes"
        : undone == 0 ? "no" : "partly (" + undone + " of " + byFile.size() + " files)";
  }

  /** The rows as a table for the build log. */
  static List<String> table(List<Row> rows, String version, String againstVersion) {
    List<String[]> cells = new ArrayList<>();
    List<String> head = new ArrayList<>(List.of("patch", "form", "applies to " + version,
        "upstream", "forwarded"));
    if (againstVersion != null) {
      head.add("in " + againstVersion);
      head.add("applies to " + againstVersion);
    }
    cells.add(head.toArray(new String[0]));
    for (Row r : rows) {
      List<String> c = new ArrayList<>(List.of(r.patch, r.form, r.applies, r.upstream, r.forwarded));
      if (againstVersion != null) {
        c.add(r.contained);
        c.add(r.appliesThere);
      }
      cells.add(c.toArray(new String[0]));
    }
    List<String> why = new ArrayList<>();
    for (Row r : rows) {
      for (String w : r.why) {
        String against = " (against)";
        why.add(w.startsWith(against) ? "On " + againstVersion + ": " + w.substring(against.length())
            : "On " + version + ": " + w);
      }
    }
    int[] width = new int[head.size()];
    for (String[] row : cells) {
      for (int k = 0; k < row.length; k++) {
        width[k] = Math.max(width[k], Math.min(row[k].length(), 60));
      }
    }
    List<String> out = new ArrayList<>();
    for (int r = 0; r < cells.size(); r++) {
      StringBuilder b = new StringBuilder("|");
      for (int k = 0; k < width.length; k++) {
        b.append(' ').append(String.format("%-" + width[k] + "s", cells.get(r)[k])).append(" |");
      }
      out.add(b.toString());
      if (r == 0) {
        StringBuilder rule = new StringBuilder("|");
        for (int w : width) {
          rule.append("-".repeat(w + 2)).append('|');
        }
        out.add(rule.toString());
      }
    }
    for (String w : why) {
      out.addAll(List.of(w.split("\n")));
    }
    return out;
  }
}
