package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MapStoreConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.MapInterceptor;
import com.hazelcast.map.MapStoreAdapter;
import com.hazelcast.test.HazelcastTestSupport;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import com.hazelcast.transaction.TransactionContext;
import java.util.Collections;
import org.junit.After;
import org.junit.Test;

/**
 * An entry whose cost alone exceeds the map's per-member limit but that got in without admission
 * (a load, {@code reject.oversized=false}, an entry processor on many keys, an interceptor that
 * grows a value of a putAll, a backup or a transaction's commit on a member that models it
 * larger) is the entry that goes: the rest of the map stays. One member: limit 10 MB on a G1 model with 1 MB
 * regions; 2000 entries of 1 KB (about 2.3 MB), then one of 11 MB.
 */
public class OversizedArrivalsTest {
  private static final int OVERSIZED = 11 << 20;
  private static final long LIMIT = 10L << 20;
  private static final int SMALL = 2000;
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(2);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  /** Loads an 11 MB value for the key "big". */
  public static final class BigLoader extends MapStoreAdapter<Object, Object> {
    @Override
    public Object load(Object key) {
      return "big".equals(key) ? new byte[OVERSIZED] : null;
    }
  }

  /** Stores every put's value 11 MB large. */
  public static final class GrowingInterceptor implements MapInterceptor {
    @Override
    public Object interceptGet(Object value) {
      return value;
    }

    @Override
    public void afterGet(Object value) {
    }

    @Override
    public Object interceptPut(Object oldValue, Object newValue) {
      return "big".equals(newValue) ? new byte[OVERSIZED] : newValue;
    }

    @Override
    public void afterPut(Object value) {
    }

    @Override
    public Object interceptRemove(Object removedValue) {
      return removedValue;
    }

    @Override
    public void afterRemove(Object value) {
    }
  }

