package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.MemberProcess;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import org.junit.Test;

/**
 * A value the member heap cannot take in flight (issue 21, point 5). A stored value is chunked,
 * but it still arrives as one array (the client frame, or the packet of a forwarded operation),
 * goes to each backup as one packet array, and is copied out of that packet on the backup. Two
 * members, -Xmx256m, G1 with 4 MB regions, a BINARY map under USED_HEAP_SIZE 150 MB with
 * backup-count 1: a 100 MB put passes the map's limit, and before the in-flight limit it ended
 * in OutOfMemoryError on a member. With it the owner refuses every write path admission asks,
 * before anything is stored, naming the map, the value's size, the rule and its setting; both
 * members keep serving and agree on the map.
 */
public class InFlightValueLimitIT {
  static final String MAP = "in-flight";
  /** A BINARY map without an eviction config, backup-count 1. */
  static final String PLAIN = "in-flight-plain";
  static final int LIMIT_MB = 150;
  static final String SETTING = "hazelcast.map.eviction.inflight.heap.percent";
  static final String[] G1_4M = {"-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m"};
  static final String PROPERTIES = "  hazelcast.jmx: true\n"
      + "  hazelcast.jmx.update.interval.seconds: 0\n";

  static HazelcastCluster.Builder twoMembers(String name, Flavor flavor, String properties) {
    return HazelcastCluster.builder(name).members(2).flavor(flavor).heap("256m")
        .jvmArgs(G1_4M).config(EvictionMaps.usedHeapMap(MAP, LIMIT_MB, 1,
            EvictionMaps.mapWithoutEviction(PLAIN, 1), properties))
        // a member that dies under a put fails the put within the test's time, not after 120 s
        .clientProperty("hazelcast.client.invocation.timeout.seconds", "60");
  }

  @Test
  public void hundredMegabytePut_isRefusedByTheOwner_beforeAnythingIsStored() throws Exception {
    assertEveryPathRefused("in-flight-refused", MAP);
  }

  /**
   * The same on a map without an eviction config. Through revision 7 the custom jar asked the
   * module only about maps with an evictor, so such a map took the 100 MB put as stock does; since
   * revision 8 (patch 0010) it is refused on every path alike.
   */
  @Test
  public void hundredMegabytePut_onAMapWithoutEviction_isRefusedByTheOwner() throws Exception {
    assertEveryPathRefused("in-flight-plain", PLAIN);
  }

  private static void assertEveryPathRefused(String clusterName, String mapName)
      throws Exception {
    try (HazelcastCluster cluster =
        twoMembers(clusterName, Flavor.CUSTOM, PROPERTIES).start()) {
      IMap<Integer, byte[]> map = cluster.client().getMap(mapName);
      for (int i = 0; i < 100; i++) {
        map.put(i, new byte[1000 + i]);
      }

      // The put of one 100 MB value: within the map's 150 MB limit, beyond what the heap takes
      // in flight.
      int hundred = 100 << 20;
      assertRefused(cluster, mapName, "put", hundred, () -> map.put(1000, new byte[hundred]));
      // Every other single-key path admission asks, with a smaller value that the member can
      // still build (the entry processor creates its value on the owner), still far over the
      // rule on a 256 MB member.
      int forty = 40 << 20;
      assertRefused(cluster, mapName, "set", forty, () -> map.set(1001, new byte[forty]));
      assertRefused(cluster, mapName, "putIfAbsent", forty,
          () -> map.putIfAbsent(1002, new byte[forty]));
      assertRefused(cluster, mapName, "replace", forty, () -> map.replace(5, new byte[forty]));
      assertRefused(cluster, mapName, "replace(k, old, new)", forty,
          () -> map.replace(6, new byte[1006], new byte[forty]));
      assertRefused(cluster, mapName, "entry processor", forty,
          () -> map.executeOnKey(7, new SetValue(forty)));
      // putAll: the large entry refuses its partition's batch (other partitions' batches go in,
      // as admission refuses partition by partition).
      Map<Integer, byte[]> batch = new HashMap<>();
      batch.put(1003, new byte[forty]);
      assertRefused(cluster, mapName, "putAll", forty, () -> map.putAll(batch));

      cluster.assertAllAlive();
      for (MemberProcess m : cluster.members()) {
        assertFalse(m.name() + " saw an OutOfMemoryError", m.sawOutOfMemoryError());
      }
      // Nothing half-stored: the refused keys are absent, the replaced ones keep their values.
      for (int key : Arrays.asList(1000, 1001, 1002, 1003)) {
        assertNull("key " + key, map.get(key));
      }
      assertEquals(1005, map.get(5).length);
      assertEquals(1006, map.get(6).length);
      assertEquals(1007, map.get(7).length);
      assertEquals(100, map.size());

      // The members keep serving, and owner and backup agree: every member's owned entries sum
      // to the map, and so do the backups.
      for (int i = 100; i < 200; i++) {
        map.set(i, new byte[2000]);
      }
      assertEquals(200, map.size());
      assertEquals(2000, map.get(150).length);
      awaitOwnedAndBackups(cluster, mapName, 200, 200);
      cluster.assertAllAlive();
    }
  }

