package dev.forkset.hbase.pmem;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The pages of one mapping written since it was last forced, as runs of whole pages.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>A force costs what its range spans, not what was written in it: with MAP_SYNC the JDK
 *       writes back every cache line of the range, through the page cache msync walks it. So
 *       each write adds its own pages, and a sync forces each run; two blocks far apart cost two
 *       blocks, not the distance between them.
 *   <li>Runs are disjoint and never touch (overlapping or adjacent runs merge), kept by start.
 *       Writes between two syncs are one writer batch, so there are few runs.
 *   <li>The count is bounded ({@link #MAX_RUNS}) in case syncs keep failing: past it a new run
 *       merges with its nearest neighbour, which forces the gap between them too: more work,
 *       never a written page left out.
 *   <li>Not thread-safe; {@link Mappings} guards it.
 * </ol>
 */
final class DirtyRuns {
  static final int MAX_RUNS = 4096;

  /** Start of a run (inclusive) to its end (exclusive), both multiples of {@link Layout#PAGE}. */
  private final TreeMap<Integer, Integer> runs = new TreeMap<>();
  private final int capacity;

  /** @param capacity the mapping's length, a multiple of {@link Layout#PAGE} */
  DirtyRuns(int capacity) {
    this.capacity = capacity;
  }

  /** Adds the pages that bytes [from, to) of the mapping lie on. */
  void add(int from, int to) {
    if (from >= to) {
      return;
    }
    int start = from / Layout.PAGE * Layout.PAGE;
    int end = (int) Math.min(capacity, ((long) to + Layout.PAGE - 1) / Layout.PAGE * Layout.PAGE);
    Map.Entry<Integer, Integer> before = runs.floorEntry(start);
    if (before != null && before.getValue() >= start) {
      start = before.getKey();
      end = Math.max(end, before.getValue());
    }
    Map.Entry<Integer, Integer> after = runs.ceilingEntry(start);
    while (after != null && after.getKey() <= end) {
      end = Math.max(end, after.getValue());
      runs.remove(after.getKey());
      after = runs.ceilingEntry(start);
    }
    if (runs.size() >= MAX_RUNS && !runs.containsKey(start)) {
      Map.Entry<Integer, Integer> lower = runs.lowerEntry(start);
      Map.Entry<Integer, Integer> higher = runs.higherEntry(start);
      if (higher == null || (lower != null && start - lower.getValue() <= higher.getKey() - end)) {
        start = lower.getKey();
      } else {
        end = higher.getValue();
        runs.remove(higher.getKey());
      }
    }
    runs.put(start, end);
  }

  boolean isEmpty() {
    return runs.isEmpty();
  }

  /** The runs in address order as {start, end} pairs, leaving none behind. */
  List<int[]> takeAll() {
    List<int[]> out = new ArrayList<>(runs.size());
    for (Map.Entry<Integer, Integer> e : runs.entrySet()) {
      out.add(new int[] {e.getKey(), e.getValue()});
    }
    runs.clear();
    return out;
  }
}
