package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
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
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
    // the same without eviction (the in-flight rule only, patch 0010)
    config.addMapConfig(new MapConfig("plainStored").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1).setMapStoreConfig(new MapStoreConfig().setEnabled(true).setOffload(true)
            .setImplementation(new WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore())));
    TestMembers.map(config, "loaded", MaxSizePolicy.USED_HEAP_SIZE, 1024, EvictionPolicy.LRU, 1)
        .setMapStoreConfig(new MapStoreConfig().setEnabled(true)
            .setImplementation(new WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore()));
    // an OBJECT map under a count policy: it keeps values as objects
    TestMembers.map(config, "object", MaxSizePolicy.PER_NODE, 100_000, EvictionPolicy.LRU, 1)
        .setInMemoryFormat(InMemoryFormat.OBJECT);
    // a BINARY map without eviction: the in-flight rule only (patch 0010)
    config.addMapConfig(new MapConfig("plain").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1));
    return config;
  }

  private static void assertInFlightRefusal(String map, Throwable e) {
    Throwable t = e;
    while (t != null && !(t instanceof IllegalArgumentException)) {
      t = t.getCause();
    }
    assertNotNull("an IllegalArgumentException to the caller, got " + e, t);
    assertTrue(t.getMessage(), (t.getMessage().startsWith("Map '" + map + "': a value of ")
        || t.getMessage().startsWith("Map '" + map + "': the "))
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

  /**
   * The same, waiting for the backups: a putAll's backups are not awaited by the operation that
   * carries it to each member ({@code PartitionIteratingOperation}).
   */
  private void awaitReplicasHold(String map, int entries) throws InterruptedException {
    TestMembers.await(map + ": " + entries + " owned and backup entries", 30, () -> {
      try {
        assertReplicasHold(map, entries);
        return true;
      } catch (AssertionError e) {
        return false;
      }
    }, () -> {
      try {
        assertReplicasHold(map, entries);
        return "held";
      } catch (AssertionError e) {
        return e.getMessage();
      }
    });
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
  public void mergeBatch_withOneValueTooLarge_dropsOnlyThatEntry_withoutFailingTheMerge()
      throws Exception {
    long rejected = 0;
    for (String name : Arrays.asList("heap", "plain")) {
      IMap<Integer, byte[]> map = member.getMap(name);
      map.put(-1, new byte[16]);
      List<Integer> keys = keysOfPartitionOf0(4);
      // dropped, not failed: a failed merge invocation would end the merging member's whole merge
      assertEquals(name + ": the response of a batch whose other entries merged", Boolean.TRUE,
          merge(name, keys, 2));
      rejected += 1;
      assertEquals(name + ": the dropped entry", rejected,
          TestMembers.metrics(member).getRejectedEntries()
              + TestMembers.metrics(other).getRejectedEntries());
      for (int i = 0; i < keys.size(); i++) {
        assertEquals(name + ": key " + keys.get(i), i != 2, map.containsKey(keys.get(i)));
      }
      assertReplicasHold(name, 4);
      assertEquals(name + ": a batch of only the dropped entry merges nothing", Boolean.FALSE,
          merge(name, keys.subList(2, 3), 0));
      rejected += 1;
      assertFalse(name + ": key " + keys.get(2), map.containsKey(keys.get(2)));
      assertReplicasHold(name, 4);
      assertEquals(name + ": a batch that fits merges", Boolean.TRUE, merge(name, keys, -1));
      assertReplicasHold(name, 5);
      assertEquals(name + ": rejected entries", rejected,
          TestMembers.metrics(member).getRejectedEntries()
              + TestMembers.metrics(other).getRejectedEntries());
    }
  }

  /**
   * Values that each fit the allowance but not together: in the batch's order, each value that
   * would take the values kept before it over the allowance is dropped, and a later, smaller one
   * still merges.
   */
  @Test
  public void mergeBatch_overTheAllowanceTogether_dropsTheValuesThatDoNotFit() throws Exception {
    // 5 x half is just over half the allowance: one fits with small values, two do not
    int half = tooLarge / 2;
    for (String name : Arrays.asList("heap", "plain")) {
      IMap<Integer, byte[]> map = member.getMap(name);
      List<Integer> keys = keysOfPartitionOf0(4);
      assertEquals(name, Boolean.TRUE, merge(name, keys, half, 1024, half, 1024));
      assertEquals(name + ": key " + keys.get(0), half, map.get(keys.get(0)).length);
      assertEquals(name + ": key " + keys.get(1), 1024, map.get(keys.get(1)).length);
      assertFalse(name + ": key " + keys.get(2), map.containsKey(keys.get(2)));
      assertEquals(name + ": key " + keys.get(3), 1024, map.get(keys.get(3)).length);
      assertReplicasHold(name, 3);
    }
    assertEquals("the dropped entries", 2, TestMembers.metrics(member).getRejectedEntries()
        + TestMembers.metrics(other).getRejectedEntries());
  }

  /**
   * The steps engine's path (MergeOpSteps) runs a batch without its dropped entries too: the
   * MapStore sees only the merged ones.
   */
  @Test
  public void mergeBatch_withOffloadedMapStore_dropsOnlyThatEntry_andTheNextBatchMerges()
      throws Exception {
    WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.clear();
    IMap<Integer, byte[]> map = member.getMap("stored");
    map.put(-1, new byte[16]);
    List<Integer> keys = keysOfPartitionOf0(4);
    assertEquals(Boolean.TRUE, merge("stored", keys.subList(0, 2), 1));
    assertEquals(1024, map.get(keys.get(0)).length);
    assertEquals(Integer.valueOf(1),
        WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.get(keys.get(0)));
    assertFalse("key " + keys.get(1), map.containsKey(keys.get(1)));
    assertNull("the MapStore saw key " + keys.get(1),
        WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.get(keys.get(1)));
    assertEquals(Boolean.TRUE, merge("stored", keys.subList(2, 4), -1));
    for (Integer key : keys.subList(2, 4)) {
      assertEquals(1024, map.get(key).length);
      assertEquals(Integer.valueOf(1),
          WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.get(key));
    }
    assertReplicasHold("stored", 4);
  }

  /** {@code n} keys of the partition of key 0. */
  private List<Integer> keysOfPartitionOf0(int n) {
    int pid = member.getPartitionService().getPartition(0).getPartitionId();
    List<Integer> keys = new ArrayList<>();
    for (int k = 0; keys.size() < n; k++) {
      if (member.getPartitionService().getPartition(k).getPartitionId() == pid) {
        keys.add(k);
      }
    }
    return keys;
  }

  /** {@code n} keys "k0", "k1", ... of the partition of "k0". */
  private List<String> stringKeysOfPartitionOfK0(int n) {
    int pid = member.getPartitionService().getPartition("k0").getPartitionId();
    List<String> keys = new ArrayList<>();
    for (int k = 0; keys.size() < n; k++) {
      if (member.getPartitionService().getPartition("k" + k).getPartitionId() == pid) {
        keys.add("k" + k);
      }
    }
    return keys;
  }

  /**
   * Invokes one MergeOperation (PassThroughMergePolicy) of {@code keys} on their partition's
   * owner, values of 1 KB but the one at {@code tooLargeAt}; its response.
   */
  private Object merge(String mapName, List<Integer> keys, int tooLargeAt) throws Exception {
    int[] sizes = new int[keys.size()];
    for (int i = 0; i < sizes.length; i++) {
      sizes[i] = i == tooLargeAt ? tooLarge : 1024;
    }
    return merge(mapName, keys, sizes);
  }

  /** The same with values of {@code sizes} bytes. */
  private Object merge(String mapName, List<Integer> keys, int... sizes) throws Exception {
    SerializationService ss = TestMembers.nodeEngine(member).getSerializationService();
    List<MapMergeTypes<Object, Object>> entries = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      Data key = ss.toData(keys.get(i));
      Data value = ss.toData(new byte[sizes[i]]);
      entries.add(new MapMergingEntryImpl<Object, Object>(ss).setKey(key).setValue(value)
          .setCreationTime(1).setLastAccessTime(1).setLastUpdateTime(1));
    }
    int pid = member.getPartitionService().getPartition(keys.get(0)).getPartitionId();
    HazelcastInstance owner = member.getPartitionService().getPartition(keys.get(0)).getOwner()
        .localMember() ? member : other;
    return TestMembers.nodeEngine(owner).getOperationService()
        .invokeOnPartition(MapService.SERVICE_NAME,
            new MergeOperation(mapName, entries, new PassThroughMergePolicy<>(), false), pid)
        .get();
  }

  @Test
  public void transactionalWrite_isRefusedBeforeTheTransactionLogsIt() {
    for (String name : Arrays.asList("heap", "plain")) {
      TransactionContext tx = member.newTransactionContext();
      tx.beginTransaction();
      TransactionalMap<String, byte[]> txMap = tx.getMap(name);
      txMap.put("a", new byte[1024]);
      try {
        txMap.put("b", new byte[tooLarge]);
        fail(name + ": accepted");
      } catch (RuntimeException e) {
        assertInFlightRefusal(name, e);
      }
      tx.commitTransaction();
      IMap<String, byte[]> map = member.getMap(name);
      assertEquals(1024, map.get("a").length);
      assertFalse(map.containsKey("b"));
      assertReplicasHold(name, 1);
    }
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

  /**
   * A putAll sends each partition's entries in one message, stores them in one operation and
   * backs them up in one packet: values that each fit the limit but together do not are
   * refused, the partition's batch whole.
   */
  @Test
  public void putAll_ofValuesThatFitAloneButNotTogether_refusesThePartitionBatch() {
    for (String name : Arrays.asList("heap", "plain")) {
      IMap<Integer, byte[]> map = member.getMap(name);
      Map<Integer, byte[]> batch = new LinkedHashMap<>();
      for (Integer key : keysOfPartitionOf0(3)) {
        batch.put(key, new byte[tooLarge / 2]);
      }
      try {
        map.putAll(batch);
        fail(name + ": accepted: 3 values of " + tooLarge / 2 + " bytes in one partition's batch");
      } catch (RuntimeException e) {
        assertInFlightRefusal(name, e);
      }
      assertEquals(0, map.size());
      assertReplicasHold(name, 0);
      // each of them alone passes
      for (Map.Entry<Integer, byte[]> e : batch.entrySet()) {
        map.set(e.getKey(), e.getValue());
      }
      assertReplicasHold(name, 3);
    }
  }

  /**
   * Keys of {@code count} partitions that {@code owner} owns, one each, from {@code first} on,
   * with values of {@code size} bytes.
   */
  private static Map<Integer, byte[]> batchesOwnedBy(HazelcastInstance owner, int first, int count,
      int size) {
    com.hazelcast.test.HazelcastTestSupport.warmUpPartitions(owner);
    Map<Integer, byte[]> batch = new LinkedHashMap<>();
    java.util.Set<Integer> partitions = new HashSet<>();
    for (int k = first; batch.size() < count; k++) {
      com.hazelcast.partition.Partition p = owner.getPartitionService().getPartition(k);
      if (p.getOwner().localMember() && partitions.add(p.getPartitionId())) {
        batch.put(k, new byte[size]);
      }
    }
    return batch;
  }

  /**
   * A member's own putAll sends another member the batches of all that member's partitions in
   * one operation, read there as one packet before any owner judges a batch: eight values of a
   * third of the allowance's value each, one per partition of the other member, go in runs
   * within the rule instead, one after the other (metric {@code putAllRuns}), and every entry is
   * stored, owner and backup agreeing. The same for setAll, putAllAsync and setAllAsync.
   */
  @Test
  public void memberPutAll_ofBatchesThatFitAloneButNotTogether_goesInRunsAndStoresEverything()
      throws Exception {
    IMap<Integer, byte[]> map = member.getMap("heap");
    EvictionMetrics metrics = TestMembers.metrics(member);
    int size = tooLarge / 3;
    int stored = 0;
    for (String path : Arrays.asList("putAll", "setAll", "putAllAsync", "setAllAsync")) {
      Map<Integer, byte[]> batch = batchesOwnedBy(other, stored * 1000, 8, size);
      long runs = metrics.getPutAllRuns();
      if (path.equals("putAll")) {
        map.putAll(batch);
      } else if (path.equals("setAll")) {
        map.setAll(batch);
      } else if (path.equals("putAllAsync")) {
        map.putAllAsync(batch).toCompletableFuture().get(60, TimeUnit.SECONDS);
      } else {
        map.setAllAsync(batch).toCompletableFuture().get(60, TimeUnit.SECONDS);
      }
      stored += batch.size();
      assertTrue(path + ": runs " + (metrics.getPutAllRuns() - runs),
          metrics.getPutAllRuns() - runs >= 2);
      for (Integer key : batch.keySet()) {
        assertEquals(path + ": key " + key, size, other.<Integer, byte[]>getMap("heap").get(key).length);
      }
      awaitReplicasHold("heap", stored);
    }
    // a batch over the rule alone still goes alone, and its owner refuses it; the others are stored
    Map<Integer, byte[]> batch = batchesOwnedBy(other, 100_000, 4, size);
    Integer large = batch.keySet().iterator().next();
    batch.put(large, new byte[tooLarge]);
    try {
      map.putAll(batch);
      fail("accepted");
    } catch (RuntimeException e) {
      assertInFlightRefusal("heap", e);
    }
    assertFalse(map.containsKey(large));
    awaitReplicasHold("heap", stored + 3);

    // a map without eviction is split by the same rule
    long runs = metrics.getPutAllRuns();
    Map<Integer, byte[]> plain = batchesOwnedBy(other, 0, 8, size);
    member.<Integer, byte[]>getMap("plain").putAll(plain);
    assertTrue("plain: runs " + (metrics.getPutAllRuns() - runs),
        metrics.getPutAllRuns() - runs >= 2);
    awaitReplicasHold("plain", plain.size());
  }

  /** The same with hazelcast.map.put.all.batch.size: each batch a member sends is split too. */
  @Test
  public void memberPutAll_withPutAllBatchSize_splitsEachBatchItSends() {
    TestHazelcastInstanceFactory batching = new TestHazelcastInstanceFactory(2);
    try {
      Config config = config().setProperty("hazelcast.map.put.all.batch.size", "4");
      HazelcastInstance a = batching.newHazelcastInstance(config);
      HazelcastInstance b = batching.newHazelcastInstance(config);
      com.hazelcast.test.HazelcastTestSupport.warmUpPartitions(a, b);
      EvictionMetrics metrics = TestMembers.metrics(a);
      Map<Integer, byte[]> batch = batchesOwnedBy(b, 0, 12, tooLarge / 3);
      a.<Integer, byte[]>getMap("heap").putAll(batch);
      assertTrue("runs " + metrics.getPutAllRuns(), metrics.getPutAllRuns() >= 6);
      for (Integer key : batch.keySet()) {
        assertEquals("key " + key, tooLarge / 3, b.<Integer, byte[]>getMap("heap").get(key).length);
      }
      assertEquals(12, a.getMap("heap").size());
    } finally {
      batching.terminateAll();
    }
  }

  /** Runs {@code write}, which must be refused by the in-flight rule of map {@code map}. */
  private static void assertRefused(String map, String path, Runnable write) {
    try {
      write.run();
      fail(path + " of a value over the in-flight limit was accepted");
    } catch (RuntimeException e) {
      assertInFlightRefusal(map, e);
    }
  }

  /**
   * Every single-key write path of an IMap is refused on the owner before anything is stored:
   * the refused keys stay absent, the keys a replace was refused on keep their value, and owner
   * and backup still agree. On a map with eviction and on one without (patch 0010, revision 8:
   * before it the hooks asked only maps with an evictor, and a map without eviction stored such a
   * value on owner and backup alike).
   */
  @Test
  public void everySingleKeyWritePath_isRefused_andStoresNothing() {
    assertEverySingleKeyWritePathIsRefused("heap");
  }

  @Test
  public void mapWithoutEviction_everySingleKeyWritePath_isRefused_andStoresNothing() {
    assertEverySingleKeyWritePathIsRefused("plain");
  }

  private void assertEverySingleKeyWritePathIsRefused(String name) {
    IMap<Integer, byte[]> map = member.getMap(name);
    byte[] kept = new byte[1024];
    kept[7] = 7;
    map.put(1, kept);
    assertRefused(name, "put", () -> map.put(10, new byte[tooLarge]));
    assertRefused(name, "put with ttl",
        () -> map.put(11, new byte[tooLarge], 1, TimeUnit.HOURS));
    assertRefused(name, "set", () -> map.set(12, new byte[tooLarge]));
    assertRefused(name, "putIfAbsent", () -> map.putIfAbsent(13, new byte[tooLarge]));
    assertRefused(name, "putTransient",
        () -> map.putTransient(14, new byte[tooLarge], 0, TimeUnit.SECONDS));
    assertRefused(name, "tryPut",
        () -> map.tryPut(15, new byte[tooLarge], 10, TimeUnit.SECONDS));
    assertRefused(name, "setAsync", () -> map.setAsync(16, new byte[tooLarge])
        .toCompletableFuture().join());
    assertRefused(name, "putAsync", () -> map.putAsync(17, new byte[tooLarge])
        .toCompletableFuture().join());
    assertRefused(name, "replace", () -> map.replace(1, new byte[tooLarge]));
    assertRefused(name, "replace(k, old, new)",
        () -> map.replace(1, kept.clone(), new byte[tooLarge]));
    assertRefused(name, "executeOnKey", () -> map.executeOnKey(18,
        new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(tooLarge)));
    assertRefused(name, "executeOnKey on a present key", () -> map.executeOnKey(1,
        new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(tooLarge)));
    assertRefused(name, "submitToKey", () -> map.submitToKey(19,
        new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(tooLarge))
        .toCompletableFuture().join());
    for (int key = 10; key <= 19; key++) {
      assertFalse("key " + key, map.containsKey(key));
    }
    assertTrue("the replaced value is kept", Arrays.equals(kept, map.get(1)));
    assertReplicasHold(name, 1);
    // a value of half the size still passes every path
    map.putTransient(14, new byte[tooLarge / 2], 0, TimeUnit.SECONDS);
    assertTrue(map.tryPut(15, new byte[tooLarge / 2], 10, TimeUnit.SECONDS));
    assertReplicasHold(name, 3);
  }

  /**
   * A value a MapLoader returns is never refused (admission does not ask a load): the MapLoader
   * has allocated it on the owner already, and the caller asked to read it. The caller gets it
   * whole and the owner keeps it.
   */
  @Test
  public void load_ofAValueOverTheInFlightLimit_isServedNotRefused() {
    WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.LOADABLE.clear();
    byte[] value = new byte[tooLarge];
    value[5] = 5;
    WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.LOADABLE.put("in-db", value);
    try {
      IMap<String, byte[]> map = member.getMap("loaded");
      assertTrue("the MapLoader's value is returned", Arrays.equals(value, map.get("in-db")));
      assertTrue("and kept", Arrays.equals(value, map.get("in-db")));
      long owned = 0;
      for (HazelcastInstance m : new HazelcastInstance[] {member, other}) {
        owned += m.getMap("loaded").getLocalMapStats().getOwnedEntryCount();
      }
      assertEquals("the owner keeps the loaded entry", 1, owned);
    } finally {
      WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.LOADABLE.clear();
    }
  }

  /**
   * A multi-key entry processor is not asked (its keys of a partition run one after the other,
   * each stored before the next runs: a refusal after the first would store half the batch).
   * Its values over the limit are stored, on owner and backup alike.
   */
  @Test
  public void entryProcessorOnManyKeys_isNotRefused_andReplicasAgree() {
    IMap<Integer, byte[]> map = member.getMap("heap");
    for (int i = 0; i < 4; i++) {
      map.put(i, new byte[1024]);
    }
    map.executeOnKeys(new HashSet<>(Arrays.asList(0, 1)),
        new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(tooLarge));
    assertEquals(tooLarge, map.get(0).length);
    assertEquals(tooLarge, map.get(1).length);
    assertEquals(1024, map.get(2).length);
    assertReplicasHold("heap", 4);
  }

  /** Sets a value of {@code large} bytes on key {@code largeKey}, of 100 bytes on the others. */
  static final class SetLargeOn<K> implements com.hazelcast.map.EntryProcessor<K, byte[], Object> {
    private final Object largeKey;
    private final int large;

    SetLargeOn(Object largeKey, int large) {
      this.largeKey = largeKey;
      this.large = large;
    }

    @Override
    public Object process(Map.Entry<K, byte[]> entry) {
      entry.setValue(new byte[entry.getKey().equals(largeKey) ? large : 100]);
      return null;
    }
  }

  /** An {@link com.hazelcast.core.Offloadable} processor that sets a value of {@code size}. */
  static final class OffloadedSet implements com.hazelcast.map.EntryProcessor<Integer, byte[], Object>,
      com.hazelcast.core.Offloadable {
    private final int size;

    OffloadedSet(int size) {
      this.size = size;
    }

    @Override
    public Object process(Map.Entry<Integer, byte[]> entry) {
      entry.setValue(new byte[size]);
      return null;
    }

    @Override
    public String getExecutorName() {
      return com.hazelcast.core.Offloadable.OFFLOADABLE_EXECUTOR;
    }
  }

  /**
   * An Offloadable entry processor runs off the partition thread with its key locked, and its
   * result is stored by {@code EntryOffloadableSetUnlockOperation} on the partition thread: the
   * refusal comes from there, the key keeps its value and is unlocked again (a write of it goes
   * through at once), and owner and backup agree.
   */
  @Test
  public void offloadableEntryProcessor_isRefused_andLeavesTheKeyUnlockedAndUnchanged() {
    IMap<Integer, byte[]> map = member.getMap("heap");
    byte[] kept = new byte[1024];
    kept[3] = 3;
    map.put(1, kept);
    assertRefused("heap", "offloadable executeOnKey",
        () -> map.executeOnKey(1, new OffloadedSet(tooLarge)));
    assertRefused("heap", "offloadable submitToKey",
        () -> map.submitToKey(1, new OffloadedSet(tooLarge)).toCompletableFuture().join());
    assertTrue("the value is kept", Arrays.equals(kept, map.get(1)));
    assertFalse("the key is unlocked", map.isLocked(1));
    assertTrue("a write of the key goes through at once",
        map.tryPut(1, new byte[10], 5, TimeUnit.SECONDS));
    map.executeOnKey(1, new OffloadedSet(tooLarge / 2));
    assertEquals(tooLarge / 2, map.get(1).length);
    assertReplicasHold("heap", 1);
  }

  /**
   * With an offloaded MapStore a multi-key entry processor runs as steps: every key of a
   * partition's batch is processed, and its computed value admitted, before any is stored
   * ({@code MultipleEntryOpSteps} and {@code PartitionWideEntryOpSteps}: PROCESS, then
   * STORE_OR_DELETE). A value over the limit on one key refuses the partition's batch whole: no
   * key of it changes, the MapStore sees none of it, owner and backup agree.
   */
  @Test
  public void entryProcessorOnManyKeys_withOffloadedMapStore_refusesThePartitionBatchWhole() {
    WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.clear();
    IMap<String, byte[]> map = member.getMap("stored");
    List<String> keys = stringKeysOfPartitionOfK0(3);
    for (String k : keys) {
      map.put(k, new byte[1024]);
    }
    // the large value on the first, the middle and the last key of the batch
    for (String large : keys) {
      assertRefused("stored", "executeOnKeys, large on " + large,
          () -> map.executeOnKeys(new HashSet<>(keys), new SetLargeOn<>(large, tooLarge)));
      assertRefused("stored", "executeOnEntries, large on " + large,
          () -> map.executeOnEntries(new SetLargeOn<>(large, tooLarge)));
    }
    for (String k : keys) {
      assertEquals(k + " unchanged", 1024, map.get(k).length);
      assertEquals(k + ": the MapStore saw only its put", Integer.valueOf(1),
          WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.get(k));
    }
    assertReplicasHold("stored", 3);
    // the same batch with small values goes in whole
    map.executeOnKeys(new HashSet<>(keys), new SetLargeOn<>("none", 0));
    for (String k : keys) {
      assertEquals(k, 100, map.get(k).length);
    }
    assertReplicasHold("stored", 3);
  }

  /**
   * With an offloaded MapStore the computed values of a partition's batch are all held, as the
   * steps' state, from PROCESS until STORE_OR_DELETE and ON_STORE_OR_DELETE store them (the
   * MapStore step runs off the partition thread in between): they are in flight together, like a
   * putAll batch, and count together. Values that each fit the limit but together do not refuse
   * the partition's batch whole: no key changes, the MapStore sees none of it, no key is left
   * locked, owner and backup agree. Each of them alone still passes.
   */
  @Test
  public void entryProcessorOnManyKeys_withOffloadedMapStore_valuesThatFitAloneButNotTogether_refusesThePartitionBatchWhole() {
    // with eviction and without (patch 0010)
    for (String name : Arrays.asList("stored", "plainStored")) {
      WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.clear();
      IMap<String, byte[]> map = member.getMap(name);
      List<String> keys = stringKeysOfPartitionOfK0(3);
      for (String k : keys) {
        map.put(k, new byte[1024]);
      }
      assertRefused(name, "executeOnKeys of 3 values of " + tooLarge / 2 + " bytes",
          () -> map.executeOnKeys(new HashSet<>(keys),
              new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(tooLarge / 2)));
      assertRefused(name, "executeOnEntries of 3 values of " + tooLarge / 2 + " bytes",
          () -> map.executeOnEntries(
              new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(tooLarge / 2)));
      for (String k : keys) {
        assertEquals(k + " unchanged", 1024, map.get(k).length);
        assertFalse(k + " unlocked", map.isLocked(k));
        assertEquals(k + ": the MapStore saw only its put", Integer.valueOf(1),
            WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.get(k));
      }
      assertReplicasHold(name, 3);
      // each of them alone passes
      for (String k : keys) {
        map.executeOnKeys(new HashSet<>(Arrays.asList(k)),
            new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(tooLarge / 2));
        assertEquals(k, tooLarge / 2, map.get(k).length);
      }
      assertReplicasHold(name, 3);
    }
  }

  /**
   * A refused multi-key entry processor batch of k values counts 2k rejected entries, not k:
   * the refusal is an exception in the partition's response, which upstream
   * {@code InvokeOnPartitions} (executeOnKeys, executeOnEntries, and an embedded member's
   * putAll) retries once with a single-partition invocation, so the processor runs and the
   * batch is refused twice. Through revision 7 the docs said k (it was 6 here, not 3).
   */
  @Test
  public void entryProcessorOnManyKeys_refusedBatch_isTriedTwice_andCountsEachValueTwice() {
    IMap<String, byte[]> map = member.getMap("stored");
    List<String> keys = stringKeysOfPartitionOfK0(3);
    for (String k : keys) {
      map.put(k, new byte[1024]);
    }
    // the owner counts; sum both members
    long before = TestMembers.metrics(member).getRejectedEntries()
        + TestMembers.metrics(other).getRejectedEntries();
    assertRefused("stored", "executeOnKeys of 3 values of " + tooLarge / 2 + " bytes",
        () -> map.executeOnKeys(new HashSet<>(keys),
            new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(tooLarge / 2)));
    assertEquals("rejected entries of the refused batch, refused twice", 6,
        TestMembers.metrics(member).getRejectedEntries()
            + TestMembers.metrics(other).getRejectedEntries() - before);
  }

  /** A value that counts its serializations. */
  static final class CountedValue implements com.hazelcast.nio.serialization.DataSerializable {
    static final java.util.concurrent.atomic.AtomicInteger WRITTEN =
        new java.util.concurrent.atomic.AtomicInteger();
    byte[] bytes;

    CountedValue() {
    }

    CountedValue(int size) {
      bytes = new byte[size];
    }

    @Override
    public void writeData(com.hazelcast.nio.ObjectDataOutput out) throws java.io.IOException {
      WRITTEN.incrementAndGet();
      out.writeByteArray(bytes);
    }

    @Override
    public void readData(com.hazelcast.nio.ObjectDataInput in) throws java.io.IOException {
      bytes = in.readByteArray();
    }
  }

  /** Sets a {@link CountedValue} of {@code size} bytes. */
  static final class SetCounted implements com.hazelcast.map.EntryProcessor<Integer, Object, Object> {
    private final int size;

    SetCounted(int size) {
      this.size = size;
    }

    @Override
    public Object process(Map.Entry<Integer, Object> entry) {
      entry.setValue(new CountedValue(size));
      return null;
    }
  }

  /**
   * An OBJECT-format map keeps a single-key entry processor's result as the object it computed,
   * and the backup operation carries the processor, not the value (5.7.0
   * {@code EntryOperation#getBackupOperation}: {@code EntryBackupOperation} with
   * {@code getBackupProcessor()}), which computes the backup's own copy: the value is never
   * serialized on its way in, so it has no array in flight for the rule to bound, and serializing
   * it only to learn its size would allocate the very arrays the rule guards against. Its
   * computed value is not checked, and stored on owner and backup alike; a value sent to the map
   * (a put) arrives serialized and is checked as on a BINARY map.
   */
  @Test
  public void objectFormatMap_entryProcessorValue_isNeverSerializedOnItsWayIn_andNotChecked() {
    IMap<Integer, Object> map = member.getMap("object");
    map.put(1, new CountedValue(16));
    CountedValue.WRITTEN.set(0);
    map.executeOnKey(1, new SetCounted(tooLarge));
    map.executeOnKey(2, new SetCounted(tooLarge));
    assertEquals("serializations of the computed values on owner and backup", 0,
        CountedValue.WRITTEN.get());
    assertReplicasHold("object", 2);
    assertEquals(tooLarge, ((CountedValue) map.get(2)).bytes.length);
    assertRefused("object", "put", () -> map.put(3, new CountedValue(tooLarge)));
    assertFalse(map.containsKey(3));
    assertReplicasHold("object", 2);
  }
}
