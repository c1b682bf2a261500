package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MapStoreConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.SerializationService;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.operation.MergeOperation;
import com.hazelcast.spi.impl.merge.MapMergingEntryImpl;
import com.hazelcast.spi.merge.PassThroughMergePolicy;
import com.hazelcast.spi.merge.SplitBrainMergeTypes.MapMergeTypes;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import com.hazelcast.transaction.TransactionContext;
import com.hazelcast.transaction.TransactionalMap;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The in-flight limit ({@code hazelcast.map.eviction.inflight.heap.percent}) on the paths the
 * member-JVM IT does not reach from a client: a split-brain merge batch, a transactional write,
 * a put with an offloaded MapStore, and a map under a count policy. Two members with backup-count
 * 1 in this JVM, the setting at 1%: a value is refused when 5 x its size exceeds 1% of this JVM's
 * max heap ({@link #tooLarge}), far below every map's own limit.
 */
public class InFlightValuesAreRefusedTest {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(2);
  private HazelcastInstance member;
  private HazelcastInstance other;
  /** Just over the allowance: (3 + 2 x 1) x size > 1% of the max heap. */
  private final int tooLarge = (int) (Runtime.getRuntime().maxMemory() / 100 / 5) + (1 << 20);

  @Before
  public void start() {
    member = factory.newHazelcastInstance(config());
    other = factory.newHazelcastInstance(config());
  }

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  private static Config config() {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    config.setProperty(GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name, "1");
    TestMembers.map(config, "heap", MaxSizePolicy.USED_HEAP_SIZE, 1024, EvictionPolicy.LRU, 1);
    TestMembers.map(config, "count", MaxSizePolicy.PER_NODE, 100_000, EvictionPolicy.LRU, 1);
    TestMembers.map(config, "stored", MaxSizePolicy.USED_HEAP_SIZE, 1024, EvictionPolicy.LRU, 1)
        .setMapStoreConfig(new MapStoreConfig().setEnabled(true).setOffload(true)
            .setImplementation(new WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore()));
    return config;
  }

  private static void assertInFlightRefusal(String map, Throwable e) {
    Throwable t = e;
    while (t != null && !(t instanceof IllegalArgumentException)) {
      t = t.getCause();
    }
    assertNotNull("an IllegalArgumentException to the caller, got " + e, t);
    assertTrue(t.getMessage(), t.getMessage().startsWith("Map '" + map + "': a value of ")
        && t.getMessage().contains("(3 + 2 x 1 backups)")
        && t.getMessage().contains("(hazelcast.map.eviction.inflight.heap.percent=1)")
        && t.getMessage().contains("Nothing of the write was stored."));
  }

  /** Every member's owned and backup entries of {@code map}: owner and backups agree. */
  private void assertReplicasHold(String map, int entries) {
    long owned = 0;
    long backups = 0;
    for (HazelcastInstance m : new HazelcastInstance[] {member, other}) {
      owned += m.getMap(map).getLocalMapStats().getOwnedEntryCount();
      backups += m.getMap(map).getLocalMapStats().getBackupEntryCount();
    }
    assertEquals(map + ": owned entries", entries, owned);
    assertEquals(map + ": backup entries", entries, backups);
  }

  @Test
  public void countPolicyMap_refusesAValueTheHeapCannotTakeInFlight() {
    IMap<Integer, byte[]> map = member.getMap("count");
    map.put(1, new byte[1024]);
    try {
      map.put(2, new byte[tooLarge]);
      fail("accepted");
    } catch (RuntimeException e) {
      assertInFlightRefusal("count", e);
    }
    assertFalse(map.containsKey(2));
    map.put(3, new byte[tooLarge / 2]);
    assertReplicasHold("count", 2);
  }

  @Test
  public void offloadedMapStore_neverSeesTheRefusedValue() {
    WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.clear();
    IMap<String, byte[]> map = member.getMap("stored");
    map.put("small", new byte[1024]);
    try {
      map.put("big", new byte[tooLarge]);
      fail("accepted");
    } catch (RuntimeException e) {
      assertInFlightRefusal("stored", e);
    }
    assertNull(WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.get("big"));
    assertFalse(map.containsKey("big"));
    assertReplicasHold("stored", 1);
  }

  @Test
  public void mergeBatch_withOneValueTooLarge_storesNoneOfIt() throws Exception {
    IMap<Integer, byte[]> map = member.getMap("heap");
    map.put(-1, new byte[16]);
    int pid = member.getPartitionService().getPartition(0).getPartitionId();
    List<Integer> keys = new ArrayList<>();
    for (int k = 0; keys.size() < 4; k++) {
      if (member.getPartitionService().getPartition(k).getPartitionId() == pid) {
        keys.add(k);
      }
    }
    SerializationService ss = TestMembers.nodeEngine(member).getSerializationService();
    List<MapMergeTypes<Object, Object>> entries = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      Data key = ss.toData(keys.get(i));
      Data value = ss.toData(new byte[i == 2 ? tooLarge : 1024]);
      entries.add(new MapMergingEntryImpl<Object, Object>(ss).setKey(key).setValue(value)
          .setCreationTime(1).setLastAccessTime(1).setLastUpdateTime(1));
    }
    HazelcastInstance owner = member.getPartitionService().getPartition(0).getOwner()
        .localMember() ? member : other;
    try {
      TestMembers.nodeEngine(owner).getOperationService()
          .invokeOnPartition(MapService.SERVICE_NAME,
              new MergeOperation("heap", entries, new PassThroughMergePolicy<>(), false), pid)
          .get();
      fail("accepted");
    } catch (ExecutionException e) {
      assertInFlightRefusal("heap", e);
    }
    for (Integer key : keys) {
      assertFalse("key " + key, map.containsKey(key));
    }
    assertReplicasHold("heap", 1);
  }

  @Test
  public void transactionalWrite_isRefusedBeforeTheTransactionLogsIt() {
    TransactionContext tx = member.newTransactionContext();
    tx.beginTransaction();
    TransactionalMap<String, byte[]> txMap = tx.getMap("heap");
    txMap.put("a", new byte[1024]);
    try {
      txMap.put("b", new byte[tooLarge]);
      fail("accepted");
    } catch (RuntimeException e) {
      assertInFlightRefusal("heap", e);
    }
    tx.commitTransaction();
    IMap<String, byte[]> map = member.getMap("heap");
    assertEquals(1024, map.get("a").length);
    assertFalse(map.containsKey("b"));
    assertReplicasHold("heap", 1);
  }

  @Test
  public void putAll_refusesThePartitionBatchWithTheLargeValue() {
    IMap<Integer, byte[]> map = member.getMap("heap");
    int pid = member.getPartitionService().getPartition(0).getPartitionId();
    Map<Integer, byte[]> batch = new LinkedHashMap<>();
    for (int k = 0; batch.size() < 3; k++) {
      if (member.getPartitionService().getPartition(k).getPartitionId() == pid) {
        batch.put(k, new byte[batch.size() == 1 ? tooLarge : 1024]);
      }
    }
    try {
      map.putAll(batch);
      fail("accepted");
    } catch (RuntimeException e) {
      assertInFlightRefusal("heap", e);
    }
    assertEquals(0, map.size());
    assertReplicasHold("heap", 0);
  }
}
