package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Test;

public class EvictionLoopTest {
  private final AtomicInteger refills = new AtomicInteger();
  private final AtomicLong clock = new AtomicLong();

  private EvictionLoop.Refill<Integer> sampler(Integer... entries) {
    return pool -> {
      refills.incrementAndGet();
      pool.refill(new ArrayList<>(Arrays.asList(entries)), Comparator.naturalOrder());
      return true;
    };
  }

  @Test
  public void run_goalMet_endsDoneAndRefillsOnlyWhenThePoolIsUsedUp() {
    EvictionLoop<Integer> loop = new EvictionLoop<>(1000, 1_000_000_000L, 4, clock::get);
    List<Integer> evicted = new ArrayList<>();
    EvictionLoop.Outcome outcome = loop.run(new EvictionPool<>(4), sampler(5, 1, 4, 2, 3, 9),
        c -> {
          evicted.add(c);
          return 1;
        }, () -> evicted.size() < 6);
    assertEquals(EvictionLoop.Outcome.DONE, outcome);
    assertEquals(Arrays.asList(1, 2, 3, 4, 1, 2), evicted);
    assertEquals(2, refills.get());
  }

  @Test
  public void run_onlyLockedCandidates_endsExhaustedAfterTwoIdleRefills() {
    EvictionLoop<Integer> loop = new EvictionLoop<>(20_000, 100_000_000L, 4, clock::get);
    EvictionLoop.Outcome outcome = loop.run(new EvictionPool<>(4), sampler(1, 2, 3, 4, 5),
        c -> EvictionLoop.SKIPPED, () -> true);
    assertEquals(EvictionLoop.Outcome.EXHAUSTED, outcome);
    assertEquals(EvictionLoop.IDLE_REFILLS, refills.get());
  }

  @Test
  public void run_emptyDomain_endsExhausted() {
    EvictionLoop<Integer> loop = new EvictionLoop<>(10, 1_000_000L, 4, clock::get);
    assertEquals(EvictionLoop.Outcome.EXHAUSTED,
        loop.run(new EvictionPool<>(4), pool -> false, c -> 1, () -> true));
  }

  @Test
  public void run_evictionCap_endsCapped() {
    EvictionLoop<Integer> loop = new EvictionLoop<>(5, 1_000_000_000L, 4, clock::get);
    AtomicInteger evictions = new AtomicInteger();
    EvictionLoop.Outcome outcome = loop.run(new EvictionPool<>(4), sampler(1, 2, 3, 4),
        c -> evictions.incrementAndGet(), () -> true);
    assertEquals(EvictionLoop.Outcome.CAPPED, outcome);
    assertEquals(5, evictions.get());
  }

  @Test
  public void run_timeCap_endsCapped() {
    EvictionLoop<Integer> loop = new EvictionLoop<>(1000, 10, 4, clock::get);
    AtomicInteger evictions = new AtomicInteger();
    EvictionLoop.Outcome outcome = loop.run(new EvictionPool<>(4), sampler(1, 2, 3, 4), c -> {
      clock.addAndGet(4);
      return evictions.incrementAndGet();
    }, () -> true);
    assertEquals(EvictionLoop.Outcome.CAPPED, outcome);
    assertEquals(3, evictions.get());
  }

  @Test
  public void run_deadlinePassedBeforeTheFirstEviction_stillEvictsOne() {
    // A partition thread descheduled past the deadline before it evicted anything (16 partition
    // threads on 2 cores) must still free one entry, or a count policy's partition stays over.
    EvictionLoop<Integer> loop = new EvictionLoop<>(1000, 10, 4, clock::get);
    AtomicInteger evictions = new AtomicInteger();
    EvictionLoop.Outcome outcome = loop.run(new EvictionPool<>(4), pool -> {
      clock.addAndGet(100);
      return sampler(1, 2, 3, 4).refill(pool);
    }, c -> evictions.incrementAndGet(), () -> true);
    assertEquals(EvictionLoop.Outcome.CAPPED, outcome);
    assertEquals(1, evictions.get());
  }

  @Test
  public void run_otherThreadsCoverTheRest_endsDone() {
    EvictionLoop<Integer> loop = new EvictionLoop<>(1000, 1_000_000_000L, 4, clock::get);
    assertEquals(EvictionLoop.Outcome.DONE, loop.run(new EvictionPool<>(4),
        sampler(1, 2, 3, 4), c -> EvictionLoop.ENOUGH, () -> true));
  }
}
