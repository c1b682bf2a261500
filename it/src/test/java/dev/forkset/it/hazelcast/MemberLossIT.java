package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.MemberProcess;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.Test;

/**
 * Losing a member of three (backup-count 1), by kill -9 or by graceful shutdown, with the custom
 * jar and module, next to the same run on stock.
 */
public class MemberLossIT {
  private static final long MB = 1 << 20;

  /**
   * Mixed sizes from 1 KB to 16 MB (log-uniform) for a bounded time, then kill -9 one
   * member. The data is kept at most at the survivors' limit (two members hold all of it after
   * the kill), so no eviction may remove anything: every key present before the kill must be
   * present after it, and no member may run out of memory.
   */
  @Test
  public void killOneMemberBelowTheLimit_losesNoKeyAndNoMemberRunsOutOfMemory()
      throws Exception {
    String stock = killRun(Flavor.STOCK, false);
    String custom = killRun(Flavor.CUSTOM, true);
    System.out.println("[kill-below-limit] stock:  " + stock);
    System.out.println("[kill-below-limit] custom: " + custom);
  }

  private String killRun(Flavor flavor, boolean strict) throws Exception {
    int limitMb = 80;
    long modelledTarget = 64 * MB;
    String config = EvictionMaps.usedHeapMap("mixed", limitMb, 1, "");
    try (HazelcastCluster cluster = HazelcastCluster.builder("kill-below-limit-" + flavor.name().toLowerCase())
        .members(3).flavor(flavor).heap("256m").jvmArgs("-XX:+UseG1GC").config(config).start()) {
      IMap<Integer, byte[]> map = cluster.client().getMap("mixed");
      Random random = new Random(42);
      long modelled = 0;
      int puts = 0;
      long deadline = System.currentTimeMillis() + 20_000;
      while (modelled < modelledTarget && System.currentTimeMillis() < deadline) {
        int size = (int) Math.min(16 * MB, Math.round(Math.pow(2, 10 + random.nextDouble() * 14)));
        map.put(puts++, new byte[size]);
        // G1 with 1 MB regions (256 MB heap): humongous above 512 KB, whole regions.
        modelled += size > MB / 2 ? ((size + 16 + MB - 1) / MB) * MB : size + 200;
      }
      cluster.assertAllAlive();
      Set<Integer> before = new HashSet<>(map.keySet());
      cluster.member(2).kill();
      Thread.sleep(3000);
      Map<Integer, byte[]> after = map.getAll(before);
      Set<Integer> lost = new HashSet<>(before);
      lost.removeAll(after.keySet());
      boolean oome = false;
      for (int i = 0; i < 2; i++) {
        MemberProcess m = cluster.member(i);
        oome |= m.sawOutOfMemoryError() || !m.isAlive();
      }
      String result = puts + " puts (" + (modelled / MB) + " MB modelled), " + before.size()
          + " keys before the kill, " + lost.size() + " lost, survivors "
          + (oome ? "DIED/OOME" : "alive");
      if (strict) {
        cluster.member(0).assertAlive();
        cluster.member(1).assertAlive();
        assertFalse(cluster.member(0).sawOutOfMemoryError() || cluster.member(1).sawOutOfMemoryError());
        assertEquals("keys lost by the kill: " + lost, 0, lost.size());
      }
      return result;
    }
  }

  /**
   * The map is written to three times its limit, so every member evicts,
   * then one member is killed. A key the map held just before the kill must still be there
   * afterwards unless an eviction event for it arrived after the kill (the survivors take over
   * the dead member's partitions and may evict). Stock lets each replica evict its own sample,
   * so a promoted backup lacks keys its owner still served; the module with
   * hazelcast.map.eviction.backups.follow.owner=true sends the owner's evicted keys to the
   * backups, so none may go missing.
   */
  @Test
  public void killOneMemberWhileEvicting_losesOnlyKeysReportedEvicted() throws Exception {
    String stock = killUnderEvictionRun(Flavor.STOCK, false);
    String custom = killUnderEvictionRun(Flavor.CUSTOM, true);
    System.out.println("[kill-while-evicting] stock:  " + stock);
    System.out.println("[kill-while-evicting] custom: " + custom);
  }

  private String killUnderEvictionRun(Flavor flavor, boolean strict) throws Exception {
    int limitMb = 16;
    String config = EvictionMaps.usedHeapMap("evicting", limitMb, 1,
        "  hazelcast.map.eviction.backups.follow.owner: true\n");
    try (HazelcastCluster cluster = HazelcastCluster.builder("kill-while-evicting-"
        + flavor.name().toLowerCase()).members(3).flavor(flavor).heap("256m")
        .jvmArgs("-XX:+UseG1GC").config(config).start()) {
      IMap<Integer, byte[]> map = cluster.client().getMap("evicting");
      Set<Integer> evicted = java.util.concurrent.ConcurrentHashMap.newKeySet();
      map.addEntryListener((com.hazelcast.map.listener.EntryEvictedListener<Integer, byte[]>)
          e -> evicted.add(e.getKey()), false);
      Random random = new Random(11);
      long written = 0;
      int puts = 0;
      while (written < 3L * 3 * limitMb * MB) {
        int size = 1024 + random.nextInt(64 * 1024);
        map.put(puts++, new byte[size]);
        written += size;
      }
      awaitStable(evicted); // eviction events (and the backup batches sent with them) settle
      cluster.assertAllAlive();
      long evictedBefore = evicted.size();
      Set<Integer> before = new HashSet<>(map.keySet());
      evicted.clear();
      cluster.member(2).kill();
      Thread.sleep(5000);
      Set<Integer> after = map.getAll(before).keySet();
      awaitStable(evicted); // the survivors' eviction events for what getAll no longer found
      Set<Integer> lost = new HashSet<>(before);
      lost.removeAll(after);
      lost.removeAll(evicted);
      String result = puts + " puts (" + (written / MB) + " MB), " + evictedBefore
          + " evicted before the kill, " + before.size() + " keys before the kill, "
          + evicted.size() + " evicted after it, " + lost.size() + " lost";
      if (strict) {
        cluster.member(0).assertAlive();
        cluster.member(1).assertAlive();
        assertTrue("the map evicted before the kill: " + result, evictedBefore > 0);
        assertEquals("keys lost by the kill (not evicted): " + result, 0, lost.size());
      }
      return result;
    }
  }

