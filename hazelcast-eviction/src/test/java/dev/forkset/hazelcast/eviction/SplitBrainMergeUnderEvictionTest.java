package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.spi.merge.PutIfAbsentMergePolicy;
import com.hazelcast.test.SplitBrainTestSupport;

/**
 * What a split-brain merge does to a map under a heap limit. Two members and one member each
 * fill the map past its 4 MB limit with their own keys while split. On heal the single member
 * merges its entries into the larger cluster with MergeOperation batches (PutIfAbsentMergePolicy):
 * each batch is admitted whole on the owner before its first entry (a batch that would grow a map
 * already far over its limit waits and is retried while eviction catches up), the merged entries
 * are stored as new entries, and the owners evict as for any write. Afterwards every member is
 * back under its limit, the merged entries are among the map's entries, and no batch was lost.
 */
public class SplitBrainMergeUnderEvictionTest extends SplitBrainTestSupport {
  private static final long LIMIT = 4L << 20;

  @Override
  protected int[] brains() {
    return new int[] {2, 1};
  }

  @Override
  protected Config config() {
    // every member must be back under its limit without a further write: no pass may stop at
    // the time cap, which leaves the rest of the overshoot to a next write
    Config config = TestMembers.withoutTimeCap(super.config());
    config.setProperty("hazelcast.partition.count", "71");
    config.setProperty(GcAwareEvictionConfig.GC_MODEL.name, "g1");
    config.setProperty(GcAwareEvictionConfig.REGION_SIZE.name, TestMembers.REGION_1M);
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 4, EvictionPolicy.LRU, 1)
        .getMergePolicyConfig().setPolicy(PutIfAbsentMergePolicy.class.getName());
    return config;
  }

  @Override
  protected void onAfterSplitBrainCreated(HazelcastInstance[] firstBrain,
      HazelcastInstance[] secondBrain) {
    IMap<String, byte[]> first = firstBrain[0].getMap("m");
    IMap<String, byte[]> second = secondBrain[0].getMap("m");
    for (int i = 0; i < 6000; i++) {
      first.set("first-" + i, new byte[1000]);
      second.set("second-" + i, new byte[1000]);
    }
  }

  @Override
  protected void onAfterSplitBrainHealed(HazelcastInstance[] instances) throws Exception {
    IMap<String, byte[]> map = instances[0].getMap("m");
    TestMembers.await("merged entries arrive", 60,
        () -> map.keySet().stream().anyMatch(k -> k.startsWith("second-")),
        () -> map.size() + " entries, none from the merged side");
    long merged = 0;
    // The heal has waited for the merge operations to complete, not for the eviction passes
    // that run after their responses, nor for the continuations those passes handed over.
    for (HazelcastInstance member : instances) {
      TestMembers.drainPartitionThreads(member);
      TestMembers.await(member.getName() + " back under its limit of " + LIMIT + " bytes", 60,
          () -> TestMembers.cost(member, "m") <= LIMIT,
          () -> TestMembers.cost(member, "m") + " bytes");
      assertEquals("oversized refusals", 0, TestMembers.metrics(member).getRejectedEntries());
    }
    for (String key : map.keySet()) {
      if (key.startsWith("second-")) {
        merged++;
      }
    }
    assertTrue("entries merged from the smaller side: " + merged, merged > 1000);
  }
}