  /**
   * A putAll sends one partition's entries in one client frame, and the owner stores them and
   * backs them up in one operation: three 20 MB values of one partition, each within the rule
   * (5 x 20 MB = 100 MB of the 128 MB a 256 MB member allows), take 300 MB in flight together.
   * The owner refuses the partition's batch whole, naming the map, the values' summed size and
   * the setting; both members live, none of the keys is stored.
   */
  @Test
  public void putAllOfValuesThatFitAloneButNotTogether_isRefusedByTheOwner() throws Exception {
    try (HazelcastCluster cluster =
        twoMembers("in-flight-batch", Flavor.CUSTOM, PROPERTIES).start()) {
      HazelcastInstance client = cluster.client();
      IMap<Integer, byte[]> map = client.getMap(MAP);
      map.set(-1, new byte[100]);
      int twenty = 20 << 20;
      int partition = client.getPartitionService().getPartition(0).getPartitionId();
      Map<Integer, byte[]> batch = new HashMap<>();
      for (int k = 0; batch.size() < 3; k++) {
        if (client.getPartitionService().getPartition(k).getPartitionId() == partition) {
          batch.put(k, new byte[twenty]);
        }
      }
      CompletableFuture<Void> done = CompletableFuture.runAsync(() -> map.putAll(batch));
      try {
        done.get(120, TimeUnit.SECONDS);
        fail("a putAll of 3 x " + twenty + " bytes into one partition was not refused");
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        for (MemberProcess m : cluster.members()) {
          assertFalse(m.name() + " saw an OutOfMemoryError (" + cause + ")",
              m.sawOutOfMemoryError());
          m.assertAlive();
        }
        String message = String.valueOf(cause.getMessage());
        System.out.println("[in-flight-batch] putAll: " + message);
        assertTrue(String.valueOf(cause), cause instanceof IllegalArgumentException);
        assertTrue(message, message.startsWith("Map '" + MAP + "': the 3 values of this write"));
        java.util.regex.Matcher summed =
            java.util.regex.Pattern.compile("(\\d+) serialized bytes together").matcher(message);
        assertTrue(message, summed.find() && Long.parseLong(summed.group(1)) >= 3L * twenty
            && Long.parseLong(summed.group(1)) < 3L * twenty + 192);
        assertTrue(message, message.contains(SETTING) && message.contains("Nothing of the write"));
      }
      for (Integer key : batch.keySet()) {
        assertNull("key " + key, map.get(key));
      }
      assertEquals(1, map.size());
      // each of them alone is within the rule
      Integer first = batch.keySet().iterator().next();
      map.set(first, batch.get(first));
      assertEquals(twenty, map.get(first).length);
      cluster.assertAllAlive();
      for (MemberProcess m : cluster.members()) {
        assertFalse(m.name() + " saw an OutOfMemoryError", m.sawOutOfMemoryError());
      }
    }
  }

