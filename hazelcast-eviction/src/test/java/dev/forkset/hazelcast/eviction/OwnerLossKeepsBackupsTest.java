package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryEvictedListener;
import com.hazelcast.test.HazelcastTestSupport;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.After;
import org.junit.Test;

/**
 * With {@code backups.follow.owner}, a backup replica drops only what its owner evicted, also on
 * a partition thread that owns nothing of the map: two members, two partitions, two partition
 * threads, so each member has a thread that serves only the other member's partition. When an
 * owner is lost, the promoted replica holds every key its owner held that was not reported
 * evicted.
 */
public class OwnerLossKeepsBackupsTest extends HazelcastTestSupport {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(2);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  @Test
  public void ownerLoss_onAMemberWhoseThreadOwnsNothing_losesNoKeyThatWasNotReportedEvicted() {
    Config config = new Config();
    config.setProperty("hazelcast.operation.thread.count", "2");
    config.setProperty("hazelcast.partition.count", "2");
    config.setProperty(GcAwareEvictionConfig.BACKUPS_FOLLOW_OWNER.name, "true");
    config.getMapConfig("m").setInMemoryFormat(InMemoryFormat.BINARY).setBackupCount(1)
        .getEvictionConfig().setEvictionPolicy(EvictionPolicy.LRU)
        .setMaxSizePolicy(MaxSizePolicy.USED_HEAP_SIZE).setSize(1);
    HazelcastInstance a = factory.newHazelcastInstance(config);
    HazelcastInstance b = factory.newHazelcastInstance(config);
    waitAllForSafeState(a, b);
    IMap<Integer, byte[]> map = a.getMap("m");
    Set<Integer> evicted = ConcurrentHashMap.newKeySet();
    map.addEntryListener((EntryEvictedListener<Integer, byte[]>) e -> evicted.add(e.getKey()),
        false);
    for (int i = 0; i < 3000; i++) {
      map.put(i, new byte[1024]);
    }
    assertTrue("eviction happened", map.size() < 3000);
    long ownAccount = TestMembers.metrics(a).getBackupOwnEvictions()
        + TestMembers.metrics(b).getBackupOwnEvictions();
    Set<Integer> before = new HashSet<>(map.keySet());
    evicted.clear();
    b.getLifecycleService().terminate();
    IMap<Integer, byte[]> survivor = a.getMap("m");
    assertTrueEventually(() -> {
      Set<Integer> lost = new HashSet<>();
      for (int k : before) {
        if (!evicted.contains(k) && !survivor.containsKey(k)) {
          lost.add(k);
        }
      }
      assertEquals("keys lost with their owner, not reported evicted (backup entries evicted on"
          + " a member's own account before: " + ownAccount + ")", 0, lost.size());
    }, 30);
    assertEquals("backup entries evicted on a member's own account", 0, ownAccount);
  }
}
