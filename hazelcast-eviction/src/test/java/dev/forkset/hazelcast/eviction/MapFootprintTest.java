package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Test;

public class MapFootprintTest {

  @Test
  public void used_isTheSumOfEveryChange_fromManyThreads() throws Exception {
    MapFootprint footprint = new MapFootprint();
    ExecutorService pool = Executors.newFixedThreadPool(16);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < 16; t++) {
      done.add(pool.submit(() -> {
        for (int i = 0; i < 100_000; i++) {
          footprint.add(3);
          footprint.add(-1);
        }
      }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
    assertEquals(16L * 100_000 * 2, footprint.used());
  }

  @Test
  public void reserve_onlyWhileAboveTheTarget_countingWhatIsInFlight() {
    MapFootprint footprint = new MapFootprint();
    footprint.add(110);
    assertTrue(footprint.above(100));
    assertTrue(footprint.reserve(6, 100));
    assertTrue("104 left once the 6 in flight are gone", footprint.reserve(6, 100));
    assertFalse("98 left: nothing more to reserve", footprint.reserve(6, 100));
    assertFalse(footprint.above(100));
    footprint.add(-6);
    footprint.release(6);
    assertFalse(footprint.above(100));
    footprint.add(-6);
    footprint.release(6);
    assertEquals(98, footprint.used());
  }

  /**
   * An eviction whose entry has left the total but whose reservation is not released yet is
   * counted twice: "not above" is then a doubt, which the last pass to end settles.
   */
  @Test
  public void settleDoubt_notAboveWhileAnEvictionIsInFlight_isTakenOnceNothingIsInFlight() {
    MapFootprint footprint = new MapFootprint();
    footprint.add(110);
    assertTrue(footprint.reserve(20, 100));
    footprint.add(-20); // the entry is gone, its 20 still reserved
    footprint.add(15); // a write: 105, really 5 over
    assertFalse("the eviction in flight counted twice", footprint.reserve(10, 100));
    assertFalse(footprint.above(100));
    assertFalse("an eviction is still in flight", footprint.settleDoubt());
    footprint.release(20);
    assertTrue(footprint.settleDoubt());
    assertTrue("the exact total is over", footprint.above(100));
    assertFalse("taken once", footprint.settleDoubt());
  }

  @Test
  public void settleDoubt_notAboveWithNothingInFlight_isNoDoubt() {
    MapFootprint footprint = new MapFootprint();
    footprint.add(90);
    assertFalse(footprint.above(100));
    assertFalse(footprint.reserve(5, 100));
    assertFalse(footprint.settleDoubt());
  }

  /**
   * Sixteen threads evict at once from the same overshoot, each as fast as it can: together
   * they free the overshoot plus at most one entry, never once each.
   */
  @Test
  public void reserve_sixteenThreadsAtOnce_freeTheOvershootPlusAtMostOneEntry() throws Exception {
    for (int round = 0; round < 50; round++) {
      MapFootprint footprint = new MapFootprint();
      long limit = 1_000_000;
      long entry = 1_000;
      long overshoot = 250_000;
      footprint.add(limit + overshoot);
      AtomicLong freed = new AtomicLong();
      CyclicBarrier start = new CyclicBarrier(16);
      ExecutorService pool = Executors.newFixedThreadPool(16);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        done.add(pool.submit(() -> {
          start.await();
          while (footprint.above(limit)) {
            if (!footprint.reserve(entry, limit)) {
              break;
            }
            footprint.add(-entry); // the estimator's adjustment when the entry goes
            freed.addAndGet(entry);
            footprint.release(entry);
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      pool.shutdown();
      assertTrue("round " + round + ": freed " + freed + " for an overshoot of " + overshoot,
          freed.get() >= overshoot && freed.get() <= overshoot + entry);
    }
  }
}