  /**
   * A member's own putAll (patch 0008): twelve 10 MB values, one in each of twelve partitions of
   * one member, each partition's batch well within the rule (5 x 10 MB of the 128 MB a 256 MB
   * member allows). Stock sends that member the twelve batches in one operation, read as one
   * 120 MB packet and copied out of it before any owner can judge a batch. With the module the
   * caller sends them in runs within the rule, one after the other: the putAll completes, both
   * members live, every value is stored and backed up. The caller is a lite member in the test's
   * JVM with the members' configuration; its rule stands for theirs (members are assumed to
   * share heap and setting), so its setting is scaled from this JVM's max heap to the members'
   * 128 MB.
   */
  @Test
  public void memberPutAllOfBatchesThatFitAloneButNotInOnePacket_goesInRunsAndStoresEverything()
      throws Exception {
    try (HazelcastCluster cluster =
        twoMembers("in-flight-member-putall", Flavor.CUSTOM, PROPERTIES).start()) {
      long allowance = (256L << 20) / 2;
      int percent = (int) Math.max(1, Math.min(100,
          allowance * 100 / Runtime.getRuntime().maxMemory()));
      HazelcastInstance caller = cluster.liteMemberWithMembersConfig(
          java.util.Collections.singletonMap(SETTING, String.valueOf(percent)));
      IMap<Integer, byte[]> map = caller.getMap(MAP);
      map.set(-1, new byte[100]);
      MemberProcess target = cluster.member(1);
      int ten = 10 << 20;
      byte[] value = new byte[ten];
      Map<Integer, byte[]> batch = new LinkedHashMap<>();
      java.util.Set<Integer> partitions = new java.util.HashSet<>();
      for (int k = 0; batch.size() < 12; k++) {
        com.hazelcast.partition.Partition p = caller.getPartitionService().getPartition(k);
        com.hazelcast.cluster.Member owner = EvictionWaits.until("the owner of partition "
            + p.getPartitionId(), p::getOwner, o -> o != null);
        if (((InetSocketAddress) owner.getSocketAddress()).getPort() == target.port()
            && partitions.add(p.getPartitionId())) {
          batch.put(k, value);
        }
      }
      CompletableFuture<Void> done = CompletableFuture.runAsync(() -> map.putAll(batch));
      try {
        done.get(180, TimeUnit.SECONDS);
      } catch (ExecutionException | TimeoutException e) {
        throw new AssertionError("the putAll of 12 x 10 MB failed; members alive: "
            + cluster.members().stream().map(m -> m.name() + " " + m.isAlive() + (
                m.sawOutOfMemoryError() ? " (OutOfMemoryError)" : ""))
            .collect(java.util.stream.Collectors.toList()), e);
      }
      javax.management.MBeanServer server =
          java.lang.management.ManagementFactory.getPlatformMBeanServer();
      ObjectName bean = server.queryNames(
          new ObjectName("dev.forkset.hazelcast:type=GcAwareEviction,*"), null).iterator().next();
      long runs = (Long) server.getAttribute(bean, "PutAllRuns");
      System.out.println("[in-flight-member-putall] 12 x 10 MB into 12 partitions of one member"
          + " sent in " + runs + " operations (caller's setting " + percent + "%)");
      cluster.assertAllAlive();
      for (MemberProcess m : cluster.members()) {
        assertFalse(m.name() + " saw an OutOfMemoryError", m.sawOutOfMemoryError());
      }
      assertTrue("operations: " + runs, runs >= 6);
      for (Integer key : batch.keySet()) {
        assertEquals("key " + key, ten, map.get(key).length);
      }
      awaitOwnedAndBackups(cluster, MAP, 13, 13);
    }
  }

