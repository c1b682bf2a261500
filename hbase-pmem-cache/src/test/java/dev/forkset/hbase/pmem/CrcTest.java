package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.Checksum;
import org.junit.Test;

public class CrcTest {
  private static final byte[] CHECK = "123456789".getBytes(StandardCharsets.US_ASCII);

  private static long value(Crc crc, ByteBuffer... parts) {
    Checksum c = crc.create();
    for (ByteBuffer b : parts) {
      crc.update(c, b);
    }
    return c.getValue();
  }

  @Test
  public void crc32_matchesTheStandardCheckValue() {
    assertEquals(0xCBF43926L, value(Crc.CRC32, ByteBuffer.wrap(CHECK)));
  }

  @Test
  public void fastest_isCrc32cWhereTheJdkHasItElseCrc32() {
    boolean jdk9 = !System.getProperty("java.specification.version").startsWith("1.");
    if (jdk9) {
      assertNotNull(Crc.CRC32C);
      assertSame(Crc.CRC32C, Crc.fastest());
      assertEquals(0xE3069283L, value(Crc.CRC32C, ByteBuffer.wrap(CHECK)));
    } else {
      assertNull(Crc.CRC32C);
      assertSame(Crc.CRC32, Crc.fastest());
      assertNull("a CRC32C cache cannot be checked on JDK 8", Crc.forId(2));
    }
  }

  @Test
  public void update_givesTheSameValueForDirectHeapAndSplitBuffers() {
    Crc crc = Crc.fastest();
    ByteBuffer direct = ByteBuffer.allocateDirect(CHECK.length);
    direct.put(CHECK).flip();
    long whole = value(crc, ByteBuffer.wrap(CHECK));
    assertEquals(whole, value(crc, direct));
    assertEquals(whole, value(crc, ByteBuffer.wrap(CHECK, 0, 4), ByteBuffer.wrap(CHECK, 4, 5)));
  }

  @Test
  public void forId_readsBackTheIdOfEachAlgorithm() {
    assertSame(Crc.CRC32, Crc.forId(Crc.CRC32.id()));
    assertSame(Crc.fastest(), Crc.forId(Crc.fastest().id()));
    assertNull(Crc.forId(7));
  }
}
