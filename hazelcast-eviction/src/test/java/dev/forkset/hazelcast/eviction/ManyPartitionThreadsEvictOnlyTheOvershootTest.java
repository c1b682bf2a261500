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
 * With 16 partition threads each thread holds 1/16 of the map. A value larger than that makes the
 * put's own thread hand the rest of the overshoot to the other 15; together they must free the
 * overshoot and not much more: at most the large value's cost plus one entry, however many
 * threads take part.
 */
public class ManyPartitionThreadsEvictOnlyTheOvershootTest {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(1);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  @Test
  public void oneLargePut_sixteenPartitionThreads_freesAtMostItsCostPlusOneEntry()
      throws Exception {
    // One write must bring the map back: no pass may stop at the time cap (16 partition threads
    // on 2 cores make that likely), since a capped pass leaves the rest for a next write.
    Config config = TestMembers.withoutTimeCap(TestMembers.config(TestMembers.REGION_1M, 16));
    config.setProperty("hazelcast.partition.count", "271");
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 16, EvictionPolicy.LRU, 0);
    HazelcastInstance member = factory.newHazelcastInstance(config);
    IMap<Integer, byte[]> map = member.getMap("m");
    EvictionMetrics metrics = TestMembers.metrics(member);
    long limit = 16L << 20;

    int i = 0;
    while (metrics.getEvictionCount() == 0) {
      map.put(i++, new byte[1000]);
    }
    for (int n = 0; n < 2000; n++) {
      map.put(i++, new byte[1000]);
    }
    // the passes of the small puts, and their continuations, end before the "before" values
    TestMembers.drainPartitionThreads(member);
    long small = TestMembers.cost(member, "m") / map.size() + 1;
    long freedBefore = metrics.getBytesFreed();
    long usedBefore = TestMembers.cost(member, "m");

    map.put(-1, new byte[6 << 20]);
    // the put's own pass and the continuations it handed to the other 15 threads
    TestMembers.drainPartitionThreads(member);
    TestMembers.await("back under the limit after the large put", 60,
        () -> TestMembers.cost(member, "m") <= limit,
        () -> TestMembers.cost(member, "m") + " of " + limit + " bytes");
    long freed = metrics.getBytesFreed() - freedBefore;
    long used = TestMembers.cost(member, "m");
    long big = used + freed - usedBefore;

    assertTrue("back under the limit: " + used + " > " + limit, used <= limit);
    assertTrue("freed " + freed + " bytes for a put of " + big + " bytes (entries of about "
        + small + " bytes; before the put " + usedBefore + " of " + limit + ")",
        freed <= big + small);
  }
}