  /**
   * A bad value of the setting stops the member at start, naming it.
   */
  @Test
  public void badSetting_stopsTheMemberAtStart_namingIt() throws Exception {
    MemberProcess m = HazelcastCluster.builder("in-flight-bad-setting").flavor(Flavor.CUSTOM)
        .config(EvictionMaps.usedHeapMap(MAP, LIMIT_MB, 1, "  " + SETTING + ": 0\n"))
        .startExpectingExit(120_000);
    assertTrue(m.logTail(40), m.logText().contains(SETTING + "='0' is not valid"));
  }

  /**
   * What a put of a 5 MB value allocates on its owner and on its backup (bytes allocated by all
   * of the member's threads, from the JVM's per-thread counters), stock vs the module with
   * one-array and chunked stored copies, same run. Asserts the rule's premise: the module's
   * in-flight estimate ({@code Admission.inFlightBytes}: (3 + 2 x backups) x the value's size,
   * with one backup) is not below what either member really allocates per put.
   */
  @Test
  public void allocationPerFiveMegabytePut_staysWithinTheInFlightEstimate() throws Exception {
    int size = 5 << 20;
    Map<String, long[]> rows = new LinkedHashMap<>();
    rows.put("stock", allocationPerPut("in-flight-alloc-stock", Flavor.STOCK, "", size));
    rows.put("module, chunked.values=off", allocationPerPut("in-flight-alloc-off", Flavor.CUSTOM,
        "  hazelcast.map.eviction.chunked.values: off\n", size));
    rows.put("module, chunked.values=auto", allocationPerPut("in-flight-alloc-auto",
        Flavor.CUSTOM, "", size));
    long estimate = 5L * size;
    for (Map.Entry<String, long[]> row : rows.entrySet()) {
      System.out.println(String.format("[in-flight-alloc] %s: owner %.2f MB (%.2f x), backup"
          + " %.2f MB (%.2f x) per put of a %d MB value", row.getKey(), mb(row.getValue()[0]),
          row.getValue()[0] / (double) size, mb(row.getValue()[1]),
          row.getValue()[1] / (double) size, size >> 20));
    }
    for (Map.Entry<String, long[]> row : rows.entrySet()) {
      if (row.getKey().startsWith("module")) {
        assertTrue(row.getKey() + ": the owner allocates " + row.getValue()[0] + " B per put,"
            + " more than the estimate " + estimate, row.getValue()[0] <= estimate);
        assertTrue(row.getKey() + ": the backup allocates " + row.getValue()[1] + " B per put,"
            + " more than the estimate " + estimate, row.getValue()[1] <= estimate);
      }
      // sanity of the measurement: the backup receives at least the value's packet and copies it
      assertTrue(row.getKey() + ": backup " + row.getValue()[1], row.getValue()[1] >= 2L * size);
    }
  }

  /** Waits until the two members together own {@code owned} and back up {@code backups} entries. */
  private static void awaitOwnedAndBackups(HazelcastCluster cluster, String mapName, long owned,
      long backups) throws Exception {
    EvictionWaits.until("owned and backup entries on the two members", () -> {
      long o = 0;
      long b = 0;
      for (MemberProcess m : cluster.members()) {
        MemberMapStats s = MemberMapStats.of(m, mapName);
        o += s.ownedEntries;
        b += s.backupEntries;
      }
      return o + " owned, " + b + " backups";
    }, s -> s.equals(owned + " owned, " + backups + " backups"));
  }

  private static double mb(long bytes) {
    return bytes / (double) (1 << 20);
  }

