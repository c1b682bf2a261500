package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class CacheFileHeaderTest {
  private static final long MIB = 1L << 20;
  private final Layout layout = new Layout(2, 64 * MIB, 8 * MIB);

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static String decodeFailure(ByteBuffer b) {
    try {
      CacheFileHeader.decode(b);
      return null;
    } catch (IOException e) {
      return e.getMessage();
    }
  }

  @Test
  public void decode_readsBackWhatEncodeWrote() throws IOException {
    CacheFileHeader h = CacheFileHeader.of(layout, 1, Crc.CRC32, 0xabcdefL, 1234);
    CacheFileHeader back = CacheFileHeader.decode(h.encode());
    assertEquals(1, back.fileIndex);
    assertEquals(2, back.fileCount);
    assertEquals(Crc.CRC32.id(), back.crcId);
    assertEquals(0xabcdefL, back.epoch);
    assertEquals(64 * MIB, back.capacity);
    assertNull(back.mismatch(layout, 1));
  }

  @Test
  public void decode_refusesZeroedForeignAndDamagedHeaders() {
    assertTrue(decodeFailure(ByteBuffer.allocate(CacheFileHeader.RECORD_SIZE)).contains("zeroed"));
    ByteBuffer foreign = ByteBuffer.allocate(CacheFileHeader.RECORD_SIZE);
    foreign.putLong(0, 0x7f454c46L);
    assertTrue(decodeFailure(foreign).contains("no pmem cache header"));
    ByteBuffer good = CacheFileHeader.of(layout, 0, Crc.CRC32, 7, 0).encode();
    for (int i = 12; i < CacheFileHeader.RECORD_SIZE; i++) {
      ByteBuffer bad = ByteBuffer.allocate(CacheFileHeader.RECORD_SIZE);
      bad.put(good.duplicate()).flip();
      bad.put(i, (byte) (bad.get(i) ^ 1));
      assertTrue("byte " + i, decodeFailure(bad).contains("CRC"));
    }
    assertTrue(decodeFailure(ByteBuffer.allocate(10)).contains("shorter"));
  }

  @Test
  public void mismatch_namesSwappedPathsAndOtherLayouts() {
    CacheFileHeader first = CacheFileHeader.of(layout, 0, Crc.CRC32, 7, 0);
    assertTrue(first.mismatch(layout, 1).contains("swapped"));
    assertTrue(first.mismatch(new Layout(3, 64 * MIB, 8 * MIB), 0).contains("2 files"));
    assertTrue(first.mismatch(new Layout(2, 128 * MIB, 8 * MIB), 0).contains("layout changed"));
  }

  @Test
  public void holder_roundTripsAndATornRecordReadsAsNone() throws IOException {
    File f = tmp.newFile();
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      assertNull(CacheFileHeader.readHolder(ch));
      ByteBuffer rec = CacheFileHeader.encodeHolder("running 42@host since now");
      ch.write(rec, CacheFileHeader.HOLDER_OFFSET);
      assertEquals("running 42@host since now", CacheFileHeader.readHolder(ch));
      ch.write(ByteBuffer.wrap(new byte[] {'X'}), CacheFileHeader.HOLDER_OFFSET + 6);
      assertNull(CacheFileHeader.readHolder(ch));
    }
  }

  @Test
  public void read_refusesAFileShorterThanItsHeader() throws IOException {
    File f = tmp.newFile();
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
      CacheFileHeader.read(ch);
      fail();
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("shorter"));
    }
  }
}
