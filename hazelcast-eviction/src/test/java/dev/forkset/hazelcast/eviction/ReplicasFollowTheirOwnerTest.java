package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.IndeterminateOperationStateException;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryEvictedListener;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.test.HazelcastTestSupport;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.After;
import org.junit.Test;

/**
 * Admission runs where a client or member write creates or grows an entry on the owner, never
 * on a replica: a backup, a migration or a replica sync stores what the owner holds, and a
 * replica whose own model puts that entry alone over its limit then evicts its copy, and nothing
 * else. Here two members model the same entry differently (G1 regions of 1 MB and of 8 MB, as
 * members with unequal -Xmx would): 8 MB fit the 10 MB limit on the first and are oversized on
 * the second.
 */
public class ReplicasFollowTheirOwnerTest {
  private static final int VALUE = 8 << 20;
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(3);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  private static Config config(String regionSize) {
    Config config = TestMembers.config(regionSize, 2);
    // One array per value (chunked.values off), so the members' models disagree on its cost:
    // chunked, a large value costs about its size on both.
    config.setProperty(GcAwareEvictionConfig.CHUNKED_VALUES.name, "off");
    // A put whose backup is not acknowledged within the backup timeout fails with
    // IndeterminateOperationStateException instead of completing without it: a put that
    // returns had its backup acknowledged. The timeout is far above a loaded machine's backup.
    config.setProperty("hazelcast.operation.fail.on.indeterminate.state", "true");
    config.setProperty("hazelcast.operation.backup.timeout.millis", "60000");
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 10, EvictionPolicy.LRU, 1);
    return config;
  }

  @Test
  public void backup_ofAnEntryTheOwnerAdmitted_isAcknowledgedThenEvictedWhereItIsOversized()
      throws Exception {
    HazelcastInstance owner = factory.newHazelcastInstance(config("1m"));
    HazelcastInstance replica = factory.newHazelcastInstance(config("8m"));
    HazelcastTestSupport.warmUpPartitions(owner, replica); // the table is arranged on first use
    HazelcastTestSupport.waitAllForSafeState(owner, replica);
    String key = HazelcastTestSupport.generateKeyOwnedBy(owner);
    byte[] value = new byte[VALUE];
    value[7] = 7;

    try {
      owner.getMap("m").put(key, value);
    } catch (IndeterminateOperationStateException e) {
      throw new AssertionError("the 8m member never acknowledged the backup", e);
    }

    // The replica stored the backup (the put returned, so it was acknowledged), then evicted
    // its own copy, which alone exceeds its limit, and nothing else; the owner keeps the entry.
    int pid = owner.getPartitionService().getPartition(key).getPartitionId();
    Data dataKey = TestMembers.nodeEngine(owner).toData(key);
    TestMembers.await("the 8m member evicted its oversized copy", 60, () -> {
      RecordStore<?> store = TestMembers.store(replica, "m", pid);
      return TestMembers.metrics(replica).getOversizedEvictions() == 1
          && store != null && store.getRecord(dataKey) == null;
    }, () -> "oversized evictions " + TestMembers.metrics(replica).getOversizedEvictions());
    assertEquals("evictions on the 8m member", 1,
        TestMembers.metrics(replica).getEvictionCount());
    byte[] kept = (byte[]) owner.getMap("m").get(key);
    assertEquals(7, kept[7]);

    owner.getLifecycleService().terminate();
    // The promoted replica held no copy: the entry is gone with its owner, as an entry a stock
    // backup evicted on its own; the replica never serves anything else.
    HazelcastTestSupport.assertTrueEventually(
        () -> assertEquals(null, replica.getMap("m").get(key)));
  }

  @Test
  public void migration_ofAnEntryTheOwnerAdmitted_completesOnAMemberThatModelsItAsOversized()
      throws Exception {
    HazelcastInstance first = factory.newHazelcastInstance(config("1m"));
    IMap<String, byte[]> map = first.getMap("m");
    String key = "big";
    map.put(key, new byte[VALUE]);

    Set<String> evicted = ConcurrentHashMap.newKeySet();
    map.addEntryListener((EntryEvictedListener<String, byte[]>) e -> evicted.add(e.getKey()),
        false);

    HazelcastInstance joiner = factory.newHazelcastInstance(config("8m"));
    // the partition replicates to the joiner (as owner or backup): the migration must complete
    HazelcastTestSupport.waitAllForSafeState(new HazelcastInstance[] {first, joiner}, 60);
    // Once the migration has committed, the joiner evicts what its own model puts over its
    // limit, as after any write (patch 0003), in a task it queues on the partition's thread: as
    // the new owner with an event; as the new backup silently, the owner keeping the entry.
    // Either way nothing leaves the map unreported. The test waits for that eviction to have
    // run, then reads the map, which nothing changes any more.
    if (joiner.getPartitionService().getPartition(key).getOwner().localMember()) {
      TestMembers.await("the joiner, now the owner, evicted the entry with an event", 60,
          () -> evicted.contains(key) && !map.containsKey(key),
          () -> "evicted " + evicted + ", in the map " + map.containsKey(key));
    } else {
      int pid = first.getPartitionService().getPartition(key).getPartitionId();
      Data dataKey = TestMembers.nodeEngine(joiner).toData(key);
      TestMembers.await("the joiner, now a backup, evicted its copy of the entry", 60, () -> {
        RecordStore<?> store = TestMembers.store(joiner, "m", pid);
        return store != null && store.getRecord(dataKey) == null;
      }, () -> "the joiner's backup replica of partition " + pid + " still holds the entry");
      assertArrayEquals(new byte[VALUE], (byte[]) joiner.getMap("m").get(key));
      assertEquals(Arrays.asList(key), Arrays.asList(map.keySet().toArray()));
    }
  }
}
