package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertTrue;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.HazelcastLine;
import dev.forkset.it.harness.Jdks;
import dev.forkset.it.harness.MemberProcess;
import java.nio.file.Path;
import java.util.Set;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.junit.Test;

/**
 * Eviction frees what a put adds, not a fixed number of entries: one large value after many
 * small ones, stock and custom in the same test.
 */
public class SizeProportionalEvictionIT {

  /**
   * Fill with 10 KB values to the limit, then one value of 40% of the limit. Custom is back
   * under the limit after that single put, and 1000 small puts then evict about one small entry
   * each, no more. Stock evicts one entry per put whatever its size, so the big put leaves it far
   * over the limit.
   */
  @Test
  public void oneLargeValueAfterManySmallOnes_evictsItsSizeNotOneEntry() throws Exception {
    largeAfterSmall("large-after-small", HazelcastLine.DEFAULT, null);
  }

  /** The same on the oldest line (5.3.8) on JDK 11, with the same module jar. */
  @Test
  public void oneLargeValueAfterManySmallOnes_oldestLineOnJdk11() throws Exception {
    largeAfterSmall("large-after-small-oldest-jdk11", HazelcastLine.OLDEST, Jdks.jdk11());
  }

  private void largeAfterSmall(String name, HazelcastLine line, Path javaHome) throws Exception {
    int limitMb = 64;
    long limit = (long) limitMb << 20;
    byte[] small = new byte[10_000];
    byte[] big = new byte[(int) (limit * 4 / 10)];
    String config = EvictionMaps.usedHeapMap("large-after-small", limitMb, 0, "  hazelcast.jmx: true\n");

    long stockOver;
    try (HazelcastCluster stock = cluster(name + "-stock", Flavor.STOCK, line, javaHome,
        config)) {
      stock.member(0).assertRuns(line, javaHome);
      IMap<Integer, byte[]> map = stock.client().getMap("large-after-small");
      for (int i = 0; i < 8000; i++) {
        map.put(i, small);
      }
      map.put(-1, big);
      Thread.sleep(500);
      long cost = stockCost(stock.member(0), "large-after-small");
      stockOver = cost - limit;
      System.out.println("[" + name + "] stock: after the " + EvictionMaps.mb(big.length) + " MB put the map"
          + " reports " + EvictionMaps.mb(cost) + " MB against a " + limitMb + " MB limit ("
          + map.size() + " entries)");
      stock.assertAllAlive();
    }

    try (HazelcastCluster custom = cluster(name + "-custom", Flavor.CUSTOM, line, javaHome,
        config)) {
      MemberProcess m = custom.member(0);
      m.assertRuns(line, javaHome);
      EvictionProbe probe = new EvictionProbe(m);
      IMap<Integer, byte[]> map = custom.client().getMap("large-after-small");
      for (int i = 0; i < 8000; i++) {
        map.put(i, small);
      }
      long filled = probe.mapCost("large-after-small");
      long before = probe.evictions();
      map.put(-1, big);
      // The put's response goes out before its eviction step: wait for that step, nothing else runs.
      long cost = awaitAtMost(probe, "large-after-small", limit, 3000);
      long evictedForBig = probe.evictions() - before;
      System.out.println("[" + name + "] custom: filled to " + EvictionMaps.mb(filled) + " MB; after the "
          + EvictionMaps.mb(big.length) + " MB put: " + EvictionMaps.mb(cost) + " MB against "
          + limitMb + " MB, " + evictedForBig + " evictions for it");
      assertTrue("custom is back under the limit after the single large put: " + cost, cost <= limit);
      assertTrue(map.containsKey(-1));

      long beforeSmall = probe.evictions();
      for (int i = 10_000; i < 11_000; i++) {
        map.put(i, small);
      }
      long costAfter = awaitAtMost(probe, "large-after-small", limit, 3000);
      long evictedForSmall = probe.evictions() - beforeSmall;
      System.out.println("[" + name + "] custom: 1000 small puts evicted " + evictedForSmall + " entries; map at "
          + costAfter + " bytes of " + limit);
      assertTrue("1000 small puts evict about one entry each, not more: " + evictedForSmall,
          evictedForSmall <= 1050);
      assertTrue("and do not empty the map below the limit by more than a few entries: " + costAfter,
          costAfter >= limit - 64 * 1024);
      custom.assertAllAlive();
    }
    assertTrue("stock stays over its limit after the big put (" + stockOver + ")", stockOver > 0);
  }

  private static HazelcastCluster cluster(String name, Flavor flavor, HazelcastLine line,
      Path javaHome, String config) throws Exception {
    return HazelcastCluster.builder(name).members(1).flavor(flavor).line(line).javaHome(javaHome)
        .heap("256m").jvmArgs("-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m").config(config).start();
  }

  private static long awaitAtMost(EvictionProbe probe, String map, long limit, long millis) throws Exception {
    long until = System.currentTimeMillis() + millis;
    long cost = probe.mapCost(map);
    while (cost > limit && System.currentTimeMillis() < until) {
      Thread.sleep(20);
      cost = probe.mapCost(map);
    }
    return cost;
  }

  /** Owned + backup entry cost of a stock member's map, from Hazelcast's own IMap MBean. */
  private static long stockCost(MemberProcess member, String map) throws Exception {
    MBeanServerConnection c = member.jmx();
    Set<ObjectName> names = c.queryNames(new ObjectName("com.hazelcast:type=IMap,name=" + map + ",*"), null);
    if (names.isEmpty()) {
      throw new AssertionError("no IMap MBean for " + map + " on " + member.name());
    }
    ObjectName n = names.iterator().next();
    return (Long) c.getAttribute(n, "localOwnedEntryMemoryCost")
        + (Long) c.getAttribute(n, "localBackupEntryMemoryCost");
  }
}
