package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;

import java.io.DataInputStream;
import java.io.InputStream;
import org.apache.hadoop.hbase.io.hfile.bucket.PmemIOEngine;
import org.junit.Test;

/**
 * The module runs where HBase 2.x runs: its classes are Java 8 bytecode, and the build runs these
 * tests on JDK 8 too (the Surefire execution "jdk8" sets forkset.expect.java=1.8).
 */
public class ModuleBytecodeTest {

  @Test
  public void moduleClassesAreJava8Bytecode() throws Exception {
    for (Class<?> c : new Class<?>[] {PmemIOEngine.class, PmemStore.class, Crc.class,
        PmemCacheConfig.class, PmemIOEngineProvider.class}) {
      String file = c.getName().substring(c.getName().lastIndexOf('.') + 1) + ".class";
      try (InputStream in = c.getResourceAsStream(file);
          DataInputStream data = new DataInputStream(in)) {
        assertEquals(0xCAFEBABE, data.readInt());
        data.readUnsignedShort(); // minor
        assertEquals(c.getName(), 52, data.readUnsignedShort());
      }
    }
  }

  @Test
  public void runsOnTheJavaTheBuildAskedFor() {
    String expected = System.getProperty("forkset.expect.java");
    if (expected != null) {
      assertEquals("java.home=" + System.getProperty("java.home"), expected,
          System.getProperty("java.specification.version"));
    }
  }
}