  /** {owner, backup} bytes allocated per put, averaged over puts of keys one member owns. */
  private static long[] allocationPerPut(String name, Flavor flavor, String properties, int size)
      throws Exception {
    int puts = 20;
    try (HazelcastCluster cluster = twoMembers(name, flavor, properties).start()) {
      HazelcastInstance client = cluster.client();
      IMap<Integer, byte[]> map = client.getMap(MAP);
      MemberProcess owner = cluster.member(0);
      MemberProcess backup = cluster.member(1);
      map.set(-1, new byte[1]);
      List<Integer> keys = new ArrayList<>();
      for (int k = 0; keys.size() < puts + 5; k++) {
        int key = k;
        // the client learns the partition table after its first operations
        com.hazelcast.cluster.Member at = EvictionWaits.until("the owner of key " + key,
            () -> client.getPartitionService().getPartition(key).getOwner(), o -> o != null);
        if (((InetSocketAddress) at.getSocketAddress()).getPort() == owner.port()) {
          keys.add(k);
        }
      }
      byte[] value = new byte[size];
      // warm-up: classes, pooled buffers, connections
      for (int i = 0; i < 5; i++) {
        map.set(keys.get(puts + i), value);
      }
      long ownerBefore = allocated(owner);
      long backupBefore = allocated(backup);
      for (int i = 0; i < puts; i++) {
        map.set(keys.get(i), value);
      }
      // the backups are synchronous: acknowledged before each set returns
      long ownerAfter = allocated(owner);
      long backupAfter = allocated(backup);
      cluster.assertAllAlive();
      return new long[] {(ownerAfter - ownerBefore) / puts, (backupAfter - backupBefore) / puts};
    }
  }

  /** Bytes allocated so far by the member's live threads. */
  private static long allocated(MemberProcess m) throws Exception {
    MBeanServerConnection c = m.jmx();
    ObjectName threading = new ObjectName("java.lang:type=Threading");
    long[] ids = (long[]) c.getAttribute(threading, "AllThreadIds");
    long[] bytes = (long[]) c.invoke(threading, "getThreadAllocatedBytes", new Object[] {ids},
        new String[] {long[].class.getName()});
    long sum = 0;
    for (long b : bytes) {
      sum += Math.max(0, b);
    }
    return sum;
  }

  /**
   * Runs {@code write} (bounded in time: a member that runs out of memory may leave it hanging)
   * and expects the in-flight refusal.
   */
  private static void assertRefused(HazelcastCluster cluster, String mapName, String path,
      int size, Runnable write) throws Exception {
    CompletableFuture<Void> done = CompletableFuture.runAsync(write);
    try {
      done.get(120, TimeUnit.SECONDS);
      fail(path + " of " + size + " bytes was not refused");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      for (MemberProcess m : cluster.members()) {
        assertFalse(path + ": " + m.name() + " saw an OutOfMemoryError (" + cause + ")",
            m.sawOutOfMemoryError());
        m.assertAlive();
      }
      String message = String.valueOf(cause.getMessage());
      System.out.println("[in-flight-refused] " + path + ": " + message);
      assertTrue(path + ": " + cause, cause instanceof IllegalArgumentException);
      assertTrue(path + ": the map is named: " + message, message.contains("'" + mapName + "'"));
      // the serialized value: the array plus its length and the serialization header
      java.util.regex.Matcher named =
          java.util.regex.Pattern.compile("of (\\d+) serialized bytes").matcher(message);
      assertTrue(path + ": the value's size is named: " + message, named.find()
          && Long.parseLong(named.group(1)) >= size && Long.parseLong(named.group(1)) < size + 64);
      assertTrue(path + ": the setting is named: " + message, message.contains(SETTING));
      assertTrue(path + ": nothing stored: " + message, message.contains("Nothing of the write"));
    } catch (TimeoutException e) {
      throw new AssertionError(path + " of " + size + " bytes neither completed nor failed in"
          + " 120 s; members alive: " + cluster.members().stream().map(MemberProcess::isAlive)
          .collect(java.util.stream.Collectors.toList()), e);
    }
  }
}
