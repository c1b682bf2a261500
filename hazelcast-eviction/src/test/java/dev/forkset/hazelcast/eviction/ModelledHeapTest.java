package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertTrue;

import com.hazelcast.config.CacheDeserializedValues;
import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.query.Predicates;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import org.junit.After;
import org.junit.Test;

/** What the heap holds for an entry beyond its serialized key and value. */
public class ModelledHeapTest {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(1);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  /**
   * With cache-deserialized-values ALWAYS a query leaves each value deserialized beside its
   * serialized form: the entry counts both, from the put on (a cost that changed when a query
   * ran would not be taken back in full when the entry goes).
   */
  @Test
  public void cacheDeserializedValuesAlways_countsTheCachedCopy() {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 100, EvictionPolicy.LRU, 0)
        .setCacheDeserializedValues(CacheDeserializedValues.ALWAYS);
    TestMembers.map(config, "n", MaxSizePolicy.USED_HEAP_SIZE, 100, EvictionPolicy.LRU, 0)
        .setCacheDeserializedValues(CacheDeserializedValues.NEVER);
    HazelcastInstance member = factory.newHazelcastInstance(config);
    IMap<Integer, byte[]> cached = member.getMap("m");
    IMap<Integer, byte[]> plain = member.getMap("n");
    for (int i = 0; i < 10; i++) {
      cached.put(i, new byte[100_000]);
      plain.put(i, new byte[100_000]);
    }
    cached.values(Predicates.alwaysTrue()); // fills the caches
    long withCache = TestMembers.cost(member, "m");
    long without = TestMembers.cost(member, "n");
    assertTrue("cost with cached values " + withCache + ", without " + without,
        withCache >= without + 10 * 100_000);
  }
}
