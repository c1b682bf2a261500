package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

/** The ranges a write must not store into: overlaps, unions and the bound. */
public class BadRangesTest {

  @Test
  public void overlapping_findsOnlyRangesSharingABytes() {
    BadRanges r = new BadRanges();
    assertTrue(r.add(1000, 100));
    assertNull(r.overlapping(900, 100)); // ends where the range starts
    assertNull(r.overlapping(1100, 10)); // starts where it ends
    assertArrayEquals(new long[] {1000, 1100}, r.overlapping(1099, 1));
    assertArrayEquals(new long[] {1000, 1100}, r.overlapping(0, 5000)); // contains it
    assertArrayEquals(new long[] {1000, 1100}, r.overlapping(1010, 10)); // inside it
    assertFalse("inside a recorded range", r.add(1010, 10));
  }

  @Test
  public void add_unitesTouchingRanges() {
    BadRanges r = new BadRanges();
    r.add(1000, 100);
    r.add(3000, 100);
    r.add(5000, 100);
    assertTrue(r.add(1050, 2000)); // 1000..3100
    assertEquals(2, r.size());
    assertArrayEquals(new long[] {1000, 3100}, r.overlapping(2000, 1));
    assertArrayEquals(new long[] {5000, 5100}, r.overlapping(5050, 1));
    assertTrue(r.add(3100, 1900)); // touches both: one range
    assertEquals(1, r.size());
    assertArrayEquals(new long[] {1000, 5100}, r.overlapping(4000, 1));
  }

  /** Past the bound a new range widens its nearest neighbour: never a bad byte forgotten. */
  @Test
  public void add_pastTheBound_widensANeighbourAndForgetsNothing() {
    BadRanges r = new BadRanges();
    for (int i = 0; i < BadRanges.MAX; i++) {
      r.add(i * 1000L, 10);
    }
    assertEquals(BadRanges.MAX, r.size());
    r.add(5500, 10);
    assertTrue(r.size() <= BadRanges.MAX);
    assertTrue(r.overlapping(5500, 10) != null);
    for (int i = 0; i < BadRanges.MAX; i++) {
      assertTrue("range " + i, r.overlapping(i * 1000L, 10) != null);
    }
  }
}
