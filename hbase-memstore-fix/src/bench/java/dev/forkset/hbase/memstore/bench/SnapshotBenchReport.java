package dev.forkset.hbase.memstore.bench;

import dev.forkset.bench.Charts;
import dev.forkset.bench.ResultTable;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns the JMH JSON of {@link SnapshotBench} into a Markdown table (median, mean with its error,
 * min and max of the single shots) and a PNG chart of the medians against the cell count.
 * Single shots have outliers (a GC or a descheduled thread inside one shot), so the median is the
 * figure to read. Arguments: JSON file, Markdown output, PNG output.
 */
public final class SnapshotBenchReport {
  private static final String[] SIZES = {"10000", "100000", "1000000"};
  private static final String[] JARS = {"stock", "fixed"};
  private static final String[] SERIES = {"stock 2.1.2", "custom 2.1.2"};

  private SnapshotBenchReport() {}

  public static void main(String[] args) throws IOException {
    String json = new String(Files.readAllBytes(new File(args[0]).toPath()),
        StandardCharsets.UTF_8);
    // [jar][size] -> {median, mean, error, min, max}
    double[][][] v = new double[JARS.length][SIZES.length][];
    String jvm = str(json, "vmName") + " " + str(json, "jdkVersion");
    String[] runs = json.split("\"benchmark\"\\s*:");
    for (String run : Arrays.asList(runs).subList(1, runs.length)) {
      int j = Arrays.asList(JARS).indexOf(str(run, "jar"));
      int s = Arrays.asList(SIZES).indexOf(str(run, "cells"));
      v[j][s] = new double[] {num(run, "50.0"), num(run, "score"), num(run, "scoreError"),
          num(run, "0.0"), num(run, "100.0")};
    }
    ResultTable t = new ResultTable("cells", SERIES[0] + " DefaultMemStore, us",
        SERIES[1] + " DefaultMemStore, us",
        "stock / custom");
    Map<String, double[]> chart = new LinkedHashMap<>();
    for (int j = 0; j < JARS.length; j++) {
      chart.put(SERIES[j], new double[SIZES.length]);
    }
    for (int s = 0; s < SIZES.length; s++) {
      String[] cells = new String[JARS.length];
      for (int j = 0; j < JARS.length; j++) {
        double[] x = v[j][s];
        if (x == null) {
          throw new IllegalArgumentException("no result for " + JARS[j] + " at " + SIZES[s]);
        }
        chart.get(SERIES[j])[s] = x[0] / 1000.0;
        cells[j] = "**" + ResultTable.num(x[0], 0) + "** (" + ResultTable.num(x[1], 0) + " ± "
            + ResultTable.num(x[2], 0) + ", " + ResultTable.num(x[3], 0) + "-"
            + ResultTable.num(x[4], 0) + ")";
      }
      t.row(String.format(java.util.Locale.ROOT, "%,d", Integer.parseInt(SIZES[s])), cells[0],
          cells[1], ResultTable.num(v[0][s][0] / v[1][s][0], 1) + "x");
    }
    String md = t.toMarkdown() + "\nmicroseconds: median (mean ± 99.9% error, min-max) of the"
        + " single shots; JVM: " + jvm + "\n";
    Files.write(new File(args[1]).toPath(), md.getBytes(StandardCharsets.UTF_8));
    System.out.print(md);
    Charts.lines(new File(args[2]), "HBase 2.1.2 MemStore.snapshot() on " + jvm,
        "cells in the memstore", "milliseconds (median single shot)",
        new double[] {1e4, 1e5, 1e6}, chart, true, true);
  }

  private static String str(String run, String key) {
    Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*\"([^\"]*)\"")
        .matcher(run);
    if (!m.find()) {
      throw new IllegalArgumentException("no " + key + " in JMH result");
    }
    return m.group(1);
  }

  private static double num(String run, String key) {
    Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*([-+0-9.eE]+|\"NaN\")")
        .matcher(run);
    if (!m.find()) {
      throw new IllegalArgumentException("no " + key + " in JMH result");
    }
    return m.group(1).contains("NaN") ? Double.NaN : Double.parseDouble(m.group(1));
  }
}
