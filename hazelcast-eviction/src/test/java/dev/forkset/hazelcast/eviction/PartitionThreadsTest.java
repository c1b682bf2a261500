package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

public class PartitionThreadsTest {
  /** The partition thread index the test pretends to run on; -1 for any other thread. */
  private final ThreadLocal<Integer> running = ThreadLocal.withInitial(() -> -1);
  private final PartitionThreads threads = new PartitionThreads(4, 10, running::get);

  @Test
  public void perThread_eachPartitionThreadKeepsItsOwnSlot() {
    AtomicInteger made = new AtomicInteger();
    PartitionThreads.PerThread<int[]> slots = threads.perThread(t -> new int[] {t, made.incrementAndGet()});
    running.set(2);
    int[] a = slots.get();
    assertSame(a, slots.get());
    assertEquals(2, a[0]);
    running.set(3);
    assertNotSame(a, slots.get());
    running.set(2);
    assertSame(a, slots.get());
  }

  @Test
  public void perThread_notAPartitionThread_getsAFreshObjectEachTime() {
    PartitionThreads.PerThread<Object> slots = threads.perThread(t -> new Object());
    running.set(-1);
    assertNotSame(slots.get(), slots.get());
    running.set(9); // beyond the thread count: not one of this member's partition threads
    assertNotSame(slots.get(), slots.get());
  }

  @Test
  public void perPartition_onlyThePartitionsThreadReachesItsSlot() {
    PartitionThreads.PerPartition<Object> slots = threads.perPartition(pid -> new Object());
    running.set(1); // serves partitions 1, 5, 9
    Object p5 = slots.get(5);
    assertSame(p5, slots.get(5));
    assertNotSame("partition 6 belongs to thread 2", slots.get(6), slots.get(6));
    running.set(2);
    assertNotSame("thread 2 never sees thread 1's slot", p5, slots.get(5));
    assertEquals(1, threads.threadOf(9));
  }
}
