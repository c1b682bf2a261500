package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.internal.eviction.ExpiredKey;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.impl.operationservice.Operation;
import com.hazelcast.test.HazelcastTestSupport;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.After;
import org.junit.Test;

/**
 * The operation an owner sends to its backups for the keys it evicted removes those keys and
 * nothing else, however late it arrives: a backup that took more writes since (or that receives
 * a retried operation) keeps every live entry.
 */
public class BackupEvictionsTest {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(2);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  @Test
  public void send_onePartitionTwoReplicas_oneOperationEach() {
    List<String> sent = new ArrayList<>();
    BackupEvictions backups = new BackupEvictions("m", 2,
        (pid, replica, op) -> sent.add(pid + "/" + replica));
    assertEquals(0, backups.send());
    backups.add(7, null, "v1");
    backups.add(7, null, "v2");
    assertEquals(1, backups.send());
    assertEquals(java.util.Arrays.asList("7/1", "7/2"), sent);
    assertEquals("sent once", 0, backups.send());
  }

  @Test
  public void operation_arrivingAfterMoreWrites_removesOnlyTheEvictedKey() throws Exception {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 100, EvictionPolicy.LRU, 1);
    HazelcastInstance owner = factory.newHazelcastInstance(config);
    HazelcastInstance backup = factory.newHazelcastInstance(config);
    HazelcastTestSupport.warmUpPartitions(owner, backup); // the table is arranged on first use
    HazelcastTestSupport.waitAllForSafeState(owner, backup);
    int pid = owner.getPartitionService().getPartition("k0").getPartitionId();
    IMap<String, byte[]> map = owner.getMap("m");
    List<String> keys = new ArrayList<>();
    while (keys.size() < 5) {
      String key = HazelcastTestSupport.generateKeyForPartition(owner, pid);
      keys.add(key);
      map.set(key, new byte[100]);
    }
    HazelcastInstance primary = owner.getPartitionService().getPartition(keys.get(0)).getOwner()
        .localMember() ? owner : backup;
    HazelcastInstance replica = primary == owner ? backup : owner;

    // The owner evicts keys[0] while it holds 5 entries (the old module sent that count, 4 after
    // the eviction, for the backup to trim itself to), and the operation reaches the backup only
    // after 5 more writes.
    RecordStore<?> primaryStore = TestMembers.store(primary, "m", pid);
    Data evicted = TestMembers.nodeEngine(primary).toData(keys.get(0));
    Object value = primaryStore.getRecord(evicted).getValue();
    List<ExpiredKey> batch = Collections.singletonList(new ExpiredKey(evicted, value.hashCode()));
    Operation operation = BackupEvictions.operation("m", batch);
    for (int i = 0; i < 5; i++) {
      String key = HazelcastTestSupport.generateKeyForPartition(owner, pid);
      keys.add(key);
      map.set(key, new byte[100]);
    }
    RecordStore<?> replicaStore = TestMembers.store(replica, "m", pid);
    TestMembers.await("the backup took the later writes", 10, () -> replicaStore.size() == 10,
        () -> replicaStore.size() + " backup entries");

    TestMembers.nodeEngine(primary).getOperationService()
        .createInvocationBuilder(MapService.SERVICE_NAME, operation, pid).setReplicaIndex(1)
        .invoke().get();

    assertNull("the evicted key left the backup", replicaStore.getRecord(evicted));
    for (String key : keys.subList(1, keys.size())) {
      assertNotNull("live backup entry " + key,
          replicaStore.getRecord(TestMembers.nodeEngine(replica).toData(key)));
    }
    assertEquals(9, replicaStore.size());
  }
}