  /** Waits until no eviction event has arrived for a second (at most 20 s). */
  private static void awaitStable(Set<Integer> evicted) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 20_000;
    int last = -1;
    while (System.currentTimeMillis() < deadline && evicted.size() != last) {
      last = evicted.size();
      Thread.sleep(1000);
    }
  }

  /**
   * Three members filled to the limit, graceful shutdown of one: its partitions migrate to the
   * two others, which must evict while receiving and stay alive.
   */
  @Test
  public void gracefulShutdownOfAFullMember_completesWithoutOutOfMemory() throws Exception {
    String stock = shutdownRun(Flavor.STOCK, false, 100, 10_000, 1_010_000, "-XX:+UseG1GC");
    String custom = shutdownRun(Flavor.CUSTOM, true, 100, 10_000, 1_010_000, "-XX:+UseG1GC");
    System.out.println("[graceful-shutdown-full] stock:  " + stock);
    System.out.println("[graceful-shutdown-full] custom: " + custom);
  }

  /**
   * The same on the seed's sizes (-Xmx256m, G1 4 MB regions, USED_HEAP_SIZE 150 MB, 5 MB values,
   * each a humongous object of 8 MB): the survivors receive the leaving member's replicas whole
   * and evict as each migration commits (patch 0003), without running out of memory. Stock is
   * not run: one stock member already dies of OutOfMemoryError at these sizes while it is filled
   * (LargeValuesOutOfMemoryIT).
   */
  @Test
  public void gracefulShutdownAtTheSeedsSizes_completesWithoutOutOfMemory() throws Exception {
    String custom = shutdownRun(Flavor.CUSTOM, true, 150, 5 << 20, 5 << 20, "-XX:+UseG1GC",
        "-XX:G1HeapRegionSize=4m");
    System.out.println("[graceful-shutdown-seed-sizes] custom: " + custom);
  }

  private static String survivorLogs(HazelcastCluster cluster, MemberProcess leaving) {
    StringBuilder logs = new StringBuilder();
    for (MemberProcess m : cluster.members()) {
      if (m != leaving) {
        logs.append(m.logText());
      }
    }
    return logs.toString();
  }

  /**
   * Three members at {@code limitMb} each with one backup (together 1.5 x {@code limitMb} of
   * primaries), written with 2 x {@code limitMb} in values of {@code minValue} to
   * {@code maxValue} bytes, then one leaves gracefully.
   */
  private String shutdownRun(Flavor flavor, boolean strict, int limitMb, int minValue,
      int maxValue, String... jvmArgs) throws Exception {
    String config = EvictionMaps.usedHeapMap("full", limitMb, 1, "");
    try (HazelcastCluster cluster = HazelcastCluster.builder("graceful-shutdown-full-" + flavor.name().toLowerCase())
        .members(3).flavor(flavor).heap("256m").jvmArgs(jvmArgs).config(config).start()) {
      IMap<Integer, byte[]> map = cluster.client().getMap("full");
      Random random = new Random(7);
      long target = 2L * limitMb * MB;
      long written = 0;
      int puts = 0;
      long deadline = System.currentTimeMillis() + 30_000;
      while (written < target && System.currentTimeMillis() < deadline) {
        int size = minValue + (maxValue > minValue ? random.nextInt(maxValue - minValue) : 0);
        map.put(puts++, new byte[size]);
        written += size;
      }
      cluster.assertAllAlive();
      MemberProcess leaving = cluster.nonMaster();
      int exit = leaving.shutdownGracefully(java.time.Duration.ofSeconds(90));
      // The leaving member's own JUL output stops when the JVM's LogManager resets in shutdown;
      // the master logs that the shutdown request was handled once the member's partitions
      // have migrated away, and the member exits through its shutdown hooks.
      boolean completed = exit == MemberProcess.EXIT_AFTER_SIGTERM
          && survivorLogs(cluster, leaving).matches(
              "(?s).*Shutdown request of Member [^\\n]* is handled.*");
      String shutdown = completed ? "graceful shutdown completed"
          : "graceful shutdown did not complete (exit " + exit + ")";
      Thread.sleep(2000);
      boolean survivorsOk = true;
      for (MemberProcess m : cluster.members()) {
        survivorsOk &= (m == leaving || m.isAlive()) && !m.sawOutOfMemoryError();
      }
      String result = puts + " puts (" + (written / MB) + " MB), " + shutdown + ", "
          + (survivorsOk ? "no OutOfMemoryError, survivors alive" : "OutOfMemoryError or a dead member")
          + ", " + (survivorsOk ? map.size() + " entries after" : "");
      if (strict) {
        assertTrue("only " + (written / MB) + " of " + (target / MB) + " MB written in 30 s",
            written >= target);
        for (MemberProcess m : cluster.members()) {
          assertFalse(m.name() + " ran out of memory", m.sawOutOfMemoryError());
          if (m != leaving) {
            m.assertAlive();
          }
        }
        assertTrue(shutdown + "\n" + leaving.logTail(30), completed);
      }
      return result;
    }
  }
}
