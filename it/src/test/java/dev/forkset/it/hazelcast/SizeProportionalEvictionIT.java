package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertTrue;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.HazelcastLine;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import dev.forkset.it.harness.MemberProcess;
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

  private void largeAfterSmall(String name, HazelcastLine line, Jdk jdk) throws Exception {
    int limitMb = 64;
    long limit = (long) limitMb << 20;
    byte[] small = new byte[10_000];
    byte[] big = new byte[(int) (limit * 4 / 10)];
    // The map's cost is read once the passes of the last write have run, with nothing written
    // after it: passes run to their end (stock members ignore the setting), and the IMap MBean
    // computes the stock member's statistics when read.
    String config = EvictionMaps.usedHeapMap("large-after-small", limitMb, 0,
        "  hazelcast.jmx: true\n  hazelcast.jmx.update.interval.seconds: 0\n"
            + EvictionWaits.UNCAPPED_PASSES);

    long stockOver;
    try (HazelcastCluster stock = cluster(name + "-stock", Flavor.STOCK, line, jdk,
        config)) {
      stock.member(0).assertRuns(line, jdk);
      IMap<Integer, byte[]> map = stock.client().getMap("large-after-small");
      for (int i = 0; i < 8000; i++) {
        map.put(i, small);
      }
      map.put(-1, big);
      // The put's response goes out before its eviction step: the drain waits for that step.
      EvictionWaits.drain(stock.client(), map);
      long cost = stockCost(stock.member(0), "large-after-small");
      stockOver = cost - limit;
      System.out.println("[" + name + "] stock: after the " + EvictionMaps.mb(big.length)
          + " MB put the map reports " + EvictionMaps.mb(cost) + " MB against a " + limitMb
          + " MB limit (" + map.size() + " entries)");
      stock.assertAllAlive();
    }

    try (HazelcastCluster custom = cluster(name + "-custom", Flavor.CUSTOM, line, jdk,
        config)) {
      MemberProcess m = custom.member(0);
      m.assertRuns(line, jdk);
      EvictionProbe probe = new EvictionProbe(m);
      IMap<Integer, byte[]> map = custom.client().getMap("large-after-small");
      for (int i = 0; i < 8000; i++) {
        map.put(i, small);
      }
      // A put's response goes out before its eviction pass, which may hand part of the
      // overshoot to the other partition thread: each phase is read once those have run.
      EvictionWaits.drain(custom.client(), map);
      long filled = probe.mapCost("large-after-small");
      long before = probe.evictions();
      map.put(-1, big);
      EvictionWaits.drain(custom.client(), map);
      long cost = EvictionWaits.until("custom is back under the limit of " + limit
          + " B after the single large put", () -> probe.mapCost("large-after-small"),
          c -> c <= limit);
      long evictedForBig = probe.evictions() - before;
      System.out.println("[" + name + "] custom: filled to " + EvictionMaps.mb(filled)
          + " MB; after the "
          + EvictionMaps.mb(big.length) + " MB put: " + EvictionMaps.mb(cost) + " MB against "
          + limitMb + " MB, " + evictedForBig + " evictions for it");
      assertTrue("the large value is stored", map.containsKey(-1));

      long beforeSmall = probe.evictions();
      for (int i = 10_000; i < 11_000; i++) {
        map.put(i, small);
      }
      EvictionWaits.drain(custom.client(), map);
      long costAfter = EvictionWaits.until("custom is under the limit of " + limit
          + " B after the small puts", () -> probe.mapCost("large-after-small"),
          c -> c <= limit);
      long evictedForSmall = probe.evictions() - beforeSmall;
      System.out.println("[" + name + "] custom: 1000 small puts evicted " + evictedForSmall
          + " entries; map at "
          + costAfter + " bytes of " + limit);
      assertTrue("1000 small puts evict about one entry each, not more: " + evictedForSmall,
          evictedForSmall <= 1050);
      assertTrue("and do not empty the map below the limit by more than a few entries: "
          + costAfter,
          costAfter >= limit - 64 * 1024);
      custom.assertAllAlive();
    }
    assertTrue("stock stays over its limit after the big put (" + stockOver + ")", stockOver > 0);
  }

  private static HazelcastCluster cluster(String name, Flavor flavor, HazelcastLine line,
      Jdk jdk, String config) throws Exception {
    return HazelcastCluster.builder(name).members(1).flavor(flavor).line(line).jdk(jdk)
        .heap("256m").jvmArgs("-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m").config(config).start();
  }

  /** Owned + backup entry cost of a stock member's map, from Hazelcast's own IMap MBean. */
  private static long stockCost(MemberProcess member, String map) throws Exception {
    MBeanServerConnection c = member.jmx();
    Set<ObjectName> names =
        c.queryNames(new ObjectName("com.hazelcast:type=IMap,name=" + map + ",*"), null);
    if (names.isEmpty()) {
      throw new AssertionError("no IMap MBean for " + map + " on " + member.name());
    }
    ObjectName n = names.iterator().next();
    return (Long) c.getAttribute(n, "localOwnedEntryMemoryCost")
        + (Long) c.getAttribute(n, "localBackupEntryMemoryCost");
  }
}
