package dev.forkset.hbase.pmem;

import java.io.IOException;

/** For tests of other packages: device errors injected into a store's positional reads. */
public final class StoreFaults {
  private StoreFaults() {
  }

  /**
   * Makes every positional read overlapping logical bytes [offset, offset + len) of {@code s}
   * fail with EIO, as a badblock under them would (the range must lie in one segment).
   */
  public static void failReads(PmemStore s, long offset, int len) {
    Layout layout = s.layout();
    int seg = layout.segmentOf(offset);
    int path = layout.fileOf(seg);
    long from = layout.fileOffset(seg) + layout.offsetInSegment(offset);
    long to = from + len;
    s.reader((p, ch, dst, pos) -> {
      if (p == path && pos < to && pos + dst.remaining() > from) {
        throw new IOException("Input/output error");
      }
      return ch.read(dst, pos);
    });
  }
}
