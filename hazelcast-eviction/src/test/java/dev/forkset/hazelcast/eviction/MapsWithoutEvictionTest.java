package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.config.Config;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MapStoreConfig;
import com.hazelcast.map.MapStoreAdapter;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;
import java.io.IOException;
import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The in-flight rule on maps without eviction ({@link MapsWithoutEviction}) judges a write by the
 * backups the running map sends. Two members in this JVM, the setting at 1%: with one backup a
 * value is counted 5 times its size, without backups 3 times.
 */
public class MapsWithoutEvictionTest {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(2);
  private HazelcastInstance member;
  private HazelcastInstance other;
  /** Over the allowance with one backup (5 x size), within it without (3 x size). */
  private final int overWithOneBackup = (int) (Runtime.getRuntime().maxMemory() / 100 / 5)
      + (1 << 20);

  @Before
  public void start() {
    assertTrue("3 x the value within 1% of the max heap",
        3L * overWithOneBackup < Runtime.getRuntime().maxMemory() / 100);
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
    config.addMapConfig(new MapConfig("stored-plain").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1).setMapStoreConfig(new MapStoreConfig().setEnabled(true)
            .setImplementation(new CountingStore())));
    config.addMapConfig(new MapConfig("offloaded-plain").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1).setMapStoreConfig(new MapStoreConfig().setEnabled(true).setOffload(true)
            .setImplementation(new WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore())));
    return config;
  }

  private long entries(String map, boolean backup) {
    long n = 0;
    for (HazelcastInstance m : new HazelcastInstance[] {member, other}) {
      n += backup ? m.getMap(map).getLocalMapStats().getBackupEntryCount()
          : m.getMap(map).getLocalMapStats().getOwnedEntryCount();
    }
    return n;
  }

  /**
   * A map config added (dynamic config) for the name of a map that runs already does not change
   * that map: Hazelcast made its container from the config that matched when it was created (here
   * the default config: BINARY, one backup), and it keeps sending one backup. The rule counts that backup; a lookup of the member's config
   * would find the later config's 0 backups and let through a value the map cannot take.
   */
  @Test
  public void configAddedAfterTheMapRuns_doesNotChangeTheBackupsTheRuleCounts() {
    IMap<Integer, byte[]> map = member.getMap("late");
    map.put(1, new byte[16]);
    member.getConfig().addMapConfig(new MapConfig("late").setBackupCount(0));
    map.put(2, new byte[16]);
    assertEquals("the running map still sends one backup", 2, entries("late", true));
    try {
      map.put(3, new byte[overWithOneBackup]);
      fail("accepted a value of " + overWithOneBackup + " bytes on a map with one backup");
    } catch (RuntimeException e) {
      Throwable t = e;
      while (t != null && !(t instanceof IllegalArgumentException)) {
        t = t.getCause();
      }
      assertNotNull("an IllegalArgumentException, got " + e, t);
      assertTrue(t.getMessage(), t.getMessage().startsWith("Map 'late': a value of ")
          && t.getMessage().contains("(3 + 2 x 1 backups)"));
    }
    assertFalse(map.containsKey(3));
    assertEquals(2, entries("late", false));
    assertEquals(2, entries("late", true));
  }

  /** A value that counts its deserializations. */
  static final class ReadCounted implements DataSerializable {
    static final AtomicInteger READ = new AtomicInteger();
    byte[] bytes;

    ReadCounted() {
    }

    ReadCounted(int size) {
      bytes = new byte[size];
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
      out.writeByteArray(bytes);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
      READ.incrementAndGet();
      bytes = in.readByteArray();
    }
  }

  /** Remembers the last value stored. */
  public static final class CountingStore extends MapStoreAdapter<Object, Object> {
    static volatile Object last;

    @Override
    public void store(Object key, Object value) {
      last = value;
    }
  }

  /** Sets a {@link ReadCounted}, the same instance every time it runs on one member. */
  static final class SetReadCounted
      implements com.hazelcast.map.EntryProcessor<Integer, Object, Object> {
    static volatile ReadCounted computed;

    @Override
    public Object process(Map.Entry<Integer, Object> entry) {
      ReadCounted value = new ReadCounted(16);
      if (computed == null) {
        computed = value; // the owner runs first, its backup after
      }
      entry.setValue(value);
      return null;
    }
  }

  /**
   * A single-key entry processor's value on a BINARY map without eviction is serialized before
   * it is stored since patch 0010 (the hook shows the provider the stored form, as on a map with
   * eviction, and the MapStore and the record share it), so a write-through MapStore gets a copy
   * deserialized from that form, one deserialization per write, where through revision 7 it got
   * the processor's own object; a write-behind queue holds the serialized form. The cost of
   * checking such values at all: the record needs the serialized form anyway, and showing it to
   * the provider without storing it would serialize the value twice.
   */
  @Test
  public void entryProcessorValue_onBinaryMap_reachesAWriteThroughMapStoreDeserialized() {
    IMap<Integer, Object> map = member.getMap("stored-plain");
    ReadCounted.READ.set(0);
    SetReadCounted.computed = null;
    int key = 0;
    while (!member.getPartitionService().getPartition(key).getOwner().localMember()) {
      key++;
    }
    map.executeOnKey(key, new SetReadCounted());
    assertEquals("deserializations", 1, ReadCounted.READ.get());
    assertNotNull(SetReadCounted.computed);
    assertTrue("the MapStore got a copy, not the processor's object",
        CountingStore.last instanceof ReadCounted && CountingStore.last != SetReadCounted.computed
            && ((ReadCounted) CountingStore.last).bytes.length == 16);
  }

  /**
   * With an offloaded MapStore a multi-key entry processor's values of one partition are held
   * together until stored, and count together on a map without eviction too (patch 0010 with
   * 0009): values that fit alone but not together refuse the partition's batch whole, no key
   * changes, the MapStore sees none of it, owner and backup agree; each value alone passes.
   */
  @Test
  public void entryProcessorOnManyKeys_withOffloadedMapStore_refusesThePartitionBatchWhole() {
    WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.clear();
    IMap<Integer, byte[]> map = member.getMap("offloaded-plain");
    int pid = member.getPartitionService().getPartition(0).getPartitionId();
    Set<Integer> keys = new HashSet<>();
    for (int k = 0; keys.size() < 3; k++) {
      if (member.getPartitionService().getPartition(k).getPartitionId() == pid) {
        keys.add(k);
      }
    }
    for (Integer k : keys) {
      map.put(k, new byte[1024]);
    }
    int half = overWithOneBackup / 2;
    try {
      map.executeOnKeys(keys, new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(half));
      fail("accepted 3 values of " + half + " bytes in one partition's batch");
    } catch (RuntimeException e) {
      Throwable t = e;
      while (t != null && !(t instanceof IllegalArgumentException)) {
        t = t.getCause();
      }
      assertNotNull("an IllegalArgumentException, got " + e, t);
      assertTrue(t.getMessage(), t.getMessage().startsWith("Map 'offloaded-plain': the 3 values")
          && t.getMessage().contains("(3 + 2 x 1 backups)"));
    }
    for (Integer k : keys) {
      assertEquals(k + " unchanged", 1024, map.get(k).length);
      assertFalse(k + " unlocked", map.isLocked(k));
      assertEquals(k + ": the MapStore saw only its put", Integer.valueOf(1),
          WritesAreAdmittedBeforeTheyAreStoredTest.RecordingStore.STORED.get(k));
    }
    assertEquals(3, entries("offloaded-plain", false));
    assertEquals(3, entries("offloaded-plain", true));
    for (Integer k : keys) {
      map.executeOnKeys(Collections.singleton(k),
          new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<>(half));
      assertEquals(k, half, map.get(k).length);
    }
  }
}
