package dev.forkset.hbase.memstore.bench;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * Class loaders over ONE HBase 2.1.2 server jar each: the stock one, or the fork one plus this
 * module's classes. HBase 2.1.2 common/client jars come from {@code bench.hbase212.dir}; the rest
 * (Hadoop, SLF4J, HBase third-party) from this JVM's class path, HBase 2.6 jars left out.
 */
final class Hbase212Loaders {
  private Hbase212Loaders() {}

  static ClassLoader stock() {
    return loader(prop("bench.hbase212.stock"));
  }

  static ClassLoader fixed() {
    return loader(prop("bench.hbase212.fork"), prop("bench.module.classes"));
  }

  private static String prop(String key) {
    String v = System.getProperty(key);
    if (v == null || !new File(v).exists()) {
      throw new IllegalStateException("System property " + key + " = " + v + " is not an existing"
          + " file; run the benchmark through the bench profile (docs/hbase-memstore-fix.md)");
    }
    return v;
  }

  private static ClassLoader loader(String... server) {
    try {
      List<URL> urls = new ArrayList<>();
      for (String s : server) {
        urls.add(new File(s).toURI().toURL());
      }
      File[] api = new File(prop("bench.hbase212.dir")).listFiles((d, n) -> n.endsWith(".jar")
          && !n.startsWith("hbase-server"));
      for (File f : api) {
        urls.add(f.toURI().toURL());
      }
      for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
        String n = new File(e).getName();
        boolean hbase26 = n.startsWith("hbase-") && !n.startsWith("hbase-shaded-")
            || e.contains("hbase-memstore-fix");
        if (!e.isEmpty() && !hbase26) {
          urls.add(new File(e).toURI().toURL());
        }
      }
      return new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
    } catch (MalformedURLException e) {
      throw new IllegalStateException(e);
    }
  }
}
