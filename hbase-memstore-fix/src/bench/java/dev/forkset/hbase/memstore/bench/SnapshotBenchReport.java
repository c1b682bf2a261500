package dev.forkset.hbase.memstore.bench;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Turns the JMH CSV of {@link SnapshotBench} into a Markdown table and a PNG chart.
 * Arguments: csv file, Markdown output, PNG output.
 */
public final class SnapshotBenchReport {
  private SnapshotBenchReport() {}

  public static void main(String[] args) throws IOException {
    List<String> lines = Files.readAllLines(new File(args[0]).toPath(), StandardCharsets.UTF_8);
    String[] sizes = {"10000", "100000", "1000000"};
    String[] jars = {"stock", "fixed"};
    double[][] score = new double[2][3];
    double[][] error = new double[2][3];
    List<String> header = split(lines.get(0));
    int iScore = header.indexOf("Score");
    int iError = header.indexOf("Score Error (99.9%)");
    int iCells = header.indexOf("Param: cells");
    int iJar = header.indexOf("Param: jar");
    for (String line : lines.subList(1, lines.size())) {
      List<String> f = split(line);
      if (f.size() <= iJar) {
        continue;
      }
      int j = f.get(iJar).equals("stock") ? 0 : 1;
      int s = java.util.Arrays.asList(sizes).indexOf(f.get(iCells));
      score[j][s] = Double.parseDouble(f.get(iScore));
      error[j][s] = f.get(iError).isEmpty() || f.get(iError).equals("NaN") ? 0
          : Double.parseDouble(f.get(iError));
    }
    StringBuilder md = new StringBuilder();
    md.append("| cells | stock 2.1.2 DefaultMemStore (us) | fixed CellCountingMemStore (us) |\n");
    md.append("|---:|---:|---:|\n");
    for (int s = 0; s < sizes.length; s++) {
      md.append(String.format(Locale.ROOT, "| %,d | %.1f ± %.1f | %.1f ± %.1f |%n",
          Integer.parseInt(sizes[s]), score[0][s], error[0][s], score[1][s], error[1][s]));
    }
    md.append("\nJVM: ").append(System.getProperty("java.vm.name")).append(' ')
        .append(System.getProperty("java.version")).append('\n');
    Files.write(new File(args[1]).toPath(), md.toString().getBytes(StandardCharsets.UTF_8));
    System.out.print(md);
    BarChart.write(new File(args[2]), "HBase 2.1.2 memstore snapshot() time, JDK "
        + System.getProperty("java.specification.version") + " (JMH single shot, mean)",
        "microseconds", new String[] {"10^4 cells", "10^5 cells", "10^6 cells"},
        new String[] {"stock DefaultMemStore", "fixed CellCountingMemStore"}, score);
  }

  private static List<String> split(String csvLine) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    boolean quoted = false;
    for (char c : csvLine.toCharArray()) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        out.add(cur.toString());
        cur.setLength(0);
      } else {
        cur.append(c);
      }
    }
    out.add(cur.toString());
    return out;
  }
}
