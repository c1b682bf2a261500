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
import com.hazelcast.map.impl.MapService;
import com.hazelcast.internal.management.operation.UpdateMapConfigOperation;
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

  /** Sends the operation Management Center and REST send: LRU, USED_HEAP_SIZE, {@code mb}. */
  private static void updateConfig(HazelcastInstance member, int mb) throws Exception {
    UpdateMapConfigOperation op = new UpdateMapConfigOperation("u", 0, 0, mb,
        MaxSizePolicy.USED_HEAP_SIZE.getId(), false, EvictionPolicy.LRU.getId(), false, null);
    TestMembers.nodeEngine(member).getOperationService()
        .invokeOnTarget(MapService.SERVICE_NAME, op,
            TestMembers.nodeEngine(member).getThisAddress()).get();
  }

  @Test
  public void initEvictor_theNewEvictorTakesOverTheRunningTotal() throws Exception {
    // the 4 MB limit is asserted once the writes' passes ended, with no further write
    Config config = TestMembers.withoutTimeCap(TestMembers.config(TestMembers.REGION_1M, 2));
    TestMembers.map(config, "u", MaxSizePolicy.USED_HEAP_SIZE, 10, EvictionPolicy.LRU, 0);
    HazelcastInstance member = factory.newHazelcastInstance(config);
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
}
