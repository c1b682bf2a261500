package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.junit.Test;

public class DirtyRunsTest {
  private static final int PAGE = Layout.PAGE;

  @Test
  public void add_pastTheBound_mergesWithTheNearestRunAndLeavesNoPageOut() {
    int pages = 4 * DirtyRuns.MAX_RUNS;
    DirtyRuns runs = new DirtyRuns(pages * PAGE);
    boolean[] written = new boolean[pages];
    // Every other page, then a few more: more separate runs than the bound allows.
    for (int p = 0; p < pages; p += 2) {
      runs.add(p * PAGE + 1, p * PAGE + 2);
      written[p] = true;
    }
    List<int[]> taken = runs.takeAll();
    assertTrue(taken.size() + " runs", taken.size() <= DirtyRuns.MAX_RUNS);
    boolean[] covered = new boolean[pages];
    int end = -1;
    for (int[] run : taken) {
      assertTrue("runs in address order, disjoint", run[0] > end);
      end = run[1];
      for (int b = run[0]; b < run[1]; b += PAGE) {
        covered[b / PAGE] = true;
      }
    }
    for (int p = 0; p < pages; p++) {
      assertTrue("written page " + p + " not forced", !written[p] || covered[p]);
    }
    assertTrue(runs.isEmpty());
  }

  @Test
  public void add_atTheMappingsEnd_stopsAtItsCapacity() {
    DirtyRuns runs = new DirtyRuns(3 * PAGE);
    runs.add(3 * PAGE - 1, 3 * PAGE);
    List<int[]> taken = runs.takeAll();
    assertEquals(1, taken.size());
    assertArrayEquals(new int[] {2 * PAGE, 3 * PAGE}, taken.get(0));
  }
}
