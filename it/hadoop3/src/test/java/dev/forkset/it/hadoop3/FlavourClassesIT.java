package dev.forkset.it.hadoop3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * The same series gives the same patched classes on both flavours: the custom 2.6.4 and
 * 2.6.4-hadoop3 jars differ in exactly the classes in which HBase's own two builds of 2.6.4 differ
 * (four classes that call Hadoop APIs that changed), never in a class the series recompiled. So the
 * upstream tests of the 2.6.4 line and these of the Hadoop 3 flavour test the same bytecode of the
 * patched classes, on two class paths.
 */
public class FlavourClassesIT {
  @Test
  public void customJars_differOnlyWhereTheUpstreamFlavoursDiffer() throws Exception {
    Path dist = Paths.get(System.getProperty("forkset.dist.dir"));
    Path custom2 = only(dist.resolve("hbase-2.6.4"));
    Path custom3 = only(dist.resolve("hbase-2.6.4-hadoop3"));
    Path stock2 = Paths.get(System.getProperty("forkset.hbase.hadoop2.stock.jar"));
    Path stock3 = Paths.get(System.getProperty("forkset.hbase.stock.jar"));

    Set<String> upstreamDiffers = differingClasses(stock2, stock3);
    Set<String> customDiffers = differingClasses(custom2, custom3);
    assertTrue("HBase's two builds of 2.6.4 differ in a few classes: " + upstreamDiffers,
        !upstreamDiffers.isEmpty() && upstreamDiffers.size() < 20);
    assertEquals("classes in which the two custom jars differ, vs those of the two upstream jars",
        upstreamDiffers, customDiffers);
  }

  private static Path only(Path folder) throws IOException {
    try (Stream<Path> s = Files.list(folder)) {
      Path[] jars = s.filter(p -> p.getFileName().toString().matches("hbase-server-.*-fork\\.\\d+\\.jar"))
          .toArray(Path[]::new);
      assertEquals(folder + " has one custom jar", 1, jars.length);
      return jars[0];
    }
  }

  /** Class entries present in both jars with different bytes, or in only one of them. */
  private static Set<String> differingClasses(Path a, Path b) throws IOException {
    Set<String> out = new TreeSet<>();
    try (JarFile x = new JarFile(a.toFile()); JarFile y = new JarFile(b.toFile())) {
      Set<String> names = new TreeSet<>();
      names.addAll(classes(x));
      names.addAll(classes(y));
      for (String name : names) {
        JarEntry ex = x.getJarEntry(name);
        JarEntry ey = y.getJarEntry(name);
        if (ex == null || ey == null || !Arrays.equals(bytes(x, ex), bytes(y, ey))) {
          out.add(name);
        }
      }
    }
    return out;
  }

  private static Set<String> classes(JarFile jar) {
    Set<String> names = new TreeSet<>();
    for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
      String n = e.nextElement().getName();
      if (n.endsWith(".class")) {
        names.add(n);
      }
    }
    return names;
  }

  private static byte[] bytes(JarFile jar, JarEntry entry) throws IOException {
    try (InputStream in = jar.getInputStream(entry)) {
      return in.readAllBytes();
    }
  }
}
