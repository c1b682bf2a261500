package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MapStoreConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import com.hazelcast.map.MapStore;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.SimpleEntryView;
import com.hazelcast.map.impl.mapstore.writebehind.WriteBehindStore;
import com.hazelcast.map.impl.mapstore.writebehind.entry.DelayedEntry;
import com.hazelcast.map.impl.operation.MapOperation;
import com.hazelcast.map.impl.operation.MapOperationProvider;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.impl.NodeEngine;
import com.hazelcast.spi.impl.merge.MergingValueFactory;
import com.hazelcast.spi.merge.PassThroughMergePolicy;
import com.hazelcast.spi.merge.SplitBrainMergePolicy;
import com.hazelcast.spi.merge.SplitBrainMergeTypes.MapMergeTypes;
import com.hazelcast.test.HazelcastTestSupport;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import dev.forkset.hazelcast.chunked.ChunkedData;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Chunked stored copies on every path of a map, with the module chunking every value above 16
 * bytes ({@code hazelcast.map.eviction.chunked.values=16}), so that chunks are everywhere, small
 * values included: owner writes (put, set, putIfAbsent, putAll, replace, replace(k, old, new),
 * entry processors), backups, MapStore loads and write-behind queues, migration to an added
 * member. After each phase every replica's record holds a {@link ChunkedData} whose bytes are the
 * owner's, and reads (get, getAll, iteration, values, entry processors, value comparisons) return
 * what was written.
 */
public class ChunkedStoredCopiesTest extends HazelcastTestSupport {
  private static final int CHUNK = 16;

  private TestHazelcastInstanceFactory factory;
  private final List<HazelcastInstance> members = new ArrayList<>();

  /** A MapStore in memory: loads what it holds, records what is stored. */
  public static final class MemoryStore implements MapStore<String, String>, Serializable {
    static final Map<String, String> DATA = new ConcurrentHashMap<>();

    @Override
    public void store(String key, String value) {
      DATA.put(key, value);
    }

    @Override
    public void storeAll(Map<String, String> map) {
      DATA.putAll(map);
    }

    @Override
    public void delete(String key) {
      DATA.remove(key);
    }

    @Override
    public void deleteAll(Collection<String> keys) {
      keys.forEach(DATA::remove);
    }

    @Override
    public String load(String key) {
      return DATA.get(key);
    }

    @Override
    public Map<String, String> loadAll(Collection<String> keys) {
      Map<String, String> out = new HashMap<>();
      for (String k : keys) {
        String v = DATA.get(k);
        if (v != null) {
          out.put(k, v);
        }
      }
      return out;
    }

    @Override
    public Iterable<String> loadAllKeys() {
      return null;
    }
  }

  /** Appends a suffix to the entry's value and returns the old value. */
  public static final class Append implements EntryProcessor<String, String, String> {
    private final String suffix;

    Append(String suffix) {
      this.suffix = suffix;
    }

    @Override
    public String process(Map.Entry<String, String> entry) {
      String old = entry.getValue();
      entry.setValue(old + suffix);
      return old;
    }
  }

