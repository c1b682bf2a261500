package dev.forkset.hazelcast.eviction;

import static com.hazelcast.test.HazelcastTestSupport.assertTrueEventually;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MapStoreConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.SerializationService;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import com.hazelcast.map.MapStoreAdapter;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.operation.MergeOperation;
import com.hazelcast.spi.impl.merge.MapMergingEntryImpl;
import com.hazelcast.spi.merge.PassThroughMergePolicy;
import com.hazelcast.spi.merge.SplitBrainMergePolicy;
import com.hazelcast.spi.merge.SplitBrainMergeTypes.MapMergeTypes;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import com.hazelcast.transaction.TransactionContext;
import com.hazelcast.transaction.TransactionalMap;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.After;
import org.junit.Test;

/**
 * A write that creates or grows an entry on the owner is admitted, or refused as a whole, before
 * anything is stored or written to a MapStore; what replays a decision taken elsewhere (a load
 * from the MapStore, a transaction's commit) is never refused, and a transactional write of an
 * oversized value is refused before the transaction logs it. Limit 10 MB on a G1 model with
 * 1 MB regions: an 11 MB value is oversized, 1 KB values are not.
 */
public class WritesAreAdmittedBeforeTheyAreStoredTest {
  private static final int OVERSIZED = 11 << 20;
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(1);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  /** Every write the store saw, by key. */
  public static final class RecordingStore extends MapStoreAdapter<Object, Object> {
    static final Map<Object, Integer> STORED = new ConcurrentHashMap<>();
    static final Map<Object, Object> LOADABLE = new ConcurrentHashMap<>();

    @Override
    public void store(Object key, Object value) {
      STORED.merge(key, 1, Integer::sum);
    }

    @Override
    public Object load(Object key) {
      return LOADABLE.get(key);
    }
  }

