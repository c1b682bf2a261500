package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.eviction.MapEvictionProviders;
import com.hazelcast.spi.impl.NodeEngine;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import dev.forkset.hazelcast.chunked.ChunkSize;
import java.util.UUID;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/** One real member in this JVM with the module on the class path (the custom jar first). */
public class EvictionBySizeOnOneMemberTest {
  private static HazelcastInstance member;

  static Config config(String provider) {
    Config config = new Config();
    config.setClusterName("gcaware-" + UUID.randomUUID());
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.partition.count", "31");
    if (provider != null) {
      config.setProperty(MapEvictionProviders.PROPERTY, provider);
    }
    // the large put's test asserts the map back under its limit with no further write
    TestMembers.withoutTimeCap(config);
    config.getNetworkConfig().setPort(15701).setPortAutoIncrement(true);
    config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    config.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
    config.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
    MapConfig m = new MapConfig("limited").setInMemoryFormat(InMemoryFormat.BINARY);
    m.getEvictionConfig().setEvictionPolicy(EvictionPolicy.LRU)
        .setMaxSizePolicy(MaxSizePolicy.USED_HEAP_SIZE).setSize(20);
    config.addMapConfig(m);
    return config;
  }

  @BeforeClass
  public static void start() {
    member = Hazelcast.newHazelcastInstance(config(null));
  }

  @AfterClass
  public static void stop() {
    if (member != null) {
      member.shutdown();
    }
  }

  private static GcAwareEvictionProvider provider() {
    NodeEngine ne = ((HazelcastInstanceProxy) member).getOriginal().node.getNodeEngine();
    return (GcAwareEvictionProvider) MapEvictionProviders.forNode(ne);
  }

  /**
   * A put's response is sent before its eviction pass runs, and the pass may hand the rest of
   * the overshoot to the other partition threads: wait for those passes, then for the limit.
   */
  private static void awaitUnder(IMap<?, ?> map, long limit) throws InterruptedException {
    TestMembers.drainPartitionThreads(member);
    TestMembers.await("the map back under its limit of " + limit + " bytes", 60,
        () -> cost(map) <= limit, () -> cost(map) + " bytes");
  }

  private static long cost(IMap<?, ?> map) {
    return map.getLocalMapStats().getOwnedEntryMemoryCost()
        + map.getLocalMapStats().getBackupEntryMemoryCost();
  }

  @Test
  public void largePutAfterManySmall_evictsItsCost_andAnEntryLargerThanTheLimitIsRefused()
      throws Exception {
    IMap<Integer, byte[]> map = member.getMap("limited");
    long limit = 20L << 20;
    for (int i = 0; i < 4000; i++) {
      map.put(i, new byte[10_000]);
    }
    awaitUnder(map, limit);
    assertTrue("cost " + cost(map), cost(map) <= limit);
    long evictedBefore = provider().metrics().getEvictionCount();
    assertTrue(evictedBefore > 0);
    map.put(-1, new byte[8 << 20]);   // 40% of the limit in one put
    awaitUnder(map, limit);
    EvictionMetrics metrics = provider().metrics();
    assertTrue("cost after the big put " + cost(map) + " evictions "
        + (metrics.getEvictionCount() - evictedBefore) + " capped "
        + metrics.getCappedOperations() + " cont " + metrics.getContinuations() + " refills "
        + metrics.getPoolRefills(), cost(map) <= limit);
    assertTrue(map.containsKey(-1));
    // read once the put's pass and its continuations have ended (awaitUnder drains them)
    long evictedForBig = metrics.getEvictionCount() - evictedBefore;
    assertTrue("evicted " + evictedForBig, evictedForBig >= 700 && evictedForBig < 1300);
    try {
      map.put(-2, new byte[21 << 20]);
      fail("an entry larger than the limit was accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("per-member limit"));
    }
    assertEquals(1, provider().metrics().getRejectedEntries());
  }

  @Test
  public void entryCost_followsTheFootprintModel() {
    IMap<Integer, byte[]> map = member.getMap("unlimited");
    map.put(1, new byte[5 << 20]);
    GcFootprintModel model = provider().model();
    // The payload: header 8 B, the array's length 4 B, its bytes. Stored in chunks where the
    // member chunks it (the model's rounding threshold), else one array and its HeapData.
    long payload = 5 * 1024 * 1024 + 8 + 4;
    ChunkSize chunking = provider().chunking();
    long expected = chunking.chunks(payload) ? chunking.modelledCost(payload)
        : model.byteArray(payload + 4);
    long reported = map.getLocalMapStats().getOwnedEntryMemoryCost();
    assertTrue(reported + " vs " + expected, reported >= expected && reported < expected + 1024);
  }

  @Test
  public void malformedSetting_stopsTheMemberNamingIt() {
    Config c = config(null);
    c.setProperty("hazelcast.map.eviction.gc.model", "g2");
    try {
      Hazelcast.newHazelcastInstance(c).shutdown();
      fail("started");
    } catch (RuntimeException e) {
      Throwable t = e;
      while (t.getCause() != null && !t.getMessage().contains("gc.model")) {
        t = t.getCause();
      }
      assertTrue(String.valueOf(t.getMessage()),
          t.getMessage().contains("hazelcast.map.eviction.gc.model='g2'"));
    }
  }

  @Test
  public void providerStock_keepsTheBuiltInEstimator() {
    HazelcastInstance stock = Hazelcast.newHazelcastInstance(config("stock"));
    try {
      NodeEngine ne = ((HazelcastInstanceProxy) stock).getOriginal().node.getNodeEngine();
      assertEquals(null, MapEvictionProviders.forNode(ne));
      IMap<Integer, byte[]> map = stock.getMap("unlimited");
      map.put(1, new byte[5 << 20]);
      assertTrue(map.getLocalMapStats().getOwnedEntryMemoryCost() < (6 << 20));
    } finally {
      stock.shutdown();
    }
  }
}
