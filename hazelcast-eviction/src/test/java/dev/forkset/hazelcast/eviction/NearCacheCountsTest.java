package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.config.NearCacheConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.internal.util.RuntimeMemoryInfoAccessor;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.MapServiceContext;
import com.hazelcast.map.impl.eviction.EvictionChecker;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import org.junit.After;
import org.junit.Test;

/**
 * A heap policy counts the map's near cache on the member as stock {@code EvictionChecker}
 * counts it: the records' cost plus the near cache's owned entry memory cost.
 */
public class NearCacheCountsTest {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(1);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  private HazelcastInstance member(MaxSizePolicy policy, int size) {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    MapConfig m = TestMembers.map(config, "n", policy, size, EvictionPolicy.LRU, 0);
    // one member: its near cache holds its own entries only when told to
    m.setNearCacheConfig(new NearCacheConfig("n").setInMemoryFormat(InMemoryFormat.BINARY)
        .setCacheLocalEntries(true));
    return factory.newHazelcastInstance(config);
  }

  /**
   * Records of about 70% of the limit and a near cache of about as much: over the limit
   * together, not alone. The module decides as the stock checker does, on every record store.
   */
  private void assertSameDecisionAsStock(MaxSizePolicy policy, int size, long limit) {
    HazelcastInstance member = member(policy, size);
    IMap<Integer, byte[]> map = member.getMap("n");
    int entries = (int) (limit * 0.6 / 1024);
    for (int i = 0; i < entries; i++) {
      map.set(i, new byte[1024]);
    }
    for (int i = 0; i < entries; i++) {
      map.get(i);
    }
    long records = TestMembers.cost(member, "n");
    long nearCache = map.getLocalMapStats().getNearCacheStats().getOwnedEntryMemoryCost();
    assertTrue("records " + records + " B within the limit of " + limit + " B, and with the"
        + " near cache's " + nearCache + " B over it",
        records <= limit && records + nearCache > limit);
    MapServiceContext context = TestMembers.mapServiceContext(member);
    EvictionChecker stock = new EvictionChecker(new RuntimeMemoryInfoAccessor(), context);
    int stores = 0;
    for (int pid = 0; pid < member.getPartitionService().getPartitions().size(); pid++) {
      RecordStore<?> store = TestMembers.store(member, "n", pid);
      if (store == null || store.size() == 0) {
        continue;
      }
      stores++;
      assertEquals("records " + records + " B, near cache " + nearCache + " B, partition " + pid,
          stock.checkEvictable(store),
          store.getMapContainer().getEvictor().checkEvictable(store));
    }
    assertTrue(stores > 0);
  }

  @Test
  public void checkEvictable_usedHeapSize_countsTheNearCacheAsStockDoes() {
    assertSameDecisionAsStock(MaxSizePolicy.USED_HEAP_SIZE, 10, 10L << 20);
  }

  @Test
  public void checkEvictable_usedHeapPercentage_countsTheNearCacheAsStockDoes() {
    // 1% of this JVM's heap
    assertSameDecisionAsStock(MaxSizePolicy.USED_HEAP_PERCENTAGE, 1,
        Runtime.getRuntime().maxMemory() / 100);
  }

  /**
   * A near cache nearly as large as the limit: a pass evicts records down to half the limit, not
   * to what the near cache leaves of it (2 MB here), where stock evicts one entry per write. The
   * map is filled and read under a 20 MB limit, which a config update then lowers to 10 MB; one
   * write's passes run before the near cache hears of their evictions.
   */
  @Test
  public void pass_withANearCacheNearlyAsLargeAsTheLimit_keepsHalfTheLimitOfRecords()
      throws Exception {
    HazelcastInstance member = member(MaxSizePolicy.USED_HEAP_SIZE, 20);
    IMap<Integer, byte[]> map = member.getMap("n");
    long limit = 10L << 20;
    int entries = 7000;
    for (int i = 0; i < entries; i++) {
      map.set(i, new byte[1024]);
    }
    for (int i = 0; i < entries; i++) {
      map.get(i);
    }
    long nearCache = map.getLocalMapStats().getNearCacheStats().getOwnedEntryMemoryCost();
    assertTrue("near cache " + nearCache + " B, over 60% of 10 MB", nearCache > limit * 6 / 10);
    TestMembers.updateMapConfig(member, "n", 10);
    map.set(entries, new byte[1024]);
    TestMembers.drainPartitionThreads(member);
    long records = TestMembers.cost(member, "n");
    assertTrue("records " + records + " B, at least 45% of the limit (near cache " + nearCache
        + " B)", records >= limit * 45 / 100);
  }
}
