package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

public class ContinuationsTest {
  private final List<Integer> asked = new ArrayList<>();
  private final List<Runnable> queued = new ArrayList<>();
  private final List<Integer> ran = new ArrayList<>();
  private final Continuations continuations = new Continuations(4, 271, (thread, pass) -> {
    asked.add(thread);
    queued.add(pass);
  }, ran::add);

  @Test
  public void handOver_asksEveryOtherThreadOnce_untilItsPassHasRun() {
    assertEquals(3, continuations.handOver(1));
    assertEquals(Arrays.asList(0, 2, 3), asked);
    assertEquals("only thread 1 has no pass waiting", 1, continuations.handOver(2));
    assertEquals("a pass is waiting on every other thread", 0, continuations.handOver(3));
    queued.get(0).run(); // thread 0's pass runs
    assertEquals(Arrays.asList(0), ran);
    assertEquals("thread 0 can be asked again", 1, continuations.handOver(3));
    assertEquals(Arrays.asList(0, 2, 3, 1, 0), asked);
  }

  @Test
  public void handOver_fewerPartitionsThanThreads_asksOnlyThreadsWithPartitions() {
    Continuations few = new Continuations(16, 3, (thread, pass) -> asked.add(thread), ran::add);
    assertEquals(2, few.handOver(0));
    assertEquals(Arrays.asList(1, 2), asked);
  }
}
