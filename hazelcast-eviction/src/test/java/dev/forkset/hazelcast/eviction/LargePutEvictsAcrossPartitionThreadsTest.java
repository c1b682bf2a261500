package dev.forkset.hazelcast.eviction;

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
 * One large put evicts old entries of the whole member, not only of its own partition thread:
 * otherwise the large entry becomes the oldest entry of its thread's partitions, and the next
 * small write on that thread evicts it, freeing far more than its own overshoot.
 */
public class LargePutEvictsAcrossPartitionThreadsTest {
  private static final int THREADS = 2;
  private static final int LIMIT_MB = 8;
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(1);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  @Test
  public void smallWritesAfterALargePut_onItsThread_doNotEvictTheLargeEntry() throws Exception {
    // The large put alone must bring the map back under its limit before the small writes: a
    // pass capped by time would leave the rest to them, and the test would not tell the two apart.
    Config config = TestMembers.withoutTimeCap(TestMembers.config(TestMembers.REGION_1M, THREADS));
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, LIMIT_MB, EvictionPolicy.LRU, 0);
    HazelcastInstance member = factory.newHazelcastInstance(config);
    IMap<Integer, byte[]> map = member.getMap("m");
    long limit = LIMIT_MB << 20;
    for (int i = 0; i < 2000; i++) {
      map.set(i, new byte[10_000]);
    }
    TestMembers.drainPartitionThreads(member);
    // LRU times are whole seconds: the large entry is newer than every small one, and the small
    // writes after it are newer still.
    Thread.sleep(1100);
    int big = -1;
    // three quarters of the limit: most of the map is the large entry, which its own pass may
    // not evict
    map.set(big, new byte[(LIMIT_MB << 20) * 3 / 4]);
    // The large put's pass and the continuations it handed to the other thread end before the
    // small writes, which must find the map under its limit and no pass of the large put left.
    TestMembers.drainPartitionThreads(member);
    TestMembers.await("back under the limit after the large put", 60,
        () -> TestMembers.cost(member, "m") <= limit,
        () -> TestMembers.cost(member, "m") + " of " + limit + " bytes");
    Thread.sleep(1100);
    int thread = partition(member, big) % THREADS;
    int written = 0;
    for (int k = 100_000; written < 20; k++) {
      if (partition(member, k) % THREADS == thread) {
        map.set(k, new byte[10_000]);
        written++;
      }
    }
    // the small writes' passes end before the large entry is looked up
    TestMembers.drainPartitionThreads(member);
    long cost = TestMembers.cost(member, "m");
    assertTrue("the large entry was evicted by small writes on its partition thread (map at "
        + cost + " bytes of " + limit + ")", map.containsKey(big));
  }

  private static int partition(HazelcastInstance member, int key) {
    return member.getPartitionService().getPartition(key).getPartitionId();
  }
}
