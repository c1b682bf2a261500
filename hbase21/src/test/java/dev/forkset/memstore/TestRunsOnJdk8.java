package dev.forkset.memstore;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.DataInputStream;
import java.io.InputStream;
import org.apache.hadoop.hbase.regionserver.Segment;
import org.junit.Test;

/** This line's tests run where HBase 2.1 runs: JDK 8, on classes compiled for it. */
public class TestRunsOnJdk8 {

  @Test
  public void testsRunOnJava8() {
    assertEquals("java.home=" + System.getProperty("java.home"), "1.8",
        System.getProperty("java.specification.version"));
  }

  @Test
  public void patchedClassesComeFromTheCustomJarAtBytecode8() throws Exception {
    String where = Segment.class.getProtectionDomain().getCodeSource().getLocation().toString();
    assertTrue(where, where.contains("hbase-server-2.1.2-fork"));
    try (InputStream in = Segment.class.getResourceAsStream("Segment.class");
        DataInputStream data = new DataInputStream(in)) {
      assertEquals(0xCAFEBABE, data.readInt());
      data.readUnsignedShort(); // minor
      assertEquals("class file major version of Segment in " + where, 52,
          data.readUnsignedShort());
    }
  }
}
