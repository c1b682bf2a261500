package dev.forkset.hbase21;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URISyntaxException;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

/**
 * The one builder of an HBase 2.1.2 class path, as Maven resolved it when this module was built
 * ({@code classpath.txt} and {@code hbase21.properties} beside this class): the 2.1.2 server
 * stack, its test jars (HBaseTestingUtility, PerformanceEvaluation), Hadoop 2.7 and this module's
 * own classes, with exactly one hbase-server jar: the stock release or this project's custom one,
 * each with its hbase-hadoop-compat and hbase-hadoop2-compat (the 2.1.2 series changes the
 * RegionServer metrics source there too: the custom jars of one revision go together).
 * Child JVMs ({@link Hbase21Cluster}) get it as their class path; code in a JVM of another line
 * (the memstore benchmarks, the stock-vs-custom tests) gets it as a class loader.
 */
public final class Hbase21ClassPath {
  private final List<Path> common;
  private final Path stockJar;
  private final Path customJar;
  private final List<Path> stockCompat;
  private final List<Path> customCompat;
  private final Path harness;

  private Hbase21ClassPath(List<Path> common, Path stockJar, Path customJar,
      List<Path> stockCompat, List<Path> customCompat, Path harness) {
    this.common = common;
    this.stockJar = stockJar;
    this.customJar = customJar;
    this.stockCompat = stockCompat;
    this.customCompat = customCompat;
    this.harness = harness;
  }

  /** Reads the class path this module was built with. */
  public static Hbase21ClassPath load() throws IOException {
    Properties p = new Properties();
    try (InputStream in = resource("hbase21.properties")) {
      p.load(in);
    }
    Path stock = existing(p.getProperty("stock.jar"), "stock.jar");
    Path custom = Paths.get(p.getProperty("custom.jar"));
    List<Path> stockCompat = new ArrayList<>();
    for (String e : p.getProperty("stock.compat.jars").split(",")) {
      stockCompat.add(existing(e.trim(), "stock.compat.jars entry"));
    }
    List<Path> customCompat = new ArrayList<>();
    for (String e : p.getProperty("custom.compat.jars").split(",")) {
      customCompat.add(Paths.get(e.trim()));
    }
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
      } else if (stockCompat.contains(path)) {
        continue;
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
    return new Hbase21ClassPath(Collections.unmodifiableList(common), stock, custom,
        Collections.unmodifiableList(stockCompat), Collections.unmodifiableList(customCompat),
        harness);
  }

  private static InputStream resource(String name) throws IOException {
    InputStream in = Hbase21ClassPath.class.getResourceAsStream(name);
    if (in == null) {
      throw new IOException("No " + name + " beside " + Hbase21ClassPath.class.getName()
          + ": build the hbase21 module (./mvnw -B install -DskipTests)");
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
          + " hbase21 module (./mvnw -B install -DskipTests) against this Maven repository");
    }
    return Paths.get(file);
  }

  /**
   * The hbase-server jar of {@code jar}: the stock 2.1.2 release or the custom 2.1.2 jar (also for
   * {@link ServerJar#CUSTOM_WITH_STOCK_COMPAT}).
   */
  public Path serverJar(ServerJar jar) {
    if (jar == ServerJar.STOCK) {
      return stockJar;
    }
    if (!Files.isRegularFile(customJar)) {
      throw new IllegalStateException("The custom hbase-server-2.1.2-fork.<n>.jar this module"
          + " was built with is gone (" + customJar + "): build it again (./mvnw -B install"
          + " -DskipTests, or -pl patches/hbase/2.1.2,hbase21)");
    }
    return customJar;
  }

  /**
   * The hbase-hadoop-compat and hbase-hadoop2-compat jars that go with {@code jar}'s hbase-server:
   * the stock 2.1.2 ones (also for {@link ServerJar#CUSTOM_WITH_STOCK_COMPAT}), or the custom
   * ones of the same revision.
   */
  public List<Path> compatJars(ServerJar jar) {
    if (jar == ServerJar.STOCK || jar == ServerJar.CUSTOM_WITH_STOCK_COMPAT) {
      return stockCompat;
    }
    for (Path p : customCompat) {
      if (!Files.isRegularFile(p)) {
        throw new IllegalStateException("The custom compat jar " + p + " this module was built"
            + " with is gone: build it again (./mvnw -B install -DskipTests)");
      }
    }
    return customCompat;
  }

  /**
   * The class path of a JVM on {@code jar}: its hbase-server jar and compat jars first, then the
   * rest of the 2.1.2 stack, this module's classes and {@code extra} (a test's own classes).
   */
  public List<Path> forJar(ServerJar jar, Path... extra) {
    List<Path> cp = new ArrayList<>();
    cp.add(serverJar(jar));
    cp.addAll(compatJars(jar));
    cp.addAll(common);
    cp.add(harness);
    cp.addAll(Arrays.asList(extra));
    return cp;
  }

  /**
   * A class loader over {@link #forJar}, whose parent is the JDK's own loader (the extension
   * loader on JDK 8, the platform loader on 9+): nothing of this JVM's class path (another HBase,
   * another Hadoop) leaks in, so the stock and the custom jar can each run in one JVM.
   */
  public URLClassLoader loader(ServerJar jar, Path... extra) {
    List<URL> urls = new ArrayList<>();
    try {
      for (Path p : forJar(jar, extra)) {
        urls.add(p.toUri().toURL());
      }
    } catch (MalformedURLException e) {
      throw new IllegalStateException(e);
    }
    return new URLClassLoader(urls.toArray(new URL[0]),
        ClassLoader.getSystemClassLoader().getParent());
  }
}
