package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.test.HazelcastTestSupport;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import java.util.Arrays;
import org.junit.After;
import org.junit.Test;

/**
 * Admission runs where a client or member write creates or grows an entry on the owner, never
 * on a replica: a backup, a migration or a replica sync stores what the owner holds. Here two
 * members model the same entry differently (G1 regions of 1 MB and of 8 MB, as members with
 * unequal -Xmx would): 8 MB fit the 10 MB limit on the first and are oversized on the second.
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
    // a backup that is never acknowledged would hold the put for this long
    config.setProperty("hazelcast.operation.backup.timeout.millis", "20000");
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 10, EvictionPolicy.LRU, 1);
    return config;
  }

  @Test
  public void backup_ofAnEntryTheOwnerAdmitted_isStoredOnAMemberThatModelsItAsOversized()
      throws Exception {
    HazelcastInstance owner = factory.newHazelcastInstance(config("1m"));
    HazelcastInstance replica = factory.newHazelcastInstance(config("8m"));
    HazelcastTestSupport.waitAllForSafeState(owner, replica);
    String key = HazelcastTestSupport.generateKeyOwnedBy(owner);
    byte[] value = new byte[VALUE];
    value[7] = 7;

    long start = System.nanoTime();
    owner.getMap("m").put(key, value);
    long millis = (System.nanoTime() - start) / 1_000_000;

    int pid = owner.getPartitionService().getPartition(key).getPartitionId();
    Data dataKey = TestMembers.nodeEngine(owner).toData(key);
    TestMembers.await("the backup replica holds the entry", 10, () -> {
      RecordStore<?> store = TestMembers.store(replica, "m", pid);
      return store != null && store.getRecord(dataKey) != null;
    }, () -> "no backup record on the 8m member");
    assertTrue("the put waited for a backup ack that never came: " + millis + " ms",
        millis < 10_000);

    owner.getLifecycleService().terminate();
    byte[] promoted = (byte[]) replica.getMap("m").get(key);
    assertNotNull("the promoted backup serves the entry", promoted);
    assertEquals(7, promoted[7]);
  }

  @Test
  public void migration_ofAnEntryTheOwnerAdmitted_completesOnAMemberThatModelsItAsOversized()
      throws Exception {
    HazelcastInstance first = factory.newHazelcastInstance(config("1m"));
    IMap<String, byte[]> map = first.getMap("m");
    String key = "big";
    map.put(key, new byte[VALUE]);

    HazelcastInstance joiner = factory.newHazelcastInstance(config("8m"));
    // the partition replicates to the joiner (as owner or backup): the migration must complete
    HazelcastTestSupport.waitAllForSafeState(new HazelcastInstance[] {first, joiner}, 60);
    int pid = first.getPartitionService().getPartition(key).getPartitionId();
    Data dataKey = TestMembers.nodeEngine(first).toData(key);
    RecordStore<?> store = TestMembers.store(joiner, "m", pid);
    assertNotNull("the joiner has the map's partition", store);
    assertNotNull("the joiner holds the migrated entry", store.getRecord(dataKey));
    assertArrayEquals(new byte[VALUE], (byte[]) joiner.getMap("m").get(key));
    assertEquals(Arrays.asList(key), Arrays.asList(map.keySet().toArray()));
  }
}
