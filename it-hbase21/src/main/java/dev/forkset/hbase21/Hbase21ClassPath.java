package dev.forkset.hbase21;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

/**
 * The class path of an HBase 2.1.2 JVM, as Maven resolved it when this module was built
 * ({@code classpath.txt} and {@code hbase21.properties} beside this class): the 2.1.2 server
 * stack, its test jars (HBaseTestingUtility, PerformanceEvaluation), Hadoop 2.7 and this module's
 * own classes, with either the stock hbase-server jar or a custom one and the module jar (the
 * caller names those two: they are built in the same reactor, after this module's class path).
 */
public final class Hbase21ClassPath {
  private final List<Path> common;
  private final Path stockJar;
  private final Path harness;

  private Hbase21ClassPath(List<Path> common, Path stockJar, Path harness) {
    this.common = common;
    this.stockJar = stockJar;
    this.harness = harness;
  }

  /** Reads the class path this module was built with. */
  public static Hbase21ClassPath load() throws IOException {
    Properties p = new Properties();
    try (InputStream in = resource("hbase21.properties")) {
      p.load(in);
    }
    Path stock = existing(p.getProperty("stock.jar"), "stock.jar");
    String text;
    try (InputStream in = resource("classpath.txt")) {
      text = new String(readAll(in), StandardCharsets.UTF_8).trim();
    }
    List<Path> common = new ArrayList<>();
    boolean sawStock = false;
    for (String e : text.split(File.pathSeparator)) {
      if (e.trim().isEmpty()) {
        continue;
      }
      Path path = Paths.get(e.trim());
      if (path.equals(stock)) {
        sawStock = true;
      } else {
        common.add(existing(e.trim(), "classpath.txt entry"));
      }
    }
    if (!sawStock) {
      throw new IllegalStateException("classpath.txt does not list the stock jar " + stock);
    }
    Path harness;
    try {
      harness = Paths.get(Hbase21ClassPath.class.getProtectionDomain().getCodeSource()
          .getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IOException(e);
    }
    return new Hbase21ClassPath(Collections.unmodifiableList(common), stock, harness);
  }

  private static InputStream resource(String name) throws IOException {
    InputStream in = Hbase21ClassPath.class.getResourceAsStream(name);
    if (in == null) {
      throw new IOException("No " + name + " beside " + Hbase21ClassPath.class.getName()
          + ": build the it-hbase21 module (./mvnw -B install -DskipTests)");
    }
    return in;
  }

  private static byte[] readAll(InputStream in) throws IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }

  private static Path existing(String file, String what) {
    if (file == null || !Files.exists(Paths.get(file))) {
      throw new IllegalStateException(what + " " + file + " does not exist: rebuild the"
          + " it-hbase21 module (./mvnw -B install -DskipTests) against this Maven repository");
    }
    return Paths.get(file);
  }

  public Path stockJar() {
    return stockJar;
  }

  /** The stock class path: the stock server jar, the rest of the 2.1.2 stack, this harness. */
  public List<Path> stock() {
    return forJar(ServerJar.STOCK, null, null);
  }

  /**
   * The class path of a JVM on {@code jar}: the server jar (for CUSTOM the custom server jar and
   * the module jar, which must then be given) first, then the rest of the 2.1.2 stack and this
   * harness.
   */
  public List<Path> forJar(ServerJar jar, Path customJar, Path moduleJar) {
    List<Path> cp = new ArrayList<>();
    if (jar == ServerJar.CUSTOM) {
      if (customJar == null || !Files.isRegularFile(customJar)
          || !customJar.getFileName().toString().startsWith("hbase-server-2.1.2")) {
        throw new IllegalArgumentException("The custom 2.1.2 JVM needs the custom"
            + " hbase-server-2.1.2-fork.<n>.jar (patches/hbase/2.1.2); got " + customJar);
      }
      if (moduleJar == null || !Files.exists(moduleJar)) {
        throw new IllegalArgumentException("The custom 2.1.2 JVM needs the hbase-memstore-fix"
            + " jar beside the custom hbase-server jar; got " + moduleJar);
      }
      cp.add(customJar);
      cp.add(moduleJar);
    } else {
      cp.add(stockJar);
    }
    cp.addAll(common);
    cp.add(harness);
    return cp;
  }

  /** {@link #forJar} joined with the path separator. */
  public static String join(List<Path> cp) {
    StringBuilder sb = new StringBuilder();
    for (Path p : cp) {
      if (sb.length() > 0) {
        sb.append(File.pathSeparatorChar);
      }
      sb.append(p);
    }
    return sb.toString();
  }
}