  private HazelcastInstance member(boolean rejectOversized, boolean loader) {
    Config config = TestMembers.withoutTimeCap(TestMembers.config(TestMembers.REGION_1M, 2));
    config.setProperty(GcAwareEvictionConfig.REJECT_OVERSIZED.name,
        Boolean.toString(rejectOversized));
    MapConfig m = TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 10,
        EvictionPolicy.LRU, 0);
    if (loader) {
      m.setMapStoreConfig(new MapStoreConfig().setEnabled(true)
          .setImplementation(new BigLoader()));
    }
    return factory.newHazelcastInstance(config);
  }

  private static IMap<Object, Object> filled(HazelcastInstance member) {
    IMap<Object, Object> map = member.getMap("m");
    for (int i = 0; i < SMALL; i++) {
      map.set(i, new byte[1024]);
    }
    assertEquals("the small entries fit", SMALL, map.size());
    return map;
  }

  /**
   * Once the passes of the arrival have ended: at least 99% of the small entries are still there,
   * the oversized one is not, and the map is within its limit.
   */
  private static void assertOnlyTheOversizedEntryWent(HazelcastInstance member,
      IMap<Object, Object> map) throws InterruptedException {
    TestMembers.drainPartitionThreads(member);
    // localKeySet, not containsKey: a map with a loader would load a missing key back.
    java.util.Set<Object> keys = map.localKeySet();
    int small = 0;
    for (int i = 0; i < SMALL; i++) {
      small += keys.contains(i) ? 1 : 0;
    }
    assertTrue("small entries left: " + small + " of " + SMALL + " (evictions "
        + TestMembers.metrics(member).getEvictionCount() + ")", small >= SMALL * 99 / 100);
    assertFalse("the oversized entry is still in the map", keys.contains("big"));
    assertTrue("cost " + TestMembers.cost(member, "m"), TestMembers.cost(member, "m") <= LIMIT);
  }

  @Test
  public void load_ofAnOversizedValue_evictsItAndKeepsTheOthers() throws Exception {
    HazelcastInstance member = member(true, true);
    IMap<Object, Object> map = filled(member);
    assertEquals("the loaded value is returned", OVERSIZED, ((byte[]) map.get("big")).length);
    assertOnlyTheOversizedEntryWent(member, map);
  }

  @Test
  public void set_ofAnOversizedValue_withRejectOversizedOff_evictsItAndKeepsTheOthers()
      throws Exception {
    HazelcastInstance member = member(false, false);
    IMap<Object, Object> map = filled(member);
    map.set("big", new byte[OVERSIZED]);
    assertOnlyTheOversizedEntryWent(member, map);
    map.set(SMALL, new byte[1024]);
    assertOnlyTheOversizedEntryWent(member, map);
  }

  @Test
  public void entryProcessorOnManyKeys_computingAnOversizedValue_evictsItAndKeepsTheOthers()
      throws Exception {
    HazelcastInstance member = member(true, false);
    IMap<Object, Object> map = filled(member);
    map.set("big", new byte[16]);
    IMap<Object, byte[]> bytes = member.getMap("m");
    bytes.executeOnKeys(Collections.<Object>singleton("big"),
        new WritesAreAdmittedBeforeTheyAreStoredTest.SetBytes<Object>(OVERSIZED));
    assertOnlyTheOversizedEntryWent(member, map);
  }

  /**
   * Two members that model the map's entries differently (G1 regions of 1 MB and 8 MB; limit
   * 12 MB): an 8 MB value costs 9 MB on the first and 16 MB, two whole regions, on the second.
   */
  private static Config unequal(String regionSize, int backups) {
    Config config = TestMembers.withoutTimeCap(TestMembers.config(regionSize, 2));
    // A put returns once its backup is acknowledged (the timeout is far above a loaded box's).
    config.setProperty("hazelcast.operation.fail.on.indeterminate.state", "true");
    config.setProperty("hazelcast.operation.backup.timeout.millis", "60000");
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 12, EvictionPolicy.LRU, backups);
    return config;
  }

  /** The small entries still in the map, cluster-wide, once every member's passes ended. */
  private static int smallEntriesLeft(IMap<Object, Object> map, HazelcastInstance... members)
      throws InterruptedException {
    TestMembers.drainPartitionThreads(members);
    java.util.Set<Object> keys = map.keySet();
    int small = 0;
    for (int i = 0; i < SMALL; i++) {
      small += keys.contains(i) ? 1 : 0;
    }
    return small;
  }

  @Test
  public void backup_onAMemberThatModelsItOversized_evictsThatCopyOnly() throws Exception {
    HazelcastInstance owner = factory.newHazelcastInstance(unequal("1m", 1));
    HazelcastInstance replica = factory.newHazelcastInstance(unequal("8m", 1));
    HazelcastTestSupport.waitAllForSafeState(owner, replica);
    IMap<Object, Object> map = filled(owner);
    String key = HazelcastTestSupport.generateKeyOwnedBy(owner);
    map.set(key, new byte[8 << 20]);
    int small = smallEntriesLeft(map, owner, replica);
    assertTrue("small entries left: " + small + " of " + SMALL + " (evictions on the 8m member "
        + TestMembers.metrics(replica).getEvictionCount() + ")", small >= SMALL * 99 / 100);
    assertEquals("the owner keeps the entry it admitted", 8 << 20,
        ((byte[]) map.get(key)).length);
    assertTrue("8m member's cost " + TestMembers.cost(replica, "m"),
        TestMembers.cost(replica, "m") <= 12L << 20);
  }

  @Test
  public void transactionCommit_onAnOwnerThatModelsItOversized_evictsItAndKeepsTheOthers()
      throws Exception {
    HazelcastInstance runner = factory.newHazelcastInstance(unequal("1m", 0));
    HazelcastInstance owner = factory.newHazelcastInstance(unequal("8m", 0));
    HazelcastTestSupport.waitAllForSafeState(runner, owner);
    IMap<Object, Object> map = filled(runner);
    String key = HazelcastTestSupport.generateKeyOwnedBy(owner);
    TransactionContext tx = runner.newTransactionContext();
    tx.beginTransaction();
    // 9 MB on the member that runs the transaction: within its limit, so not refused there
    tx.getMap("m").set(key, new byte[8 << 20]);
    tx.commitTransaction();
    int small = smallEntriesLeft(map, runner, owner);
    assertTrue("small entries left: " + small + " of " + SMALL + " (evictions on the owner "
        + TestMembers.metrics(owner).getEvictionCount() + ")", small >= SMALL * 99 / 100);
    assertTrue("owner's cost " + TestMembers.cost(owner, "m"),
        TestMembers.cost(owner, "m") <= 12L << 20);
  }

  /**
   * A batch is admitted before its entries are intercepted, so an interceptor that grows a value
   * of a putAll gets it in unchecked (a single-key write is admitted on what the interceptor
   * returns: {@code WritesAreAdmittedBeforeTheyAreStoredTest}).
   */
  @Test
  public void interceptorThatGrowsTheValueOfAPutAll_evictsItAndKeepsTheOthers() throws Exception {
    HazelcastInstance member = member(true, false);
    IMap<Object, Object> map = filled(member);
    map.addInterceptor(new GrowingInterceptor());
    map.putAll(Collections.singletonMap("big", "big"));
    assertOnlyTheOversizedEntryWent(member, map);
  }
}