  private HazelcastInstance member(boolean mapStore) {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    MapConfig m = TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 10,
        EvictionPolicy.LRU, 0);
    if (mapStore) {
      RecordingStore.STORED.clear();
      RecordingStore.LOADABLE.clear();
      m.setMapStoreConfig(new MapStoreConfig().setEnabled(true).setOffload(true)
          .setImplementation(new RecordingStore()));
    }
    return factory.newHazelcastInstance(config);
  }

  private static void assertOversized(Throwable e) {
    Throwable t = e;
    while (t != null && !(t instanceof IllegalArgumentException)) {
      t = t.getCause();
    }
    assertNotNull("an IllegalArgumentException to the caller, got " + e, t);
    assertTrue(t.getMessage(), t.getMessage().contains("Map 'm'")
        && t.getMessage().contains("per-member limit of 10485760 bytes"));
  }

  /** Keys of one partition, so that putAll sends them in one operation. */
  private static List<Integer> keysOfOnePartition(HazelcastInstance member, int n) {
    List<Integer> keys = new ArrayList<>();
    int pid = member.getPartitionService().getPartition(0).getPartitionId();
    for (int k = 0; keys.size() < n; k++) {
      if (member.getPartitionService().getPartition(k).getPartitionId() == pid) {
        keys.add(k);
      }
    }
    return keys;
  }

  @Test
  public void putAll_withOneOversizedEntry_storesNoneOfTheBatch() {
    HazelcastInstance member = member(false);
    IMap<Integer, byte[]> map = member.getMap("m");
    List<Integer> keys = keysOfOnePartition(member, 10);
    Map<Integer, byte[]> batch = new LinkedHashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      batch.put(keys.get(i), new byte[i == 5 ? OVERSIZED : 1024]);
    }
    try {
      map.putAll(batch);
      fail("a batch with an oversized entry was stored");
    } catch (RuntimeException e) {
      assertOversized(e);
    }
    assertEquals("entries of the refused batch in the map", 0, map.size());
  }

  @Test
  public void merge_withOneOversizedEntry_dropsOnlyThatEntry_withoutFailingTheMerge()
      throws Exception {
    HazelcastInstance member = member(false);
    IMap<Integer, byte[]> map = member.getMap("m");
    map.put(-1, new byte[16]); // creates the map's container and record stores
    List<Integer> keys = keysOfOnePartition(member, 6);
    SerializationService ss = TestMembers.nodeEngine(member).getSerializationService();
    List<MapMergeTypes<Object, Object>> entries = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      Data key = ss.toData(keys.get(i));
      Data value = ss.toData(new byte[i == 3 ? OVERSIZED : 1024]);
      entries.add(new MapMergingEntryImpl<Object, Object>(ss).setKey(key).setValue(value)
          .setCreationTime(1).setLastAccessTime(1).setLastUpdateTime(1));
    }
    SplitBrainMergePolicy<Object, MapMergeTypes<Object, Object>, Object> policy =
        new PassThroughMergePolicy<>();
    int pid = member.getPartitionService().getPartition(keys.get(0)).getPartitionId();
    // dropped, not failed: a failed merge invocation would end the merging member's whole merge
    Object merged = TestMembers.nodeEngine(member).getOperationService()
        .invokeOnPartition(MapService.SERVICE_NAME,
            new MergeOperation("m", entries, policy, false), pid).get();
    assertEquals("the response of a batch whose other entries merged", Boolean.TRUE, merged);
    assertEquals("the dropped entry", 1, TestMembers.metrics(member).getRejectedEntries());
    for (int i = 0; i < keys.size(); i++) {
      assertEquals("key " + keys.get(i) + " in the map", i != 3, map.containsKey(keys.get(i)));
    }
  }

  @Test
  public void put_ofAnOversizedValue_withAnOffloadedMapStore_neverReachesTheStore() {
    HazelcastInstance member = member(true);
    IMap<String, byte[]> map = member.getMap("m");
    map.put("small", new byte[1024]);
    assertEquals(Integer.valueOf(1), RecordingStore.STORED.get("small"));
    try {
      map.put("big", new byte[OVERSIZED]);
      fail("an oversized entry was stored");
    } catch (RuntimeException e) {
      assertOversized(e);
    }
    assertNull("the refused value was written to the MapStore",
        RecordingStore.STORED.get("big"));
    assertFalse(map.containsKey("big"));
  }

  @Test
  public void update_thatGrowsAnEntryBeyondTheLimit_isRefusedAndKeepsThePreviousValue() {
    HazelcastInstance member = member(false);
    IMap<String, byte[]> map = member.getMap("m");
    byte[] previous = new byte[1024];
    previous[0] = 42;
    map.put("k", previous);
    try {
      map.put("k", new byte[OVERSIZED]);
      fail("an update to an oversized value was stored");
    } catch (RuntimeException e) {
      assertOversized(e);
    }
    assertArrayEquals("the previous value survives", previous, map.get("k"));
    try {
      map.replace("k", new byte[OVERSIZED]);
      fail("a replace with an oversized value was stored");
    } catch (RuntimeException e) {
      assertOversized(e);
    }
    assertArrayEquals(previous, map.get("k"));
  }

  /** Sets the value of the entries it runs on to {@code bytes} bytes. */
  public static final class SetBytes<K> implements EntryProcessor<K, byte[], Object> {
    private final int bytes;

    SetBytes(int bytes) {
      this.bytes = bytes;
    }

    @Override
    public Object process(Map.Entry<K, byte[]> entry) {
      entry.setValue(new byte[bytes]);
      return null;
    }
  }

  @Test
  public void entryProcessorOnOneKey_computingAnOversizedValue_isRefusedAndKeepsTheEntry() {
    HazelcastInstance member = member(false);
    IMap<String, byte[]> map = member.getMap("m");
    byte[] previous = new byte[1024];
    previous[3] = 3;
    map.put("k", previous);
    try {
      map.executeOnKey("k", new SetBytes<>(OVERSIZED));
      fail("an oversized computed value was stored");
    } catch (RuntimeException e) {
      assertOversized(e);
    }
    assertArrayEquals(previous, map.get("k"));
    map.executeOnKey("k", new SetBytes<>(2048));
    assertEquals(2048, map.get("k").length);
  }

  /**
   * A processor on many keys is not refused entry by entry: refusing the i-th would leave the
   * first i - 1 applied without their backups. The oversized value is stored, and the map gets
   * back under its limit with the next write's eviction.
   */
  @Test
  public void entryProcessorOnManyKeys_computingAnOversizedValue_completesAndTheMapComesBack()
      throws Exception {
    HazelcastInstance member = member(false);
    IMap<Integer, byte[]> map = member.getMap("m");
    for (int i = 0; i < 20; i++) {
      map.put(i, new byte[1024]);
    }
    map.executeOnKeys(new java.util.HashSet<>(java.util.Arrays.asList(3)),
        new SetBytes<>(OVERSIZED));
    map.executeOnEntries(new SetBytes<>(2048));
    for (int i = 0; i < 20; i++) {
      map.set(1000 + i, new byte[100]);
    }
    TestMembers.await("back under the limit", 20,
        () -> TestMembers.cost(member, "m") <= 10L << 20,
        () -> TestMembers.cost(member, "m") + " bytes");
  }

  @Test
  public void load_ofAnOversizedValue_isNeverRefused() {
    HazelcastInstance member = member(true);
    IMap<String, byte[]> map = member.getMap("m");
    byte[] value = new byte[OVERSIZED];
    value[1] = 1;
    RecordingStore.LOADABLE.put("in-db", value);
    assertArrayEquals("the MapStore's value is returned", value, map.get("in-db"));
  }

  @Test
  public void transactionalWrite_ofAnOversizedValue_isRefusedBeforeItIsLogged() {
    HazelcastInstance member = member(false);
    TransactionContext tx = member.newTransactionContext();
    tx.beginTransaction();
    TransactionalMap<String, byte[]> txMap = tx.getMap("m");
    txMap.put("a", new byte[1024]);
    txMap.put("c", new byte[1024]);
    List<Runnable> oversized = Arrays.asList(
        () -> txMap.put("b", new byte[OVERSIZED]),
        () -> txMap.set("b", new byte[OVERSIZED]),
        () -> txMap.putIfAbsent("b", new byte[OVERSIZED]),
        () -> txMap.replace("c", new byte[OVERSIZED]));
    for (Runnable write : oversized) {
      try {
        write.run();
        fail("a transactional write of an oversized value was logged");
      } catch (RuntimeException e) {
        assertOversized(e);
      }
    }
    // the transaction goes on, and its commit (never refused) stores what was logged
    tx.commitTransaction();
    IMap<String, byte[]> map = member.getMap("m");
    assertEquals(1024, map.get("a").length);
    assertEquals(1024, map.get("c").length);
    assertFalse("the refused key was stored", map.containsKey("b"));
    assertFalse("the refused key stayed locked", map.isLocked("b"));
  }

  /**
   * A conditional write that stores nothing is answered as stock answers it, whatever its value:
   * a putIfAbsent of a present key, a replace of an absent key or of a different value. On the
   * partition thread and through an offloaded MapStore.
   */
  @Test
  public void conditionalWrite_thatStoresNothing_isNeverRefused() {
    conditionalWritesThatStoreNothing(false);
  }

  @Test
  public void conditionalWrite_thatStoresNothing_isNeverRefused_withAnOffloadedMapStore() {
    conditionalWritesThatStoreNothing(true);
  }

  private void conditionalWritesThatStoreNothing(boolean mapStore) {
    IMap<String, byte[]> map = member(mapStore).getMap("m");
    byte[] present = new byte[1024];
    present[0] = 7;
    map.put("k", present);
    assertArrayEquals(present, map.putIfAbsent("k", new byte[OVERSIZED]));
    assertNull(map.replace("absent", new byte[OVERSIZED]));
    assertFalse(map.replace("k", new byte[16], new byte[OVERSIZED]));
    assertArrayEquals(present, map.get("k"));
    assertFalse(map.containsKey("absent"));
    if (mapStore) {
      assertEquals("writes the MapStore saw", Integer.valueOf(1), RecordingStore.STORED.get("k"));
      assertNull(RecordingStore.STORED.get("absent"));
    }
  }

  /** Turns a 1-byte value into an oversized one, and an oversized one into 1 KB. */
  public static final class Resizing extends PassThroughInterceptor {
    @Override
    public Object interceptPut(Object oldValue, Object newValue) {
      int length = ((byte[]) newValue).length;
      return length == 1 ? new byte[OVERSIZED] : length == OVERSIZED ? new byte[1024] : newValue;
    }
  }

  /** What an interceptor returns is what is admitted, since it is what is stored. */
  @Test
  public void interceptedWrite_isAdmittedOnTheInterceptorsResult() {
    interceptedWrites(false);
  }

  @Test
  public void interceptedWrite_isAdmittedOnTheInterceptorsResult_withAnOffloadedMapStore() {
    interceptedWrites(true);
  }

  private void interceptedWrites(boolean mapStore) {
    IMap<String, byte[]> map = member(mapStore).getMap("m");
    map.addInterceptor(new Resizing());
    try {
      map.put("grown", new byte[1]);
      fail("an interceptor's oversized result was stored");
    } catch (RuntimeException e) {
      assertOversized(e);
    }
    try {
      map.executeOnKey("grown", new SetBytes<>(1));
      fail("an interceptor's oversized result of an entry processor was stored");
    } catch (RuntimeException e) {
      assertOversized(e);
    }
    assertFalse(map.containsKey("grown"));
    map.put("shrunk", new byte[OVERSIZED]);
    assertEquals(1024, map.get("shrunk").length);
  }

  /** Appends its tag to the value it is given, and records every call. */
  public static final class Appending extends PassThroughInterceptor {
    static final List<String> CALLS = new CopyOnWriteArrayList<>();
    private final String tag;

    Appending(String tag) {
      this.tag = tag;
    }

    @Override
    public Object interceptPut(Object oldValue, Object newValue) {
      CALLS.add(tag + " interceptPut(" + oldValue + ", " + newValue + ")");
      return newValue + tag;
    }

    @Override
    public void afterPut(Object value) {
      CALLS.add(tag + " afterPut(" + value + ")");
    }
  }

  /**
   * The admission between the interceptors and the store keeps upstream's chain: each interceptor
   * is given the previous one's result and the entry's original old value, the last result is
   * stored, and every afterPut gets it. afterPut runs after the response, so it is waited for
   * (upstream's InterceptorTest waits 120 ms for it, and is left out for that).
   */
  @Test
  public void interceptorChain_givesEachThePreviousResultAndTheOriginalOldValue()
      throws InterruptedException {
    chainedInterceptors(false);
  }

  @Test
  public void interceptorChain_givesEachThePreviousResultAndTheOriginalOldValue_withAnOffloadedMapStore()
      throws InterruptedException {
    chainedInterceptors(true);
  }

  private void chainedInterceptors(boolean mapStore) throws InterruptedException {
    HazelcastInstance member = member(mapStore);
    IMap<String, String> map = member.getMap("m");
    map.put("k", "old");
    // that put's afterRun may still be to come, and would call the first interceptor's afterPut
    TestMembers.drainPartitionThreads(member);
    Appending.CALLS.clear();
    map.addInterceptor(new Appending("+a"));
    map.addInterceptor(new Appending("+b"));
    map.put("k", "new");
    assertEquals("new+a+b", map.get("k"));
    assertTrueEventually(() -> assertEquals(Arrays.asList(
        "+a interceptPut(old, new)", "+b interceptPut(old, new+a)",
        "+a afterPut(new+a+b)", "+b afterPut(new+a+b)"), Appending.CALLS));
  }

  /** A value that counts how often it is serialized. */
  public static final class Counted implements Serializable {
    static final AtomicInteger WRITES = new AtomicInteger();
    private final byte[] bytes = new byte[1024];

    private void writeObject(ObjectOutputStream out) throws IOException {
      WRITES.incrementAndGet();
      out.defaultWriteObject();
    }
  }

  /** Sets the value of the entry it runs on to a new {@link Counted}. */
  public static final class SetCounted implements EntryProcessor<String, Counted, Object> {
    @Override
    public Object process(Map.Entry<String, Counted> entry) {
      entry.setValue(new Counted());
      return null;
    }
  }

  /** The value an entry processor computed is serialized once: the admission sees the stored form. */
  @Test
  public void entryProcessorResult_isSerializedOnce() {
    HazelcastInstance member = member(false);
    IMap<String, Counted> map = member.getMap("m");
    Counted.WRITES.set(0);
    map.executeOnKey("k", new SetCounted());
    assertEquals("serializations of the computed value", 1, Counted.WRITES.get());
    assertNotNull(map.get("k"));
  }
}
