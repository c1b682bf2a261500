package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertTrue;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import java.util.Set;
import org.junit.Test;

/**
 * LRU accuracy and put throughput while evicting, on three members with backups: stock and
 * custom in the same test, same keys and values.
 */
public class LruAccuracyIT {

  /**
   * Three members, backup-count 1, sequential keys, LRU, sample count 64. Accuracy is the
   * field report's metric: evicted count / (index of the last evicted key + 1).
   */
  @Test
  public void sequentialKeysOnThreeMembers_evictOldestFirstAtFullSpeed() throws Exception {
    Result stock = run(Flavor.STOCK);
    Result custom = run(Flavor.CUSTOM);
    System.out.println("[lru-3-members] stock:  " + stock);
    System.out.println("[lru-3-members] custom: " + custom);
    System.out.printf("[lru-3-members] puts/s under eviction custom/stock: %.2f%n",
        custom.underEviction / stock.underEviction);
    assertTrue("custom LRU accuracy >= 95%: " + custom, custom.accuracy >= 0.95);
    assertTrue("custom puts/s under eviction >= 0.8 x before eviction: " + custom,
        custom.underEviction >= 0.8 * custom.beforeEviction);
  }

  static final class Result {
    double accuracy;
    long evicted;
    long lastEvicted;
    double beforeEviction;
    double underEviction;

    @Override
    public String toString() {
      return String.format("accuracy %.1f%% (%d evicted, last evicted key %d), puts/s before"
          + " eviction %.0f, under eviction %.0f (ratio %.2f)", accuracy * 100, evicted, lastEvicted,
          beforeEviction, underEviction, underEviction / beforeEviction);
    }
  }

  private Result run(Flavor flavor) throws Exception {
    // Hazelcast keeps access times in whole seconds, so entries put within the same second tie
    // under LRU; the run is long enough (about 14 x the map's capacity) for that tie window
    // (puts per second keys) to be small against the evicted count, as in the field report's
    // 3 million keys.
    int puts = 150_000;
    int earlyEnd = 6_000;
    int lateStart = 100_000;
    byte[] value = new byte[1000];
    String config = EvictionMaps.usedHeapMap("lru", 8, 1, "");
    try (HazelcastCluster cluster = HazelcastCluster.builder("lru-3-members-" + flavor.name().toLowerCase())
        .members(3).flavor(flavor).heap("256m").jvmArgs("-XX:+UseG1GC").config(config)
        .systemProperty("hazelcast.map.eviction.sample.count", "64")
        .systemProperty("hazelcast.map.eviction.pool.sample.count", "64").start()) {
      // Warm up the JIT of client and members on another map, so "before eviction" is steady state.
      IMap<Integer, byte[]> warmup = cluster.client().getMap("warmup");
      for (int i = 0; i < 20_000; i++) {
        warmup.put(i, value);
      }
      warmup.destroy();
      IMap<Integer, byte[]> map = cluster.client().getMap("lru");
      long t0 = System.nanoTime();
      long tEarly = 0;
      long tLate = 0;
      for (int i = 0; i < puts; i++) {
        if (i == earlyEnd) {
          tEarly = System.nanoTime();
        }
        if (i == lateStart) {
          tLate = System.nanoTime();
        }
        map.put(i, value);
      }
      long tEnd = System.nanoTime();
      cluster.assertAllAlive();
      Set<Integer> present = map.keySet();
      Result r = new Result();
      r.lastEvicted = -1;
      for (int i = 0; i < puts; i++) {
        if (!present.contains(i)) {
          r.evicted++;
          r.lastEvicted = i;
        }
      }
      r.accuracy = r.evicted / (double) (r.lastEvicted + 1);
      r.beforeEviction = earlyEnd / ((tEarly - t0) / 1e9);
      r.underEviction = (puts - lateStart) / ((tEnd - tLate) / 1e9);
      assertTrue(flavor + ": eviction must have started", r.evicted > 0);
      return r;
    }
  }

}
