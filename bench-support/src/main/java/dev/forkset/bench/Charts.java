package dev.forkset.bench;

import java.awt.Color;
import java.awt.Font;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;

/**
 * PNG charts for benchmark results, drawn by XChart in one layout: 900 x 500 pixels, white
 * background, legend below the plot, the same series colours in every chart. Every benchmark of
 * the project draws through this class, so the charts under {@code docs/img} look alike.
 */
public final class Charts {
  /** Width and height of every chart, in pixels. */
  public static final int WIDTH = 900;
  public static final int HEIGHT = 500;

  /** Series colours, in series order (stock first, then the patched variants). */
  private static final Color[] PALETTE = {new Color(0x4C72B0), new Color(0xDD8452),
      new Color(0x55A868), new Color(0xC44E52), new Color(0x8172B3), new Color(0x937860)};

  private Charts() {}

  /**
   * A grouped bar chart: one group per category on the x axis, one bar per series in each group.
   *
   * @param series series name to one value per category, in category order
   */
  public static void bar(File png, String title, String yLabel, List<String> categories,
      Map<String, double[]> series) throws IOException {
    CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title)
        .yAxisTitle(yLabel).build();
    style(chart.getStyler());
    chart.getStyler().setAvailableSpaceFill(0.8);
    chart.getStyler().setOverlapped(false);
    for (Map.Entry<String, double[]> s : series.entrySet()) {
      checkLength(s.getKey(), s.getValue().length, categories.size());
      List<Double> ys = new ArrayList<>();
      for (double v : s.getValue()) {
        ys.add(v);
      }
      chart.addSeries(s.getKey(), categories, ys);
    }
    write(chart, png);
  }

  /**
   * A line chart with markers: one line per series over the same x values.
   *
   * @param series series name to one y value per x value
   * @param logX, logY logarithmic axes (all values must then be positive)
   */
  public static void lines(File png, String title, String xLabel, String yLabel, double[] x,
      Map<String, double[]> series, boolean logX, boolean logY) throws IOException {
    XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
        .xAxisTitle(xLabel).yAxisTitle(yLabel).build();
    style(chart.getStyler());
    chart.getStyler().setXAxisLogarithmic(logX);
    chart.getStyler().setYAxisLogarithmic(logY);
    chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
    for (Map.Entry<String, double[]> s : series.entrySet()) {
      checkLength(s.getKey(), s.getValue().length, x.length);
      chart.addSeries(s.getKey(), x, s.getValue());
    }
    write(chart, png);
  }

  private static void style(Styler styler) {
    styler.setChartBackgroundColor(Color.WHITE);
    styler.setPlotBackgroundColor(Color.WHITE);
    styler.setPlotBorderVisible(false);
    styler.setLegendPosition(Styler.LegendPosition.OutsideS);
    styler.setLegendLayout(Styler.LegendLayout.Horizontal);
    styler.setLegendBorderColor(Color.WHITE);
    styler.setSeriesColors(PALETTE);
    styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
    styler.setChartTitleBoxVisible(false);
    styler.setAntiAlias(true);
  }

  private static void checkLength(String name, int got, int want) {
    if (got != want) {
      throw new IllegalArgumentException("Series '" + name + "' has " + got + " values for "
          + want + " points");
    }
  }

  private static void write(Chart<?, ?> chart, File png) throws IOException {
    System.setProperty("java.awt.headless", "true");
    File dir = png.getAbsoluteFile().getParentFile();
    if (dir != null && !dir.isDirectory() && !dir.mkdirs()) {
      throw new IOException("Cannot create " + dir);
    }
    BitmapEncoder.saveBitmap(chart, png.getPath(), BitmapEncoder.BitmapFormat.PNG);
  }
}
