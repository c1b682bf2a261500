package dev.forkset.hbase.memstore.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.Locale;
import javax.imageio.ImageIO;

/** A grouped bar chart written as PNG with headless AWT; no charting library needed. */
final class BarChart {
  private static final Color[] COLORS = {new Color(0x4C72B0), new Color(0xDD8452),
      new Color(0x55A868), new Color(0xC44E52)};

  private BarChart() {}

  /**
   * @param groups x-axis groups
   * @param series one bar per series in each group
   * @param values values[series][group]
   */
  static void write(File png, String title, String yLabel, String[] groups, String[] series,
      double[][] values) throws IOException {
    System.setProperty("java.awt.headless", "true");
    int w = 900;
    int h = 500;
    int left = 80;
    int right = 20;
    int top = 60;
    int bottom = 70;
    BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING,
        RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, w, h);
    double max = 0;
    for (double[] s : values) {
      for (double v : s) {
        max = Math.max(max, v);
      }
    }
    max = niceCeiling(max);
    int plotW = w - left - right;
    int plotH = h - top - bottom;
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
    g.setColor(Color.BLACK);
    g.drawString(title, left, 30);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    FontMetrics fm = g.getFontMetrics();
    for (int i = 0; i <= 5; i++) {
      double v = max * i / 5;
      int y = top + plotH - (int) (plotH * i / 5.0);
      g.setColor(new Color(0xDDDDDD));
      g.drawLine(left, y, left + plotW, y);
      g.setColor(Color.DARK_GRAY);
      String label = format(v);
      g.drawString(label, left - 8 - fm.stringWidth(label), y + 4);
    }
    Graphics2D rot = (Graphics2D) g.create();
    rot.rotate(-Math.PI / 2);
    rot.drawString(yLabel, -(top + plotH / 2 + fm.stringWidth(yLabel) / 2), 18);
    rot.dispose();
    int groupW = plotW / groups.length;
    int barW = Math.max(4, (int) (groupW * 0.7 / series.length));
    for (int gi = 0; gi < groups.length; gi++) {
      int x0 = left + gi * groupW + (groupW - barW * series.length) / 2;
      for (int si = 0; si < series.length; si++) {
        double v = values[si][gi];
        int bh = max == 0 ? 0 : (int) Math.round(plotH * v / max);
        g.setColor(COLORS[si % COLORS.length]);
        g.fillRect(x0 + si * barW, top + plotH - bh, barW - 2, bh);
        g.setColor(Color.BLACK);
        String label = format(v);
        g.drawString(label, x0 + si * barW + (barW - 2 - fm.stringWidth(label)) / 2,
            top + plotH - bh - 4);
      }
      g.setColor(Color.BLACK);
      g.drawString(groups[gi], left + gi * groupW + (groupW - fm.stringWidth(groups[gi])) / 2,
          top + plotH + 18);
    }
    g.setStroke(new BasicStroke(1.5f));
    g.drawLine(left, top + plotH, left + plotW, top + plotH);
    g.drawLine(left, top, left, top + plotH);
    int lx = left;
    for (int si = 0; si < series.length; si++) {
      g.setColor(COLORS[si % COLORS.length]);
      g.fillRect(lx, h - 30, 14, 14);
      g.setColor(Color.BLACK);
      g.drawString(series[si], lx + 20, h - 19);
      lx += 40 + fm.stringWidth(series[si]);
    }
    g.dispose();
    png.getParentFile().mkdirs();
    ImageIO.write(img, "png", png);
  }

  private static double niceCeiling(double v) {
    if (v <= 0) {
      return 1;
    }
    double p = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 2, 2.5, 5, 10}) {
      if (m * p >= v) {
        return m * p;
      }
    }
    return 10 * p;
  }

  static String format(double v) {
    if (v >= 100) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    if (v >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.2f", v);
  }
}
