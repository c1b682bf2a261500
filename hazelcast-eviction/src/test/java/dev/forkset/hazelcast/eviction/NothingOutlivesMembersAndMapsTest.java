package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.eviction.Evictor;
import com.hazelcast.map.impl.recordstore.RecordStore;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import javax.management.ObjectName;
import org.junit.Test;

/**
 * The module keeps nothing of a member after it shut down, nor of a map after it was destroyed:
 * no MBean, no provider, no evictor with its pooled candidates.
 */
public class NothingOutlivesMembersAndMapsTest {

  private static Config config() {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    config.setInstanceName("leak-" + UUID.randomUUID());
    config.setClusterName("leak-" + UUID.randomUUID());
    config.getNetworkConfig().setPort(16701).setPortAutoIncrement(true);
    config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    config.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
    config.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 1, EvictionPolicy.LRU, 0);
    return config;
  }

  /**
   * Runs the collector until {@code alive} counts nothing still reachable, for up to 30 s;
   * returns the last count. System.gc() is a request: one call may leave a weakly reachable
   * object uncleared, so the state is polled, not read after a fixed number of calls.
   */
  private static int aliveAfterCollection(IntSupplier alive) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      int n = alive.getAsInt();
      if (n == 0 || System.nanoTime() > deadline) {
        return n;
      }
      System.gc();
      Thread.sleep(50);
    }
  }

  private static boolean collected(WeakReference<?> ref) throws InterruptedException {
    return aliveAfterCollection(() -> ref.get() == null ? 0 : 1) == 0;
  }

  @Test
  public void memberShutdown_unregistersTheMBeanAndReleasesTheProvider() throws Exception {
    assertNothingOutlives(member -> member.shutdown());
  }

  @Test
  public void memberTerminate_unregistersTheMBeanAndReleasesTheProvider() throws Exception {
    assertNothingOutlives(member -> member.getLifecycleService().terminate());
  }

  private static void assertNothingOutlives(java.util.function.Consumer<HazelcastInstance> stop)
      throws Exception {
    Config config = config();
    HazelcastInstance member = Hazelcast.newHazelcastInstance(config);
    ObjectName name = new ObjectName("dev.forkset.hazelcast:type=GcAwareEviction,instance="
        + ObjectName.quote(config.getInstanceName()));
    IMap<Integer, byte[]> map = member.getMap("m");
    for (int i = 0; i < 3000; i++) {
      map.put(i, new byte[1000]);
    }
    assertTrue(ManagementFactory.getPlatformMBeanServer().isRegistered(name));
    WeakReference<Object> provider = new WeakReference<>(TestMembers.provider(member));
    stop.accept(member);
    assertFalse("the MBean of a member that stopped is still registered",
        ManagementFactory.getPlatformMBeanServer().isRegistered(name));
    member = null;
    map = null;
    assertTrue("the provider of a member that stopped is still reachable", collected(provider));
  }

  /**
   * Eviction pools hold keys and record identities, not records: once the map drops its entries,
   * none of their values stays reachable through a pool.
   */
  @Test
  public void mapClear_leavesNoValueReachableFromTheEvictionPools() throws Exception {
    HazelcastInstance member = Hazelcast.newHazelcastInstance(config());
    try {
      IMap<Integer, byte[]> map = member.getMap("m");
      for (int i = 0; i < 3000; i++) {
        map.put(i, new byte[1000]); // 1 MB limit: pools fill and evict all along
      }
      java.util.List<WeakReference<Object>> values = new java.util.ArrayList<>();
      for (int pid = 0; pid < member.getPartitionService().getPartitions().size(); pid++) {
        RecordStore<?> store = TestMembers.store(member, "m", pid);
        if (store != null) {
          store.forEach((key, record) -> values.add(new WeakReference<>(record.getValue())),
              false);
        }
      }
      map.clear();
      assertTrue(values.size() + " values sampled", values.size() > 100);
      int alive = aliveAfterCollection(() -> {
        int n = 0;
        for (WeakReference<Object> v : values) {
          if (v.get() != null) {
            n++;
          }
        }
        return n;
      });
      assertTrue(alive + " values of cleared entries still reachable", alive == 0);
    } finally {
      member.shutdown();
    }
  }

  @Test
  public void mapDestroy_releasesItsEvictor() throws Exception {
    HazelcastInstance member = Hazelcast.newHazelcastInstance(config());
    try {
      IMap<Integer, byte[]> map = member.getMap("m");
      for (int i = 0; i < 3000; i++) {
        map.put(i, new byte[1000]);
      }
      Evictor evictor = TestMembers.mapServiceContext(member).getMapContainer("m").getEvictor();
      assertTrue(evictor instanceof SizeProportionalEvictor);
      WeakReference<Evictor> ref = new WeakReference<>(evictor);
      evictor = null;
      map.destroy();
      assertTrue("the evictor of a destroyed map is still reachable", collected(ref));
      assertNull(TestMembers.mapServiceContext(member).getExistingMapContainer("m"));
    } finally {
      member.shutdown();
    }
  }
}
