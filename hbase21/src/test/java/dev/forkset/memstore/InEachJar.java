package dev.forkset.memstore;

import dev.forkset.hbase21.Hbase21ClassPath;
import dev.forkset.hbase21.ServerJar;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Runs test code against the stock hbase-server-2.1.2.jar and the custom one in one JVM, each in a
 * class loader of its own ({@link Hbase21ClassPath#loader}) that also holds this module's test
 * classes (the probes).
 */
final class InEachJar {
  private InEachJar() {}

  /** Calls the public static {@code className.method(args)} over {@code jar}. */
  static Object call(ServerJar jar, String className, String method, Class<?>[] types,
      Object... args) throws Exception {
    Path testClasses = Paths.get(InEachJar.class.getProtectionDomain().getCodeSource()
        .getLocation().toURI());
    ClassLoader previous = Thread.currentThread().getContextClassLoader();
    try (URLClassLoader loader = Hbase21ClassPath.load().loader(jar, testClasses)) {
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
