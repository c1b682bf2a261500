package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.test.HazelcastTestSupport;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.After;
import org.junit.Test;

/**
 * The running per-map cost a member keeps (read in O(1) on every write) equals the sum of its
 * record stores' estimates (what the built-in checker sums on every write), through concurrent
 * writes on 16 partition threads, updates, removes, clear, migrations in both directions, backup
 * promotion after a member loss, and destroy.
 */
public class RunningFootprintTest {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(4);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  private static Config config() {
    Config config = TestMembers.config(TestMembers.REGION_1M, 16);
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 4, EvictionPolicy.LRU, 1);
    return config;
  }

  private static long running(HazelcastInstance member) {
    return ((SizeProportionalEvictor) TestMembers.mapServiceContext(member).getMapContainer("m")
        .getEvictor()).footprint().used();
  }

  private static void assertRunningCostMatches(String when, HazelcastInstance... members)
      throws InterruptedException {
    for (HazelcastInstance member : members) {
      TestMembers.await(
          when + ": running cost equals the record stores' sum on " + member.getName(), 30,
          () -> running(member) == TestMembers.cost(member, "m"),
          () -> "running " + running(member) + ", sum " + TestMembers.cost(member, "m"));
    }
  }

  private static void writeConcurrently(IMap<Integer, byte[]> map, int writers, int ops)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    List<Future<?>> done = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      done.add(pool.submit(() -> {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < ops; i++) {
          int key = random.nextInt(20_000);
          switch (random.nextInt(6)) {
            case 0:
              map.remove(key);
              break;
            case 1:
              map.delete(key);
              break;
            default:
              map.set(key, new byte[random.nextInt(4000)]);
          }
        }
        return null;
      }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
  }

  @Test
  public void runningCost_equalsTheRecordStoresSum_throughWritesMigrationLossClearAndDestroy()
      throws Exception {
    HazelcastInstance a = factory.newHazelcastInstance(config());
    HazelcastInstance b = factory.newHazelcastInstance(config());
    IMap<Integer, byte[]> map = a.getMap("m");
    writeConcurrently(map, 8, 4000);
    assertTrue("the map evicted", TestMembers.metrics(a).getEvictionCount()
        + TestMembers.metrics(b).getEvictionCount() > 0);
    assertRunningCostMatches("after concurrent writes", a, b);

    HazelcastInstance c = factory.newHazelcastInstance(config());
    HazelcastTestSupport.waitAllForSafeState(a, b, c);
    writeConcurrently(map, 4, 2000);
    assertRunningCostMatches("after a member joined", a, b, c);

    b.getLifecycleService().terminate();
    HazelcastTestSupport.waitAllForSafeState(a, c);
    assertRunningCostMatches("after a member was lost and backups were promoted", a, c);

    map.clear();
    // IMap.clear() returns once every owner has cleared its partitions; the backups are cleared
    // by ClearBackupOperations the call does not wait for (stock 5.7.0 too). So the state to
    // wait for is the empty map on both members, primaries and backups: running and summed 0.
    for (HazelcastInstance member : new HazelcastInstance[] {a, c}) {
      TestMembers.await("after clear: no cost left on " + member.getName(), 30,
          () -> running(member) == 0 && TestMembers.cost(member, "m") == 0,
          () -> "running " + running(member) + ", sum " + TestMembers.cost(member, "m"));
    }

    writeConcurrently(map, 4, 1000);
    // destroy() returns once every member has run the map's partition destroy operations (it
    // only logs after 30 s), which queue behind the eviction passes of the writes above on each
    // partition thread. A pass queues its continuations while it runs, so before destroy()
    // returns, and they run before the set's operations on the same thread: nothing of the old
    // map runs after the set on the set's partition thread, and the set starts the new map.
    map.destroy();
    a.getMap("m").set(1, new byte[100]);
    assertRunningCostMatches("after destroy and first write", a, c);
    assertTrue(running(a) + running(c) > 0);
  }
}
