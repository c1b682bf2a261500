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
  public static final class GrowingInterceptor extends PassThroughInterceptor {
    @Override
    public Object interceptPut(Object oldValue, Object newValue) {
      return "big".equals(newValue) ? new byte[OVERSIZED] : newValue;
    }
  }

  private HazelcastInstance member(boolean rejectOversized, boolean loader) {
    return member(rejectOversized, loader, true);
  }

  private HazelcastInstance member(boolean rejectOversized, boolean loader,
      boolean offloadedLoader) {
    Config config = TestMembers.withoutTimeCap(TestMembers.config(TestMembers.REGION_1M, 2));
    config.setProperty(GcAwareEvictionConfig.REJECT_OVERSIZED.name,
        Boolean.toString(rejectOversized));
    MapConfig m = TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 10,
        EvictionPolicy.LRU, 0);
    if (loader) {
      m.setMapStoreConfig(new MapStoreConfig().setEnabled(true).setOffload(offloadedLoader)
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
   * Once the passes of the arrival have ended: the oversized entry is the one entry evicted, every
   * small entry is still there, and the map is within its limit with its running total right.
   */
  private static void assertOnlyTheOversizedEntryWent(HazelcastInstance member,
      IMap<Object, Object> map) throws InterruptedException {
    TestMembers.drainPartitionThreads(member);
    // localKeySet, not containsKey: a map with a loader would load a missing key back.
    java.util.Set<Object> keys = map.localKeySet();
    assertEquals("small entries left", SMALL, smallKeys(keys));
    assertFalse("the oversized entry is still in the map", keys.contains("big"));
    assertEquals("evictions", 1, TestMembers.metrics(member).getEvictionCount());
    assertEquals("oversized evictions", 1, TestMembers.metrics(member).getOversizedEvictions());
    assertRunningTotal(member);
    assertTrue("cost " + TestMembers.cost(member, "m"), TestMembers.cost(member, "m") <= LIMIT);
  }

  private static int smallKeys(java.util.Set<Object> keys) {
    int small = 0;
    for (int i = 0; i < SMALL; i++) {
      small += keys.contains(i) ? 1 : 0;
    }
    return small;
  }

  /** The evictor's running total is the sum of the record stores' estimates. */
  private static void assertRunningTotal(HazelcastInstance member) {
    SizeProportionalEvictor evictor = (SizeProportionalEvictor) TestMembers.mapServiceContext(member)
        .getMapContainer("m").getEvictor();
    assertEquals("running total", TestMembers.cost(member, "m"), evictor.footprint().used());
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
   * Values are stored as one array (chunked.values off): chunked, the value would cost about
   * 8 MB on both, and the members would agree.
   */
  private static Config unequal(String regionSize, int backups) {
    Config config = TestMembers.withoutTimeCap(TestMembers.config(regionSize, 2));
    config.setProperty(GcAwareEvictionConfig.CHUNKED_VALUES.name, "off");
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
    HazelcastTestSupport.warmUpPartitions(owner, replica); // the table is arranged on first use
    HazelcastTestSupport.waitAllForSafeState(owner, replica);
    IMap<Object, Object> map = filled(owner);
    String key = HazelcastTestSupport.generateKeyOwnedBy(owner);
    map.set(key, new byte[8 << 20]);
    assertEquals("small entries left", SMALL, smallEntriesLeft(map, owner, replica));
    // keySet reads the owners: the replica's own evictions show a backup entry evicted
    assertEquals("evictions on the 8m member (its backup copy of the 8 MB entry only)", 1,
        TestMembers.metrics(replica).getEvictionCount());
    assertEquals(0, TestMembers.metrics(owner).getEvictionCount());
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
    HazelcastTestSupport.warmUpPartitions(runner, owner);
    HazelcastTestSupport.waitAllForSafeState(runner, owner);
    IMap<Object, Object> map = filled(runner);
    String key = HazelcastTestSupport.generateKeyOwnedBy(owner);
    TransactionContext tx = runner.newTransactionContext();
    tx.beginTransaction();
    // 9 MB on the member that runs the transaction: within its limit, so not refused there
    tx.getMap("m").set(key, new byte[8 << 20]);
    tx.commitTransaction();
    assertEquals("small entries left", SMALL, smallEntriesLeft(map, runner, owner));
    assertEquals("evictions on the owner (the 8 MB entry only)", 1,
        TestMembers.metrics(owner).getEvictionCount());
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

  /**
   * {@code replace} of a key the MapLoader returns oversized, with the MapStore on the partition
   * thread: the record store loads the value inside the write, and the load's eviction pass runs
   * there. It must not evict the record the write then updates (before: the update went to a
   * detached record, the running total drifted by the value's cost, and the key was gone).
   */
  @Test
  public void replace_ofAKeyTheLoaderReturnsOversized_updatesTheStoredRecord() throws Exception {
    HazelcastInstance member = member(true, true, false);
    IMap<Object, Object> map = filled(member);
    assertEquals("replace returns the loaded value", OVERSIZED,
        ((byte[]) map.replace("big", new byte[16])).length);
    TestMembers.drainPartitionThreads(member);
    assertTrue("the replaced key is in the map", map.localKeySet().contains("big"));
    assertEquals(16, ((byte[]) map.get("big")).length);
    assertEquals("small entries left", SMALL, smallKeys(map.localKeySet()));
    assertRunningTotal(member);
  }

  /**
   * An oversized entry that is locked cannot be evicted: the map keeps it and evicts nothing
   * else on its account, and it goes first once unlocked.
   */
  @Test
  public void lockedOversizedEntry_staysWithoutEmptyingTheMap_andGoesOnceUnlocked()
      throws Exception {
    HazelcastInstance member = member(true, true);
    IMap<Object, Object> map = filled(member);
    map.lock("big");
    assertEquals(OVERSIZED, ((byte[]) map.get("big")).length);
    for (int i = 0; i < 50; i++) {
      map.set(SMALL + i, new byte[1024]); // passes on every partition thread
    }
    TestMembers.drainPartitionThreads(member);
    java.util.Set<Object> keys = map.localKeySet();
    assertTrue("the locked entry stays", keys.contains("big"));
    assertEquals("small entries left while it is locked", SMALL, smallKeys(keys));
    assertEquals("evictions while it is locked", 0, TestMembers.metrics(member).getEvictionCount());
    map.unlock("big");
    // a held entry is checked again at a write's pass once this long has passed
    Thread.sleep(OversizedEntries.HELD_RETRY_MILLIS + 50);
    map.set(SMALL + 50, new byte[1024]);
    assertOnlyTheOversizedEntryWent(member, map);
  }
}
