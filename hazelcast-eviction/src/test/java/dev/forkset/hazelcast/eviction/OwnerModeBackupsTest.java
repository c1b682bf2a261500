package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
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
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.After;
import org.junit.Test;

/**
 * With {@code backups.follow.owner}, a backup replica drops only what its owner evicted. Two
 * members and two partitions, so each member owns one partition and backs up the other.
 */
public class OwnerModeBackupsTest extends HazelcastTestSupport {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(2);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  /**
   * Two partition threads, so each member has a thread that serves only the other member's
   * partition. When an owner is lost, the promoted replica holds every key its owner held that
   * was not reported evicted.
   */
  @Test
  public void ownerLoss_onAMemberWhoseThreadOwnsNothing_losesNoKeyThatWasNotReportedEvicted() {
    Config config = config(1, 2);
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
    // A key evicted before the listing is not in it; one evicted after it has its event.
    Set<Integer> before = new HashSet<>(map.keySet());
    b.getLifecycleService().terminate();
    IMap<Integer, byte[]> survivor = a.getMap("m");
    assertTrueEventually(() -> {
      Set<Integer> lost = new HashSet<>();
      for (int k : before) {
        if (!evicted.contains(k) && !survivor.containsKey(k)) {
          lost.add(k);
        }
      }
      assertEquals("keys lost with their owner, not reported evicted", 0, lost.size());
    }, 30);
  }

  /**
   * Members with different limits: b owns a partition whose entries keep it under its 8 MB limit,
   * and a, which backs them up, is three times over its 1 MB limit. a keeps every backup entry
   * (b evicted none), and still takes writes to the partition it owns: its back-pressure waits
   * only for what its own passes can free. A refused write is retried 5 times here, not 250, so
   * a member that waited for its backups to go would fail the puts within seconds. a evicts its
   * owned share from the first of those writes on: while it owned nothing its share was 0, and
   * a share measured as 0 must not stay in force.
   */
  @Test
  public void ownerWrite_onAMemberOverItsLimitByBackups_isStoredAndTheBackupsStay()
      throws InterruptedException {
    Config small = config(1, 1);
    Config large = config(8, 1);
    small.setProperty("hazelcast.invocation.max.retry.count", "5");
    large.setProperty("hazelcast.invocation.max.retry.count", "5");
    HazelcastInstance a = factory.newHazelcastInstance(small);
    HazelcastInstance b = factory.newHazelcastInstance(large);
    warmUpPartitions(a, b); // the table is arranged on first use, then balanced by migrations
    waitAllForSafeState(a, b);
    int partitionOfA = ownedPartition(a);
    int partitionOfB = ownedPartition(b);
    assertNotEquals("each member owns one of the two partitions", partitionOfA, partitionOfB);
    IMap<Integer, byte[]> viaB = b.getMap("m");
    List<Integer> keysOfB = keysIn(b, partitionOfB, 3000);
    for (int k : keysOfB) {
      viaB.put(k, new byte[1024]); // returns once a acknowledged the backup
    }
    assertTrue("a is over its limit by backups", TestMembers.cost(a, "m") > 3 * (1L << 20));
    IMap<Integer, byte[]> viaA = a.getMap("m");
    for (int k : keysIn(a, partitionOfA, 100)) {
      viaA.put(k, new byte[1024]);
    }
    TestMembers.drainPartitionThreads(a, b);
    int ownedByA = TestMembers.store(a, "m", partitionOfA).size();
    assertTrue("a evicted its owned share: " + ownedByA + " of 100 owned entries left",
        ownedByA < 50);
    assertEquals("b's entries on b", keysOfB.size(),
        TestMembers.store(b, "m", partitionOfB).size());
    assertEquals("b's entries backed up on a", keysOfB.size(),
        TestMembers.store(a, "m", partitionOfB).size());
  }

  private static Config config(int limitMb, int partitionThreads) {
    Config config = new Config();
    config.setProperty("hazelcast.operation.thread.count", Integer.toString(partitionThreads));
    config.setProperty("hazelcast.partition.count", "2");
    config.setProperty(GcAwareEvictionConfig.BACKUPS_FOLLOW_OWNER.name, "true");
    config.getMapConfig("m").setInMemoryFormat(InMemoryFormat.BINARY).setBackupCount(1)
        .getEvictionConfig().setEvictionPolicy(EvictionPolicy.LRU)
        .setMaxSizePolicy(MaxSizePolicy.USED_HEAP_SIZE).setSize(limitMb);
    return config;
  }

  private static int ownedPartition(HazelcastInstance member) {
    for (int pid = 0; pid < 2; pid++) {
      if (TestMembers.nodeEngine(member).getPartitionService().getPartition(pid).isLocal()) {
        return pid;
      }
    }
    throw new AssertionError(member + " owns no partition");
  }

  private static List<Integer> keysIn(HazelcastInstance member, int partitionId, int n) {
    List<Integer> keys = new ArrayList<>();
    for (int k = 0; keys.size() < n; k++) {
      if (member.getPartitionService().getPartition(k).getPartitionId() == partitionId) {
        keys.add(k);
      }
    }
    return keys;
  }
}
