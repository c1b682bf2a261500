package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class LayoutTest {
  private static final long MIB = 1L << 20;

  @Test
  public void segments_alternateBetweenFilesAfterTheHeader() {
    Layout l = new Layout(2, 10 * MIB + 4096, 2 * MIB);
    assertEquals(6, l.segmentCount());
    for (int s = 0; s < 6; s++) {
      assertEquals(s % 2, l.fileOf(s));
      assertEquals(Layout.HEADER_RESERVE + (s / 2) * 2 * MIB, l.fileOffset(s));
    }
    assertEquals(4096, l.segmentLength(5));
    assertEquals(Layout.HEADER_RESERVE + 6 * MIB, l.fileLength(0));
    assertEquals(Layout.HEADER_RESERVE + 4 * MIB + 4096, l.fileLength(1));
  }

  @Test
  public void segmentOf_findsEveryByteInTheSegmentThatHoldsIt() {
    Layout l = new Layout(3, 64 * MIB + 1, 8 * MIB);
    long[] probes = {0, 8 * MIB - 1, 8 * MIB, 64 * MIB};
    int[] segments = {0, 0, 1, 8};
    for (int i = 0; i < probes.length; i++) {
      assertEquals(segments[i], l.segmentOf(probes[i]));
      assertEquals(probes[i] - segments[i] * 8 * MIB, l.offsetInSegment(probes[i]));
    }
  }

  @Test
  public void mappingCount_isCapacityOverMappingSize() {
    Layout l = new Layout(2, 64 * MIB + 1, 8 * MIB);
    assertEquals(9, l.segmentCount());
    long total = 0;
    for (int s = 0; s < l.segmentCount(); s++) {
      total += l.segmentLength(s);
    }
    assertTrue(total >= 64 * MIB + 1 && total < 64 * MIB + 1 + Layout.PAGE);
  }

  @Test
  public void segments_stayTwoMibAlignedInTheirFile() {
    Layout l = new Layout(2, 1L << 34, 1L << 30);
    for (int s = 0; s < l.segmentCount(); s++) {
      assertEquals(0, l.fileOffset(s) % (2 * MIB));
    }
  }

  @Test
  public void describe_changesWhenAByteWouldMove() {
    String base = new Layout(2, 64 * MIB, 8 * MIB).describe();
    assertTrue(!base.equals(new Layout(1, 64 * MIB, 8 * MIB).describe()));
    assertTrue(!base.equals(new Layout(2, 72 * MIB, 8 * MIB).describe()));
    assertTrue(!base.equals(new Layout(2, 64 * MIB, 4 * MIB).describe()));
  }
}