  private static Config config() {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    config.setProperty(GcAwareEvictionConfig.CHUNKED_VALUES.name, Integer.toString(CHUNK));
    config.addMapConfig(new MapConfig("m").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1));
    config.addMapConfig(new MapConfig("wb").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1).setMapStoreConfig(new MapStoreConfig().setEnabled(true)
            .setWriteDelaySeconds(3600).setImplementation(new MemoryStore())));
    // The same without offloading: putAll and merges write the MapStore from the record store.
    config.addMapConfig(new MapConfig("wbsync").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1).setMapStoreConfig(new MapStoreConfig().setEnabled(true).setOffload(false)
            .setWriteDelaySeconds(3600).setImplementation(new MemoryStore())));
    config.addMapConfig(new MapConfig("wt").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1).setMapStoreConfig(new MapStoreConfig().setEnabled(true)
            .setWriteDelaySeconds(0).setImplementation(new MemoryStore())));
    return config;
  }

  @Before
  public void start() {
    MemoryStore.DATA.clear();
    factory = createHazelcastInstanceFactory(3);
    members.add(factory.newHazelcastInstance(config()));
    members.add(factory.newHazelcastInstance(config()));
  }

  @After
  public void stop() {
    factory.terminateAll();
  }

  private static String value(String key, int length) {
    StringBuilder b = new StringBuilder(key).append(':');
    while (b.length() < length) {
      b.append((char) ('a' + b.length() % 26));
    }
    return b.toString();
  }

  @Test
  public void everyPath_storesChunks_replicasEqualTheOwner_readsReturnWhatWasWritten() {
    IMap<String, String> map = members.get(0).getMap("m");
    Map<String, String> expected = new HashMap<>();
    for (int i = 0; i < 40; i++) {
      // 1 to ~3 chunks and beyond, and a few values of one chunk or less (stored as they are).
      String k = "put" + i;
      map.put(k, value(k, i * 7));
      expected.put(k, value(k, i * 7));
      k = "set" + i;
      map.set(k, value(k, 100 + i));
      expected.put(k, value(k, 100 + i));
      k = "absent" + i;
      map.putIfAbsent(k, value(k, 40));
      expected.put(k, value(k, 40));
    }
    Map<String, String> batch = new HashMap<>();
    for (int i = 0; i < 40; i++) {
      batch.put("all" + i, value("all" + i, 33 + i));
    }
    map.putAll(batch);
    expected.putAll(batch);
    assertReplicasEqualOwner("m", expected, 2);

    for (int i = 0; i < 40; i++) {
      String k = "put" + i;
      map.replace(k, value(k, 90));
      expected.put(k, value(k, 90));
      // The caller's old value is a HeapData, the stored one chunked: equal both ways.
      k = "set" + i;
      assertTrue(k, map.replace(k, value(k, 100 + i), value(k, 60)));
      expected.put(k, value(k, 60));
      assertFalse(k, map.replace(k, value(k, 61), value(k, 62)));
      k = "absent" + i;
      assertEquals(value(k, 40), map.executeOnKey(k, new Append("-ep")));
      expected.put(k, value(k, 40) + "-ep");
    }
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < 40; i += 2) {
      keys.add("all" + i);
    }
    map.executeOnKeys(keys, new Append("-many"));
    for (String k : keys) {
      expected.put(k, expected.get(k) + "-many");
    }
    assertTrue(map.remove("all1", value("all1", 34)));
    expected.remove("all1");
    assertFalse(map.remove("all3", value("all3", 99)));
    assertTrue(map.containsValue(expected.get("put5")));
    assertReplicasEqualOwner("m", expected, 2);
    assertReads(map, expected);

    members.add(factory.newHazelcastInstance(config()));
    waitAllForSafeState(members);
    assertReplicasEqualOwner("m", expected, 2);
    assertReads(members.get(2).getMap("m"), expected);
  }

  @Test
  public void mapStore_loadsAndWriteBehindQueue_shareTheChunkedCopy() {
    for (int i = 0; i < 30; i++) {
      MemoryStore.DATA.put("load" + i, value("load" + i, 50 + i));
    }
    IMap<String, String> wt = members.get(0).getMap("wt");
    Map<String, String> loaded = new HashMap<>();
    for (int i = 0; i < 30; i++) {
      loaded.put("load" + i, value("load" + i, 50 + i));
      if (i % 2 == 0) {
        assertEquals(loaded.get("load" + i), wt.get("load" + i));
      }
    }
    Set<String> rest = new HashSet<>();
    for (int i = 1; i < 30; i += 2) {
      rest.add("load" + i);
    }
    assertEquals(rest.size(), wt.getAll(rest).size());
    // A get's load stores on the owner only (stock Hazelcast sends no backup for it).
    assertReplicasEqualOwner("wt", loaded, 1);

    IMap<String, String> wb = members.get(0).getMap("wb");
    Map<String, String> expected = new HashMap<>();
    for (int i = 0; i < 30; i++) {
      String k = "wb" + i;
      wb.put(k, value(k, 20 + i));
      wb.set(k, value(k, 70 + i));
      expected.put(k, value(k, 70 + i));
    }
    assertReplicasEqualOwner("wb", expected, 2);
    assertQueuesHoldTheRecordsCopy("wb", expected.size());
    wb.flush();
    for (Map.Entry<String, String> e : expected.entrySet()) {
      assertEquals(e.getKey(), e.getValue(), MemoryStore.DATA.get(e.getKey()));
    }
  }

  /**
   * putAll and merges write the MapStore before the record is made: in their own steps on an
   * offloaded MapStore (the default: PutAllOpSteps, MergeOpSteps), in the record store's merge
   * otherwise. Their write-behind queues must hold the record's copy too, not the value as it
   * arrived, which would stay beside the chunks until the flush.
   */
  @Test
  public void writeBehindQueues_ofPutAllAndMerges_holdTheRecordsCopy() {
    for (String name : new String[] {"wb", "wbsync"}) {
      putAllAndMerge(name);
    }
  }

  private void putAllAndMerge(String name) {
    IMap<String, String> map = members.get(0).getMap(name);
    Map<String, String> expected = new HashMap<>();
    Map<String, String> batch = new HashMap<>();
    // keys named after the map: the store's DATA is shared, and the flush check below must see
    // this map's writes, not the same keys written by the map before it
    for (int i = 0; i < 30; i++) {
      batch.put(name + "-all" + i, value(name + "-all" + i, 40 + i));
    }
    map.putAll(batch);
    expected.putAll(batch);
    assertReplicasEqualOwner(name, expected, 2);
    assertQueuesHoldTheRecordsCopy(name, expected.size());
    // Merges as split-brain healing and WAN apply them (PassThroughMergePolicy): of new keys and
    // of keys putAll stored.
    NodeEngine ne = ne(members.get(0));
    SplitBrainMergePolicy<Object, MapMergeTypes<Object, Object>, Object> policy =
        ne.getSplitBrainMergePolicyProvider().getMergePolicy(PassThroughMergePolicy.class.getName());
    MapOperationProvider operations =
        TestMembers.mapServiceContext(members.get(0)).getMapOperationProvider(name);
    for (int i = 0; i < 30; i++) {
      String k = name + (i % 2 == 0 ? "-merged" + i : "-all" + i);
      String v = value(k, 50 + i);
      Data key = ne.toData(k);
      MapMergeTypes<Object, Object> entry = MergingValueFactory.createMergingEntry(
          ne.getSerializationService(), new SimpleEntryView<>(key, ne.toData(v)));
      MapOperation merge = operations.createMergeOperation(name, entry, policy, false);
      ne.getOperationService().invokeOnPartition(MapService.SERVICE_NAME, merge,
          ne.getPartitionService().getPartitionId(key)).join();
      expected.put(k, v);
    }
    assertReplicasEqualOwner(name, expected, 2);
    assertQueuesHoldTheRecordsCopy(name, expected.size());
    map.flush();
    for (Map.Entry<String, String> e : expected.entrySet()) {
      assertEquals(e.getKey(), e.getValue(), MemoryStore.DATA.get(e.getKey()));
    }
  }

  /** Owner and backup queues of {@code name} hold each of {@code keys} keys once, as the record's own copy. */
  private void assertQueuesHoldTheRecordsCopy(String name, int keys) {
    int queued = 0;
    for (HazelcastInstance member : members) {
      for (int pid = 0; pid < partitions(member); pid++) {
        RecordStore<?> store = TestMembers.store(member, name, pid);
        if (store == null) {
          continue;
        }
        WriteBehindStore queue = (WriteBehindStore) store.getMapDataStore();
        for (DelayedEntry<?, ?> entry : queue.getWriteBehindQueue().asList()) {
          Record<?> record = store.getRecord((Data) entry.getKey());
          String where = member.getName() + " " + ne(member).toObject(entry.getKey());
          assertNotNull(where, record);
          assertTrue(where + " queues " + entry.getValue(), entry.getValue() instanceof ChunkedData);
          // Coalesced: the latest write of the key, the record's own copy (no second array).
          assertSame(where, record.getValue(), entry.getValue());
          queued++;
        }
      }
    }
    assertEquals("owner and backup queue every key", 2 * keys, queued);
  }

  private static NodeEngine ne(HazelcastInstance member) {
    return TestMembers.nodeEngine(member);
  }

  private static void assertReads(IMap<String, String> map, Map<String, String> expected) {
    for (Map.Entry<String, String> e : expected.entrySet()) {
      assertEquals(e.getKey(), e.getValue(), map.get(e.getKey()));
    }
    assertEquals(expected, new HashMap<>(map.getAll(expected.keySet())));
    Map<String, String> iterated = new HashMap<>();
    for (Map.Entry<String, String> e : map.entrySet()) {
      iterated.put(e.getKey(), e.getValue());
    }
    assertEquals(expected, iterated);
    Iterator<Map.Entry<String, String>> it = map.iterator();
    int n = 0;
    while (it.hasNext()) {
      Map.Entry<String, String> e = it.next();
      assertEquals(expected.get(e.getKey()), e.getValue());
      n++;
    }
    assertEquals(expected.size(), n);
    List<String> values = new ArrayList<>(map.values());
    List<String> want = new ArrayList<>(expected.values());
    values.sort(null);
    want.sort(null);
    assertEquals(want, values);
  }

  /**
   * Every replica of {@code name} holds every expected key, {@code copies} times in all (at least
   * once and at most twice when {@code copies} is 1); every
   * value longer than a chunk is a ChunkedData; every copy has the owner's bytes, which are the
   * expected value's.
   */
  private void assertReplicasEqualOwner(String name, Map<String, String> expected, int copies) {
    assertTrueEventually(() -> {
      Map<String, Integer> seen = new HashMap<>();
      for (HazelcastInstance member : members) {
        NodeEngine ne = TestMembers.nodeEngine(member);
        for (int pid = 0; pid < partitions(member); pid++) {
          RecordStore<?> store = TestMembers.store(member, name, pid);
          if (store == null) {
            continue;
          }
          Iterator<? extends Map.Entry<Data, ? extends Record>> it =
              store.getStorage().mutationTolerantIterator();
          while (it.hasNext()) {
            Map.Entry<Data, ? extends Record> entry = it.next();
            String key = ne.toObject(entry.getKey());
            Data stored = (Data) entry.getValue().getValue();
            Data want = ne.toData(expected.get(key));
            assertNotNull(key + " is not expected", want);
            assertEquals(key + " on " + member.getName(), stored.totalSize() > CHUNK,
                stored instanceof ChunkedData);
            assertArrayEquals(key + " on " + member.getName(), want.toByteArray(),
                stored.toByteArray());
            assertEquals(want.hashCode(), stored.hashCode());
            assertEquals(want, stored);
            assertEquals(stored, want);
            seen.merge(key, 1, Integer::sum);
          }
        }
      }
      assertEquals(expected.keySet(), seen.keySet());
      for (Map.Entry<String, Integer> e : seen.entrySet()) {
        if (copies == 1) {
          assertTrue("replicas of " + e.getKey(), e.getValue() >= 1 && e.getValue() <= 2);
        } else {
          assertEquals("replicas of " + e.getKey(), copies, (int) e.getValue());
        }
      }
    });
  }

  private static int partitions(HazelcastInstance member) {
    return TestMembers.nodeEngine(member).getPartitionService().getPartitionCount();
  }
}
