package dev.forkset.bench;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A benchmark result table, printed as Markdown (the form docs/ uses) and optionally saved next to
 * the chart it belongs to. Numbers are formatted by {@link #num(double, int)} so every table of the
 * project rounds the same way.
 */
public final class ResultTable {
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  public ResultTable(String... header) {
    this.header = Arrays.asList(header);
  }

  /** Adds a row; it must have one cell per column. */
  public ResultTable row(Object... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException("Row has " + cells.length + " cells for "
          + header.size() + " columns: " + Arrays.toString(cells));
    }
    List<String> r = new ArrayList<>();
    for (Object c : cells) {
      r.add(String.valueOf(c));
    }
    rows.add(r);
    return this;
  }

  /** {@code value} with {@code decimals} decimals, Locale.ROOT. */
  public static String num(double value, int decimals) {
    return String.format(Locale.ROOT, "%." + decimals + "f", value);
  }

  /** The table as Markdown, one line per row, ending with a newline. */
  public String toMarkdown() {
    StringBuilder sb = new StringBuilder();
    line(sb, header);
    List<String> rule = new ArrayList<>();
    for (int i = 0; i < header.size(); i++) {
      rule.add("---");
    }
    line(sb, rule);
    for (List<String> r : rows) {
      line(sb, r);
    }
    return sb.toString();
  }

  /** Writes {@link #toMarkdown()} to {@code file} (UTF-8), creating its folder. */
  public void save(File file) throws IOException {
    File dir = file.getAbsoluteFile().getParentFile();
    if (dir != null && !dir.isDirectory() && !dir.mkdirs()) {
      throw new IOException("Cannot create " + dir);
    }
    Files.write(file.toPath(), toMarkdown().getBytes(StandardCharsets.UTF_8));
  }

  private static void line(StringBuilder sb, List<String> cells) {
    sb.append('|');
    for (String c : cells) {
      sb.append(' ').append(c.replace("|", "\\|")).append(" |");
    }
    sb.append('\n');
  }

  @Override
  public String toString() {
    return toMarkdown();
  }
}
