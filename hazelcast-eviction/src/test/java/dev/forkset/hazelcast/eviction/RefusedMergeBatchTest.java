package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.logging.LogEvent;
import com.hazelcast.map.IMap;
import com.hazelcast.test.SplitBrainTestSupport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;

/**
 * A split-brain merge batch whose values do not fit the in-flight allowance together
 * ({@code hazelcast.map.eviction.inflight.heap.percent}) loses only the values that do not fit:
 * the owner merges the others, and the merging member goes on with the other partitions of that
 * map and with the other maps. Before the merge hook let the provider drop a batch, the refusal
 * failed the merge invocation and the merging member's {@code AbstractMergeRunnable} stopped, so
 * whatever it had not sent yet (here: the map "second", merged after "first") was never merged;
 * before the provider could drop single entries (revision 11), the whole batch was dropped.
 *
 * <p>Two members and one member. While split, the single member writes into "first" three
 * values into one partition, each within the allowance alone but not together, and small
 * entries into the other partitions, and small entries into "second". On heal it merges into
 * the larger cluster (PutIfAbsentMergePolicy, the default; each store's entries are sent before
 * the next store's, and the batch-size is above all entries, so the three large values are one
 * batch). The partition's owner after the heal may be any member, the merging one too. The
 * maps are iterated by the merge in HashMap order of their names: "first" before "second"
 * ({@link #mergeVisitsFirstBeforeSecond}); the test passes in any order, but fails without the
 * fix only when the refused batch is not the last one sent.
 */
public class RefusedMergeBatchTest extends SplitBrainTestSupport {
  private static final int SMALL = 100;
  /** One eighth of the allowance: (3 + 2 x 1) x value fits alone, 2 of them together do not. */
  private final int large = (int) (Runtime.getRuntime().maxMemory() / 100 / 8);
  private final List<String> warnings = new CopyOnWriteArrayList<>();
  private final List<Integer> largeKeys = new ArrayList<>();
  private int largePartition = -1;

  @Override
  protected int[] brains() {
    return new int[] {2, 1};
  }

  @Override
  protected Config config() {
    Config config = super.config();
    config.setProperty("hazelcast.partition.count", "71");
    config.setProperty(GcAwareEvictionConfig.GC_MODEL.name, "g1");
    config.setProperty(GcAwareEvictionConfig.REGION_SIZE.name, TestMembers.REGION_1M);
    config.setProperty(GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name, "1");
    // a batch-size above all the entries: each store's entries go in one batch (a smaller one
    // could split the three large values across two batches at the member's 100th entry)
    TestMembers.map(config, "first", MaxSizePolicy.USED_HEAP_SIZE, 1024, EvictionPolicy.LRU, 1)
        .getMergePolicyConfig().setBatchSize(1000);
    TestMembers.map(config, "second", MaxSizePolicy.USED_HEAP_SIZE, 1024, EvictionPolicy.LRU, 1);
    return config;
  }

  /** The order AbstractMergeRunnable#mergingStoresByName (a HashMap) visits the maps in. */
  private static void mergeVisitsFirstBeforeSecond() {
    Map<String, Object> byName = new HashMap<>();
    byName.put("second", 1);
    byName.put("first", 0);
    assertEquals("the merge's map order", "first", byName.keySet().iterator().next());
  }

  @Override
  protected void onAfterSplitBrainCreated(HazelcastInstance[] firstBrain,
      HazelcastInstance[] secondBrain) {
    mergeVisitsFirstBeforeSecond();
    // on every member: the partition's owner after the heal may be the merging member itself
    List<HazelcastInstance> members = new ArrayList<>(Arrays.asList(firstBrain));
    members.addAll(Arrays.asList(secondBrain));
    for (HazelcastInstance member : members) {
      member.getLoggingService().addLogListener(Level.WARNING, (LogEvent event) -> {
        String message = event.getLogRecord().getMessage();
        if (message != null && message.contains("split-brain merge batch")) {
          warnings.add(message);
        }
      });
    }
    HazelcastInstance merging = secondBrain[0];
    IMap<Integer, byte[]> first = merging.getMap("first");
    IMap<Integer, byte[]> second = merging.getMap("second");
    largePartition = TestMembers.partitionId(merging, 0);
    for (int k = 0; largeKeys.size() < 3; k++) {
      if (TestMembers.partitionId(merging, k) == largePartition) {
        largeKeys.add(k);
        // each alone is within the allowance: the single member takes it
        first.set(k, new byte[large]);
      }
    }
    for (int k = 0, n = 0; n < SMALL; k++) {
      if (TestMembers.partitionId(merging, k) != largePartition) {
        first.set(k, new byte[100]);
        n++;
      }
    }
    for (int k = 0; k < SMALL; k++) {
      second.set(k, new byte[100]);
    }
    assertEquals(SMALL + 3, first.size());
  }

  @Override
  protected void onAfterSplitBrainHealed(HazelcastInstance[] instances) throws Exception {
    IMap<Integer, byte[]> first = instances[0].getMap("first");
    IMap<Integer, byte[]> second = instances[0].getMap("second");
    // one large value of the batch fits; the other partitions of "first" and all of "second",
    // merged after that batch
    TestMembers.await("every small entry and one large one merged", 120,
        () -> first.size() == SMALL + 1 && second.size() == SMALL,
        () -> "first " + first.size() + " of " + (SMALL + 1) + ", second " + second.size()
            + " of " + SMALL + "; rejected entries " + rejected(instances) + "; warnings "
            + warnings);
    // logged on the owner's partition thread before the batch's response
    TestMembers.await("the refused entries' warning on their owner", 60,
        () -> !warnings.isEmpty(), () -> "no warning; rejected entries " + rejected(instances));
    int merged = 0;
    for (Integer key : largeKeys) {
      merged += first.containsKey(key) ? 1 : 0;
    }
    assertEquals("large keys merged", 1, merged);
    awaitReplicasHold(instances, "first", SMALL + 1);
    awaitReplicasHold(instances, "second", SMALL);
    assertEquals("the refused entries, refused once", 2, rejected(instances));
    assertEquals(warnings.toString(), 1, warnings.size());
    String warning = warnings.get(0);
    // the member's prefix ([address] [cluster] [version]) comes first
    assertTrue(warning, warning.contains("] Map 'first': 2 of the 3 entries of a split-brain"
        + " merge batch into partition " + largePartition + " ("));
    assertTrue(warning, warning.contains("The batch's remaining 1 entries are merged; the merge"
        + " goes on with its other batches"));
    assertTrue(warning, warning.contains("(hazelcast.map.eviction.inflight.heap.percent=1)"));
  }

  private static long rejected(HazelcastInstance[] instances) {
    long rejected = 0;
    for (HazelcastInstance member : instances) {
      rejected += TestMembers.metrics(member).getRejectedEntries();
    }
    return rejected;
  }

  /** Owned and backup entries of {@code map} over all members: owner and backups agree. */
  private static void awaitReplicasHold(HazelcastInstance[] instances, String map, int entries)
      throws InterruptedException {
    TestMembers.await(map + ": " + entries + " owned and " + entries + " backup entries", 60,
        () -> count(instances, map, true) == entries && count(instances, map, false) == entries,
        () -> count(instances, map, true) + " owned, " + count(instances, map, false) + " backups");
  }

  private static long count(HazelcastInstance[] instances, String map, boolean owned) {
    long count = 0;
    for (HazelcastInstance member : instances) {
      count += owned ? member.getMap(map).getLocalMapStats().getOwnedEntryCount()
          : member.getMap(map).getLocalMapStats().getBackupEntryCount();
    }
    return count;
  }
}
