package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import org.junit.After;
import org.junit.Test;

/**
 * A pass that stops because another thread's eviction is in flight (its cost reserved, its entry
 * already gone from the total, {@link MapFootprint}) leaves the rest to that thread; when that
 * thread then has nothing left to evict, the rest must still be freed, without a further write.
 * Two partitions on two partition threads; a map interceptor holds thread 0 inside the eviction
 * of its one entry, which is the moment a pass on thread 1 sees that eviction twice.
 */
public class PassesStoppedByEvictionsInFlightTest {
  private static final int HELD_VALUE = 100_000;
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(1);

  @After
  public void shutdown() {
    HoldEviction.GATE.release();
    factory.terminateAll();
  }

  @Test
  public void passStoppedByAnEvictionInFlight_whoseThreadRunsDry_theMapEndsWithinItsLimit()
      throws Exception {
    Config config = TestMembers.withoutTimeCap(TestMembers.config(TestMembers.REGION_1M, 2));
    config.setProperty("hazelcast.partition.count", "2");
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 1, EvictionPolicy.LRU, 0);
    HazelcastInstance member = factory.newHazelcastInstance(config);
    IMap<Integer, byte[]> map = member.getMap("m");
    EvictionMetrics metrics = TestMembers.metrics(member);
    long limit = 1L << 20;
    int key = 0;
    while (TestMembers.partitionId(member, key) != 0) {
      key++;
    }
    // thread 0's one entry: the eviction the interceptor holds
    map.put(key, new byte[HELD_VALUE]);
    // thread 1 holds the rest, 40 KB short of the limit
    int next = 1;
    long small = 0;
    while (TestMembers.cost(member, "m") < limit - 40_000) {
      next = nextKeyOf(member, 1, next + 1);
      long before = TestMembers.cost(member, "m");
      map.put(next, new byte[10_000]);
      small = TestMembers.cost(member, "m") - before;
    }
    assertEquals("nothing evicted while filling", 0, metrics.getEvictionCount());
    map.addInterceptor(new HoldEviction());
    HoldEviction.GATE.arm();

    // 300 KB over: thread 1 frees its share (about 9/10) and hands the rest to thread 0, whose
    // pass evicts its one entry and is held there
    next = nextKeyOf(member, 1, next + 1);
    map.put(next, new byte[300_000]);
    assertTrue("thread 0's pass reached the eviction of its entry",
        HoldEviction.GATE.awaitHeld(30));
    TestMembers.drainPartitionThreadOf(member, 1);
    long held = TestMembers.cost(member, "m");
    assertTrue("thread 0's eviction alone brings the map within its limit: " + held,
        held <= limit);
    // A write that leaves the map 30 KB over, less than the held entry: its pass counts that
    // entry as both gone and in flight, and stops
    long evictions = metrics.getEvictionCount();
    next = nextKeyOf(member, 1, next + 1);
    map.put(next, new byte[(int) (limit - held + 30_000)]);
    TestMembers.drainPartitionThreadOf(member, 1);
    long over = TestMembers.cost(member, "m");
    assertTrue("the write left the map over its limit: " + over, over > limit);
    assertEquals("the write's pass evicted nothing while thread 0's eviction was in flight",
        evictions, metrics.getEvictionCount());

    // thread 0 goes on, and has nothing more to evict
    HoldEviction.GATE.release();
    TestMembers.drainPartitionThreads(member);
    TestMembers.await("the map back within its limit without a further write", 10,
        () -> TestMembers.cost(member, "m") <= limit,
        () -> TestMembers.cost(member, "m") + " of " + limit + " bytes");
    long after = TestMembers.cost(member, "m");
    assertTrue("freed the overshoot plus at most one entry of " + small + " bytes: the map at "
        + after + " of " + limit, after > limit - small);
  }

  /** The first key from {@code from} up that falls in partition {@code partitionId}. */
  private static int nextKeyOf(HazelcastInstance member, int partitionId, int from) {
    int k = from;
    while (TestMembers.partitionId(member, k) != partitionId) {
      k++;
    }
    return k;
  }

  /**
   * Holds the thread that evicts the {@value #HELD_VALUE}-byte value, once armed: the record
   * store calls {@code interceptRemove} after the record left the store's estimate and before
   * the eviction's reservation is released.
   */
  static final class HoldEviction extends PassThroughInterceptor {
    static final HoldGate GATE = new HoldGate();

    @Override
    public Object interceptRemove(Object removedValue) {
      if (removedValue instanceof byte[] && ((byte[]) removedValue).length == HELD_VALUE) {
        GATE.hold();
      }
      return removedValue;
    }
  }
}
