package dev.forkset.hbase.pmem;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Logical ranges [offset, end) of the cache whose positional read failed with an I/O error (a
 * media error, a badblock): no write may store into them through the mappings.
 *
 * <p>Invariants: the ranges in {@link #ranges} never overlap (an insert replaces every range it
 * touches by their union), so the one range that can overlap a write is the last one starting
 * before the write ends, and a lookup is one lock-free floor search; inserts are rare (one per
 * failed block) and serialized. At most {@link #MAX} ranges: past that a new range is merged
 * with its nearest neighbour, which widens what is skipped (capacity lost, never a page
 * written that should not be), so the memory stays bounded on a failing device.
 */
final class BadRanges {
  static final int MAX = 4096;

  private final ConcurrentSkipListMap<Long, Long> ranges = new ConcurrentSkipListMap<>();

  /** Records [offset, offset + len); false when it was already inside a recorded range. */
  synchronized boolean add(long offset, long len) {
    long start = offset;
    long end = offset + len;
    Map.Entry<Long, Long> covering = ranges.floorEntry(start);
    if (covering != null && covering.getValue() >= end) {
      return false;
    }
    if (ranges.size() >= MAX && overlapping(start, end - start) == null) {
      Map.Entry<Long, Long> below = ranges.lowerEntry(start);
      Map.Entry<Long, Long> above = ranges.higherEntry(start);
      if (below != null && (above == null || start - below.getValue() <= above.getKey() - end)) {
        start = below.getKey();
      } else if (above != null) {
        end = Math.max(end, above.getValue());
      }
    }
    // Union with every range touching [start, end]; the union is put before the parts go, so
    // a concurrent lookup sees either a part or the union, both bad.
    Map.Entry<Long, Long> e = ranges.floorEntry(end);
    while (e != null && e.getValue() >= start) {
      start = Math.min(start, e.getKey());
      end = Math.max(end, e.getValue());
      e = ranges.lowerEntry(e.getKey());
    }
    ranges.put(start, end);
    for (Long k : ranges.subMap(start, false, end, true).keySet()) {
      ranges.remove(k);
    }
    return true;
  }

  /** The recorded range overlapping [offset, offset + len), or null. */
  long[] overlapping(long offset, long len) {
    if (ranges.isEmpty()) {
      return null;
    }
    Map.Entry<Long, Long> e = ranges.lowerEntry(offset + len);
    return e != null && e.getValue() > offset ? new long[] {e.getKey(), e.getValue()} : null;
  }

  int size() {
    return ranges.size();
  }
}
