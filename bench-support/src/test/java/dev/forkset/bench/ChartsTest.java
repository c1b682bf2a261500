package dev.forkset.bench;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.awt.image.BufferedImage;
import java.io.File;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class ChartsTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void bar_writesPngOfTheLayoutSizeWithBothSeriesColours() throws Exception {
    File png = new File(tmp.getRoot(), "sub/bar.png");
    Map<String, double[]> series = new LinkedHashMap<>();
    series.put("stock", new double[] {10, 20});
    series.put("patched", new double[] {5, 40});
    Charts.bar(png, "t", "ms", Arrays.asList("a", "b"), series);
    BufferedImage img = ImageIO.read(png);
    assertEquals(Charts.WIDTH, img.getWidth());
    assertEquals(Charts.HEIGHT, img.getHeight());
    assertTrue("first series colour drawn", hasColour(img, 0x4C72B0));
    assertTrue("second series colour drawn", hasColour(img, 0xDD8452));
  }

  @Test
  public void lines_logAxes_writesPng() throws Exception {
    File png = new File(tmp.getRoot(), "lines.png");
    Map<String, double[]> series = new LinkedHashMap<>();
    series.put("stock", new double[] {1, 10, 100});
    Charts.lines(png, "t", "cells", "ms", new double[] {1e4, 1e5, 1e6}, series, true, true);
    assertTrue(hasColour(ImageIO.read(png), 0x4C72B0));
  }

  @Test
  public void bar_seriesLengthDiffersFromCategories_namesTheSeries() throws Exception {
    Map<String, double[]> series = new LinkedHashMap<>();
    series.put("stock", new double[] {1});
    try {
      Charts.bar(new File(tmp.getRoot(), "x.png"), "t", "y", Arrays.asList("a", "b"), series);
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("'stock' has 1 values for 2"));
    }
  }

  @Test
  public void resultTable_markdownEscapesPipesAndChecksWidth() {
    ResultTable t = new ResultTable("case", "P99 ms").row("a|b", ResultTable.num(1.2345, 2));
    assertEquals("| case | P99 ms |\n| --- | --- |\n| a\\|b | 1.23 |\n", t.toMarkdown());
    try {
      t.row("only one");
      fail();
    } catch (IllegalArgumentException expected) {
      // one cell for two columns
    }
  }

  private static boolean hasColour(BufferedImage img, int rgb) {
    for (int y = 0; y < img.getHeight(); y++) {
      for (int x = 0; x < img.getWidth(); x++) {
        if ((img.getRGB(x, y) & 0xFFFFFF) == rgb) {
          return true;
        }
      }
    }
    return false;
  }
}
