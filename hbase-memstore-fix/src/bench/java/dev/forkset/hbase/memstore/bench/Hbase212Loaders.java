package dev.forkset.hbase.memstore.bench;

import dev.forkset.hbase21.Hbase21ClassPath;
import dev.forkset.hbase21.ServerJar;
import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * Class loaders over the HBase 2.1.2 stack (the class path it-hbase21 resolved: HBase 2.1.2,
 * Hadoop 2.7), with ONE hbase-server jar each: the stock one, or the custom one
 * ({@code bench.hbase212.fork}) plus this module's classes ({@code bench.module.classes}). Their parent is the JDK's own loader, so
 * nothing of this JVM's class path (HBase 2.6, Hadoop 3) leaks in.
 */
final class Hbase212Loaders {
  private Hbase212Loaders() {}

  static ClassLoader stock() throws IOException {
    return loader(Hbase21ClassPath.load().stock());
  }

  static ClassLoader fixed() throws IOException {
    String module = required("bench.module.classes");
    return loader(Hbase21ClassPath.load().forJar(ServerJar.CUSTOM,
        Paths.get(required("bench.hbase212.fork")), Paths.get(module)));
  }

  private static String required(String key) {
    String v = System.getProperty(key);
    if (v == null || !new File(v).exists()) {
      throw new IllegalStateException("System property " + key + " = " + v + " is not an"
          + " existing file; run the benchmark through the bench profile"
          + " (docs/hbase-memstore-fix.md)");
    }
    return v;
  }

  private static ClassLoader loader(List<Path> classPath) {
    try {
      List<URL> urls = new ArrayList<>();
      for (Path p : classPath) {
        urls.add(p.toUri().toURL());
      }
      // The extension loader on JDK 8, the platform loader on 9+: the JDK's classes only.
      ClassLoader jdk = ClassLoader.getSystemClassLoader().getParent();
      return new URLClassLoader(urls.toArray(new URL[0]), jdk);
    } catch (MalformedURLException e) {
      throw new IllegalStateException(e);
    }
  }
}
