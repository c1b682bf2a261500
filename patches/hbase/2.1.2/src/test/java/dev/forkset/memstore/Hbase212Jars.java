package dev.forkset.memstore;

import static org.junit.Assert.assertTrue;

import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * The stock hbase-server-2.1.2.jar and this line's custom jar, each to run test code in its own
 * class loader over the 2.1.2 dependencies of the test class path, so both jars run in one JVM.
 * The stock jar is off Failsafe's class path (the line's tests run on the custom jar); it sits in
 * the local repository beside hbase-common 2.1.2: {@code <repo>/org/apache/hbase/<a>/<v>/}.
 */
final class Hbase212Jars {
  final URL stock;
  final URL custom;
  private final List<URL> common = new ArrayList<>();

  Hbase212Jars() throws Exception {
    File customJar = null;
    File hbaseCommon = null;
    String cp = System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path"));
    for (String entry : cp.split(File.pathSeparator)) {
      if (entry.isEmpty()) {
        continue;
      }
      File f = new File(entry);
      String name = f.getName();
      if (name.startsWith("hbase-server-2.1.2-fork") && !name.contains("cslm-agent")) {
        customJar = f;
        continue;
      }
      if (name.equals("hbase-common-2.1.2.jar")) {
        hbaseCommon = f;
      }
      common.add(f.toURI().toURL());
    }
    assertTrue("custom jar not on the test class path: " + cp, customJar != null);
    assertTrue("hbase-common-2.1.2.jar not on the test class path: " + cp, hbaseCommon != null);
    File stockJar = new File(hbaseCommon.getParentFile().getParentFile().getParentFile(),
        "hbase-server/2.1.2/hbase-server-2.1.2.jar");
    assertTrue(stockJar + " missing", stockJar.isFile());
    this.stock = stockJar.toURI().toURL();
    this.custom = customJar.toURI().toURL();
  }

  /**
   * Calls the public static {@code className.method(args)} in a fresh class loader over
   * {@code server} and the common 2.1.2 class path; its parent is the system loader's parent
   * (JDK 8: the extension loader, 9+: the platform loader), so nothing else of this JVM leaks in.
   */
  Object call(URL server, String className, String method, Class<?>[] types, Object... args)
      throws Exception {
    List<URL> urls = new ArrayList<>();
    urls.add(server);
    urls.addAll(common);
    ClassLoader previous = Thread.currentThread().getContextClassLoader();
    try (URLClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]),
        ClassLoader.getSystemClassLoader().getParent())) {
      Thread.currentThread().setContextClassLoader(loader);
      Method m = loader.loadClass(className).getMethod(method, types);
      return m.invoke(null, args);
    } catch (InvocationTargetException e) {
      throw (Exception) e.getCause();
    } finally {
      Thread.currentThread().setContextClassLoader(previous);
    }
  }
}
