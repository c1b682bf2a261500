package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.MapServiceContext;
import com.hazelcast.map.impl.eviction.MapEvictionProviders;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.impl.NodeEngine;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Configs and probes for members started in the test JVM. */
final class TestMembers {
  /** A G1 model with 1 MB regions on every member, whatever the test JVM runs. */
  static final String REGION_1M = "1m";

  private TestMembers() {
  }

  /** A member config: G1 model with the given region size, the given partition threads. */
  static Config config(String regionSize, int partitionThreads) {
    Config config = new Config();
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.partition.count", "71");
    config.setProperty("hazelcast.operation.thread.count", Integer.toString(partitionThreads));
    config.setProperty(GcAwareEvictionConfig.GC_MODEL.name, "g1");
    config.setProperty(GcAwareEvictionConfig.REGION_SIZE.name, regionSize);
    return config;
  }

  /** Adds a BINARY map with the given eviction. */
  static MapConfig map(Config config, String name, MaxSizePolicy policy, int size,
      EvictionPolicy evictionPolicy, int backups) {
    MapConfig m = new MapConfig(name).setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(backups);
    m.getEvictionConfig().setEvictionPolicy(evictionPolicy).setMaxSizePolicy(policy).setSize(size);
    config.addMapConfig(m);
    return m;
  }

  static NodeEngine nodeEngine(HazelcastInstance member) {
    return ((HazelcastInstanceProxy) member).getOriginal().node.getNodeEngine();
  }

  static GcAwareEvictionProvider provider(HazelcastInstance member) {
    return (GcAwareEvictionProvider) MapEvictionProviders.forNode(nodeEngine(member));
  }

  static EvictionMetrics metrics(HazelcastInstance member) {
    return provider(member).metrics();
  }

  static MapServiceContext mapServiceContext(HazelcastInstance member) {
    MapService service = nodeEngine(member).getService(MapService.SERVICE_NAME);
    return service.getMapServiceContext();
  }

  static RecordStore<?> store(HazelcastInstance member, String map, int partitionId) {
    return mapServiceContext(member).getExistingRecordStore(partitionId, map);
  }

  /** Sum of the record stores' cost estimates of a map on a member (primary and backup). */
  static long cost(HazelcastInstance member, String map) {
    return provider(member).metrics().mapCost(map);
  }

  /** Waits up to {@code seconds} for {@code condition}, failing with {@code what}. */
  static void await(String what, int seconds, BooleanSupplier condition,
      Supplier<String> state) throws InterruptedException {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + " within " + seconds + " s; now: " + state.get());
      }
      Thread.sleep(20);
    }
  }

  /** Waits until {@code value} stays the same for {@code quietMillis}. */
  static long settle(java.util.function.LongSupplier value, long quietMillis, int maxSeconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + maxSeconds * 1_000_000_000L;
    long last = value.getAsLong();
    long since = System.nanoTime();
    while (System.nanoTime() < deadline) {
      Thread.sleep(20);
      long now = value.getAsLong();
      if (now != last) {
        last = now;
        since = System.nanoTime();
      } else if (System.nanoTime() - since > quietMillis * 1_000_000L) {
        return now;
      }
    }
    throw new AssertionError("value did not settle within " + maxSeconds + " s: " + last);
  }
}
