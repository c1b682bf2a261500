package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.MapContainer;
import com.hazelcast.map.impl.eviction.Evictor;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import org.junit.After;
import org.junit.Test;

/**
 * A map-config update (Management Center, REST: {@code UpdateMapConfigOperation}, which calls
 * {@code MapContainer#initEvictor}) gives the map a new evictor; it takes over the map's running
 * total, so the heap limit stays an O(1) check and back-pressure sees the map's real cost.
 */
public class ConfigUpdateKeepsAccountingTest {
  private static final long MB = 1 << 20;
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(1);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  private static MapContainer container(HazelcastInstance member) {
    return TestMembers.mapServiceContext(member).getMapContainer("u");
  }

  private static SizeProportionalEvictor evictor(HazelcastInstance member) {
    Evictor e = container(member).getEvictor();
    assertTrue(String.valueOf(e), e instanceof SizeProportionalEvictor);
    return (SizeProportionalEvictor) e;
  }

  /**
   * A member whose map "u" has the given eviction; limits are asserted once the writes' passes
   * ended, with no further write, so passes run without a time cap.
   */
  private HazelcastInstance member(MaxSizePolicy policy, int size, EvictionPolicy eviction) {
    Config config = TestMembers.withoutTimeCap(TestMembers.config(TestMembers.REGION_1M, 2));
    TestMembers.map(config, "u", policy, size, eviction, 0);
    return factory.newHazelcastInstance(config);
  }

  private static void updateConfig(HazelcastInstance member, int mb) throws Exception {
    TestMembers.updateMapConfig(member, "u", mb);
  }

  @Test
  public void initEvictor_theNewEvictorTakesOverTheRunningTotal() throws Exception {
    HazelcastInstance member = member(MaxSizePolicy.USED_HEAP_SIZE, 10, EvictionPolicy.LRU);
    IMap<Integer, byte[]> map = member.getMap("u");
    for (int i = 0; i < 4000; i++) {
      map.set(i, new byte[1024]);
    }
    SizeProportionalEvictor before = evictor(member);
    long cost = TestMembers.cost(member, "u");
    assertEquals(cost, before.footprint().used());

    updateConfig(member, 4);

    SizeProportionalEvictor after = evictor(member);
    assertNotSame("the update built a new evictor", before, after);
    assertEquals("the new evictor's running total", cost, after.footprint().used());
    for (int i = 4000; i < 4100; i++) {
      map.set(i, new byte[1024]);
    }
    TestMembers.drainPartitionThreads(member);
    assertFalse("the map switched to summing its partitions",
        after.footprint().isMeasured());
    assertEquals(0, TestMembers.metrics(member).getSummedMaps());
    assertEquals(TestMembers.cost(member, "u"), after.footprint().used());
    assertTrue("cost " + TestMembers.cost(member, "u") + " within the new 4 MB limit",
        TestMembers.cost(member, "u") <= 4 * MB);
  }

  /**
   * A map without eviction gets a heap limit (Management Center's usual first change): its
   * record stores' estimators fed no running total; the map sums its partitions while they are
   * bound to it, then uses the total again.
   */
  @Test
  public void initEvictor_onAMapWithoutEviction_bindsTheEstimatorsAndStopsSumming()
      throws Exception {
    HazelcastInstance member = member(MaxSizePolicy.PER_NODE, Integer.MAX_VALUE,
        EvictionPolicy.NONE);
    IMap<Integer, byte[]> map = member.getMap("u");
    for (int i = 0; i < 4000; i++) {
      map.set(i, new byte[1024]);
    }

    updateConfig(member, 4);

    for (int i = 4000; i < 4100; i++) {
      map.set(i, new byte[1024]);
    }
    // the writes' passes, then the binding they asked every partition thread for
    TestMembers.drainPartitionThreads(member);
    SizeProportionalEvictor after = evictor(member);
    assertFalse("the map still sums its partitions", after.footprint().isMeasured());
    assertEquals(0, TestMembers.metrics(member).getSummedMaps());
    assertEquals(TestMembers.cost(member, "u"), after.footprint().used());
    for (int i = 4100; i < 4200; i++) {
      map.set(i, new byte[1024]);
    }
    TestMembers.drainPartitionThreads(member);
    assertEquals(TestMembers.cost(member, "u"), after.footprint().used());
    assertTrue("cost " + TestMembers.cost(member, "u") + " within the new 4 MB limit",
        TestMembers.cost(member, "u") <= 4 * MB);
  }

  /**
   * An update that lowers the limit below an entry's cost: that entry is oversized from then on
   * and is evicted first, not the entries around it.
   */
  @Test
  public void initEvictor_thatLowersTheLimit_evictsTheEntryNowOversizedAndKeepsTheOthers()
      throws Exception {
    HazelcastInstance member = member(MaxSizePolicy.USED_HEAP_SIZE, 10, EvictionPolicy.LRU);
    IMap<Object, byte[]> map = member.getMap("u");
    for (int i = 0; i < 1000; i++) {
      map.set(i, new byte[1024]);
    }
    map.set("big", new byte[5 << 20]);

    updateConfig(member, 4);

    // a write on another partition thread than the entry's, whose pass must not evict around it
    int threads = TestMembers.partitionThreads(member);
    int bigThread = TestMembers.partitionId(member, "big") % threads;
    int key = 1000;
    while (TestMembers.partitionId(member, key) % threads == bigThread) {
      key++;
    }
    map.set(key, new byte[1024]);
    TestMembers.drainPartitionThreads(member);
    java.util.Set<Object> keys = map.localKeySet();
    assertFalse("the entry over the new limit is still there", keys.contains("big"));
    assertEquals("entries left besides it", 1001, keys.size());
    assertEquals(1, TestMembers.metrics(member).getOversizedEvictions());
    assertTrue("cost " + TestMembers.cost(member, "u"), TestMembers.cost(member, "u") <= 4 * MB);
  }
}
