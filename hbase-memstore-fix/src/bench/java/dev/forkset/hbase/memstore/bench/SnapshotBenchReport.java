package dev.forkset.hbase.memstore.bench;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns the JMH JSON of {@link SnapshotBench} into a Markdown table (median, mean with its error,
 * min and max of the single shots) and a PNG chart of the medians. Single shots have outliers (a GC
 * or a descheduled thread inside one shot), so the median is the figure to read.
 * Arguments: JSON file, Markdown output, PNG output.
 */
public final class SnapshotBenchReport {
  private static final String[] SIZES = {"10000", "100000", "1000000"};
  private static final String[] JARS = {"stock", "fixed"};
  private static final String[] SIZE_OF = {"jdk", "jdk8-emulated"};
  /** Series: [jar][sizeOf] flattened, in this order. */
  private static final String[] SERIES = {"stock, JDK size()", "fixed, JDK size()",
      "stock, JDK 8 size() emulated", "fixed, JDK 8 size() emulated"};

  private SnapshotBenchReport() {}

  public static void main(String[] args) throws IOException {
    String json = new String(Files.readAllBytes(new File(args[0]).toPath()),
        StandardCharsets.UTF_8);
    // [series][size] -> {median, mean, error, min, max}
    double[][][] v = new double[SERIES.length][SIZES.length][];
    String[] runs = json.split("\"benchmark\"\\s*:");
    for (String run : Arrays.asList(runs).subList(1, runs.length)) {
      int j = Arrays.asList(JARS).indexOf(str(run, "jar"))
          + JARS.length * Arrays.asList(SIZE_OF).indexOf(str(run, "sizeOf"));
      int s = Arrays.asList(SIZES).indexOf(str(run, "cells"));
      v[j][s] = new double[] {num(run, "50.0"), num(run, "score"), num(run, "scoreError"),
          num(run, "0.0"), num(run, "100.0")};
    }
    StringBuilder md = new StringBuilder();
    md.append("| cells | stock DefaultMemStore, JDK size() | fixed CellCountingMemStore, JDK"
        + " size() | stock, JDK 8 size() emulated | fixed, JDK 8 size() emulated |\n");
    md.append("|---:|---:|---:|---:|---:|\n");
    double[][] chart = new double[SERIES.length][SIZES.length];
    for (int s = 0; s < SIZES.length; s++) {
      md.append(String.format(Locale.ROOT, "| %,d", Integer.parseInt(SIZES[s])));
      for (int j = 0; j < SERIES.length; j++) {
        double[] x = v[j][s];
        chart[j][s] = x[0];
        md.append(String.format(Locale.ROOT, " | **%.0f** (%.0f ± %.0f, %.0f-%.0f)", x[0], x[1],
            x[2], x[3], x[4]));
      }
      md.append(" |\n");
    }
    md.append("\nmicroseconds: median (mean ± 99.9% error, min-max) of the single shots\n");
    md.append("\nJVM: ").append(System.getProperty("java.vm.name")).append(' ')
        .append(System.getProperty("java.version")).append('\n');
    Files.write(new File(args[1]).toPath(), md.toString().getBytes(StandardCharsets.UTF_8));
    System.out.print(md);
    BarChart.write(new File(args[2]), "HBase 2.1.2 memstore snapshot() time, JDK "
        + System.getProperty("java.specification.version") + " (JMH single shot, median)",
        "microseconds", new String[] {"10^4 cells", "10^5 cells", "10^6 cells"},
        SERIES, chart);
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
