package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.hazelcast.cluster.Member;
import com.hazelcast.map.IMap;
import com.hazelcast.partition.PartitionService;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.MemberProcess;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Members with 16 partition threads on a 2-core machine, written by six client threads at once
 * with every kind of client write (put, set, putAll, putIfAbsent, replace, updates that grow an
 * entry, entry processors on one and on several keys), for each max-size policy family: PER_NODE,
 * PER_PARTITION, FREE_HEAP_SIZE / _PERCENTAGE, USED_HEAP_SIZE / _PERCENTAGE. Each case requires
 * that the map really evicted, that no operation failed (the client fails an operation whose
 * backups were not acknowledged instead of completing it silently), that no member logged an
 * exception, that the map ends within its limit, and that every key written is either still in
 * the map or was reported evicted. A last case puts one value larger than limit/16 into a full map:
 * the member may free no more than that entry's own cost plus one entry, however many partition
 * threads share the work.
 *
 * <p>Two members (backup-count 1) are started once and shared by the cases; each case has its own
 * map and destroys it at the end. {@code -Dforkset.it.flavor=stock} runs the same cases on stock
 * members, for comparison.
 */
public class ManyPartitionThreadsIT {
  static final int PARTITION_THREADS = 16;
  static final int WRITERS = 8;
  static final int MIN_VALUE = 256;
  static final int MAX_VALUE = 4096;
  /** The write load runs this long once the map has started to evict. */
  static final long LOAD_MILLIS = 5_000;
  /**
   * The bound for "the writes never fill the map": they fill it within a second or two, but
   * the product promises no write rate, least of all on a loaded machine.
   */
  static final long MAX_LOAD_MILLIS = 300_000;
  static final int PER_NODE_SIZE = 5000;
  static final int PER_PARTITION_SIZE = 20;
  static final int FREE_HEAP_MB = 170;
  static final int FREE_HEAP_PERCENT = 66;
  static final int USED_HEAP_MB = 12;
  static final int USED_HEAP_PERCENT = 5;
  static final int LARGE_PUT_LIMIT_MB = 32;
  static final String HEAP = "256m";

  static final Flavor FLAVOR =
      Flavor.valueOf(System.getProperty("forkset.it.flavor", "custom").toUpperCase());

  private static HazelcastCluster cluster;

  @BeforeClass
  public static void startMembers() throws Exception {
    StringBuilder maps = new StringBuilder("map:\n");
    map(maps, "per-node", 1, "PER_NODE", PER_NODE_SIZE);
    map(maps, "per-partition", 1, "PER_PARTITION", PER_PARTITION_SIZE);
    map(maps, "free-heap-size", 1, "FREE_HEAP_SIZE", FREE_HEAP_MB);
    map(maps, "free-heap-percentage", 1, "FREE_HEAP_PERCENTAGE", FREE_HEAP_PERCENT);
    map(maps, "used-heap-size", 1, "USED_HEAP_SIZE", USED_HEAP_MB);
    map(maps, "used-heap-percentage", 1, "USED_HEAP_PERCENTAGE", USED_HEAP_PERCENT);
    map(maps, "large-put", 0, "USED_HEAP_SIZE", LARGE_PUT_LIMIT_MB);
    // Passes run to their end (EvictionWaits.UNCAPPED_PASSES): the cases read each member's
    // cost once the writes have stopped, with no write left to finish a capped pass.
    maps.append("properties:\n")
        .append("  hazelcast.operation.thread.count: ").append(PARTITION_THREADS).append("\n")
        .append("  hazelcast.jmx: true\n")
        .append("  hazelcast.jmx.update.interval.seconds: 0\n")
        .append(EvictionWaits.UNCAPPED_PASSES);
    cluster = HazelcastCluster.builder("many-partition-threads-" + FLAVOR.name().toLowerCase())
        .members(2).flavor(FLAVOR).heap(HEAP).jvmArgs("-XX:+UseG1GC").config(maps.toString())
        .clientProperty("hazelcast.client.operation.fail.on.indeterminate.state", "true")
        .start();
  }

  @AfterClass
  public static void stopMembers() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static void map(StringBuilder sb, String name, int backups, String policy, int size) {
    sb.append("  ").append(name).append(":\n")
        .append("    in-memory-format: BINARY\n")
        .append("    backup-count: ").append(backups).append("\n")
        .append("    eviction:\n")
        .append("      eviction-policy: LRU\n")
        .append("      max-size-policy: ").append(policy).append("\n")
        .append("      size: ").append(size).append("\n");
  }

  @Test
  public void concurrentWrites_perNode_staysWithinTheLimit() throws Exception {
    concurrentWrites("per-node", (map, label) -> {
      Map<String, Integer> perMember = ownedPerMember(map);
      assertTrue(label + ": at most " + PER_NODE_SIZE + " owned entries per member: " + perMember,
          perMember.values().stream().allMatch(n -> n <= PER_NODE_SIZE));
      return "owned entries per member " + perMember.values();
    });
  }

  @Test
  public void concurrentWrites_perPartition_staysWithinTheLimit() throws Exception {
    concurrentWrites("per-partition", (map, label) -> {
      int largest = largestPartition(map);
      assertTrue(label + ": at most " + PER_PARTITION_SIZE + " entries in any partition: "
          + largest, largest <= PER_PARTITION_SIZE);
      return "largest partition " + largest + " entries";
    });
  }

  @Test
  public void concurrentWrites_freeHeapSize_staysWithinTheLimit() throws Exception {
    concurrentWrites("free-heap-size", (map, label) -> freeHeapAtLeast(label, FREE_HEAP_MB << 20));
  }

  @Test
  public void concurrentWrites_freeHeapPercentage_staysWithinTheLimit() throws Exception {
    concurrentWrites("free-heap-percentage",
        (map, label) -> freeHeapAtLeast(label, -FREE_HEAP_PERCENT));
  }

  @Test
  public void concurrentWrites_usedHeapSize_staysWithinTheLimit() throws Exception {
    concurrentWrites("used-heap-size",
        (map, label) -> usedHeapAtMost(map, label, (long) USED_HEAP_MB << 20));
  }

  @Test
  public void concurrentWrites_usedHeapPercentage_staysWithinTheLimit() throws Exception {
    concurrentWrites("used-heap-percentage", (map, label) ->
        usedHeapAtMost(map, label,
            (long) (maxHeap(cluster.member(0)) * USED_HEAP_PERCENT / 100.0)));
  }

  /** A check of one policy's limit on the map after the writes; returns what it saw. */
  interface LimitCheck {
    String check(IMap<Integer, byte[]> map, String label) throws Exception;
  }

  private void concurrentWrites(String name, LimitCheck limit) throws Exception {
    String label = FLAVOR.name().toLowerCase() + " " + name;
    Map<MemberProcess, Integer> marks = cluster.logMarks();
    IMap<Integer, byte[]> map = cluster.client().getMap(name);
    EvictionEvents evicted = new EvictionEvents(map);
    ConcurrentWriters writers = new ConcurrentWriters(map, WRITERS, MIN_VALUE, MAX_VALUE);
    long t0 = System.nanoTime();
    writers.start();
    while (evicted.count() == 0 && System.nanoTime() - t0 < MAX_LOAD_MILLIS * 1_000_000L) {
      Thread.sleep(100);
    }
    if (evicted.count() > 0) {
      Thread.sleep(LOAD_MILLIS); // the writes go on while the map evicts
    }
    writers.stop();
    long stopped = System.nanoTime();
    System.out.printf("[%s] %d operations (%d entries) in %.1f s by %d client threads, %d"
            + " failed%n", label, writers.operations(), writers.entriesWritten(),
        (stopped - t0) / 1e9, WRITERS, writers.failureCount());
    cluster.assertAllAlive();
    // Every write has returned; once their passes have run the owners hold what they keep.
    EvictionWaits.drain(cluster.client(), map);
    EvictionWaits.awaitKeysAccountedFor(label, map, writers.created(), evicted.keys());
    long events = evicted.count();
    String seen = limit.check(map, label);
    String afterClear = clearedCosts(map, label);
    List<String> exceptions = MemberLogs.unexplained(cluster.exceptionsInLogs(marks),
        MemberLogs.JMX_REGISTRATION_RACE);
    List<String> backupTimeouts = MemberLogs.backupTimeouts(cluster, marks, stopped);
    System.out.printf("[%s] %d evicted, none lost; %s; after clear() %s; %d exception lines and"
            + " backup timeouts %s in member logs%n",
        label, events, seen, afterClear, exceptions.size(), backupTimeouts);
    map.destroy();
    assertTrue(label + ": the map never reached its limit in " + MAX_LOAD_MILLIS + " ms",
        events > 0);
    assertEquals(label + ": failed operations (first 20) " + first(writers.failures(), 20), 0,
        writers.failureCount());
    assertEquals(label + ": exceptions in member logs " + first(exceptions, 20), 0,
        exceptions.size());
    assertEquals(label + ": backup timeouts in member logs", List.of(), backupTimeouts);
  }

  /**
   * Clears the map and returns what its record stores account for on the members once
   * {@code clear()}, which returns before the backups are cleared, has reached every replica:
   * fails unless that is nothing, as it is unless concurrent updates corrupted the per-store or
   * per-map accounting (a store touched by a thread that does not own it, or a running total
   * that missed an update).
   */
  private static String clearedCosts(IMap<Integer, byte[]> map, String label) throws Exception {
    map.clear();
    return EvictionWaits.until(label + ": a cleared map costs nothing on any member", () -> {
      long cost = 0;
      long entries = 0;
      long modelled = 0;
      for (MemberProcess m : cluster.members()) {
        MemberMapStats s = MemberMapStats.of(m, map.getName());
        cost += s.cost();
        entries += s.entries();
        if (FLAVOR == Flavor.CUSTOM) {
          modelled += new EvictionProbe(m).mapCost(map.getName());
        }
      }
      return cost + " B in " + entries + " entries"
          + (FLAVOR == Flavor.CUSTOM ? ", module's map cost " + modelled + " B" : "");
    }, costs -> costs.matches("0 B in 0 entries(, module's map cost 0 B)?"));
  }

  /**
   * One value larger than limit/16 put into a full map of small entries: the member frees at
   * most the new entry's cost plus one small entry, and is back within its limit, however many
   * partition threads share the overshoot. The other member's entries are untouched
   * (backup-count 0).
   */
  @Test
  public void oneLargePut_freesAtMostItsOwnCostPlusOneEntry() throws Exception {
    String name = "large-put";
    String label = FLAVOR.name().toLowerCase() + " " + name;
    long limit = (long) LARGE_PUT_LIMIT_MB << 20;
    int small = 4000;
    Map<MemberProcess, Integer> marks = cluster.logMarks();
    IMap<Integer, byte[]> map = cluster.client().getMap(name);
    EvictionEvents evicted = new EvictionEvents(map);
    // Fill both members to their limit with small values, so both are full and evicting: 100
    // batches write 2.5 times what the two hold; neither can be full before the 40th (64 MB).
    int key = 0;
    for (int round = 0; round < 100; round++) {
      Map<Integer, byte[]> batch = new HashMap<>();
      for (int i = 0; i < 400; i++) {
        batch.put(key++, new byte[small]);
      }
      map.putAll(batch);
      if (round >= 39 && full(name, limit - 16 * small)) {
        break;
      }
    }
    for (int i = 0; i < 400; i++) {
      map.put(key++, new byte[small]);
    }
    EvictionWaits.drain(cluster.client(), map);
    assertTrue(label + ": the small values never filled both members",
        full(name, limit - 16 * small));
    EvictionWaits.until(label + ": the small values made the map evict", evicted::count,
        n -> n > 0);
    int bigKey = -1;
    Member owner = cluster.client().getPartitionService().getPartition(bigKey).getOwner();
    MemberProcess target = memberAt(owner);
    MemberProcess other = cluster.member(0) == target ? cluster.member(1) : cluster.member(0);
    MemberMapStats before = MemberMapStats.of(target, name);
    MemberMapStats otherBefore = MemberMapStats.of(other, name);
    long smallCost = before.ownedCost / before.ownedEntries;
    byte[] big = new byte[(int) (limit * 3 / 8)];
    map.put(bigKey, big);
    // Hazelcast answers a put before its eviction pass runs, and the pass hands part of the
    // overshoot to the other partition threads: once those have run, the map is what it stays.
    EvictionWaits.drain(cluster.client(), map);
    MemberMapStats after = EvictionWaits.until(label + ": back within the limit of " + limit
        + " B after the large put", () -> MemberMapStats.of(target, name), s -> s.cost() <= limit);
    MemberMapStats otherAfter = MemberMapStats.of(other, name);
    long evictions = before.ownedEntries + 1 - after.ownedEntries;
    List<String> exceptions = MemberLogs.unexplained(cluster.exceptionsInLogs(marks),
        MemberLogs.JMX_REGISTRATION_RACE);
    System.out.printf("[%s] %d partition threads: full at %d KB (%d entries of %d KB) against %d"
            + " KB; one %d KB put: %d evicted, the map at %d KB (%d entries) after it, the other"
            + " member %d -> %d entries%n",
        label, PARTITION_THREADS, before.cost() >> 10, before.ownedEntries, smallCost >> 10,
        limit >> 10, big.length >> 10, evictions, after.cost() >> 10,
        after.ownedEntries, otherBefore.ownedEntries, otherAfter.ownedEntries);
    boolean bigKept = map.containsKey(bigKey);
    map.destroy();
    assertTrue(label + ": the large entry is stored", bigKept);
    assertTrue(label + ": the large put freed at most its own cost plus one entry: the map went"
            + " from " + before.cost() + " to " + after.cost() + " bytes (one entry: " + smallCost
            + ", " + evictions + " entries evicted)", after.cost() >= before.cost() - smallCost);
    assertEquals(label + ": the other member evicted nothing", otherBefore.ownedEntries,
        otherAfter.ownedEntries);
    assertEquals(label + ": exceptions in member logs " + first(exceptions, 20), 0,
        exceptions.size());
  }

  /** Whether every member holds at least {@code atLeast} bytes of the map. */
  private static boolean full(String map, long atLeast) throws Exception {
    for (MemberProcess m : cluster.members()) {
      if (MemberMapStats.of(m, map).cost() < atLeast) {
        return false;
      }
    }
    return true;
  }

  private static MemberProcess memberAt(Member member) {
    int port = member.getAddress().getPort();
    for (MemberProcess m : cluster.members()) {
      if (m.port() == port) {
        return m;
      }
    }
    throw new IllegalStateException("no member process listens on " + port);
  }

  private static Map<String, Integer> ownedPerMember(IMap<Integer, byte[]> map) {
    PartitionService partitions = cluster.client().getPartitionService();
    Map<String, Integer> counts = new java.util.TreeMap<>();
    for (Integer k : map.keySet()) {
      counts.merge(String.valueOf(partitions.getPartition(k).getOwner().getAddress()), 1,
          Integer::sum);
    }
    return counts;
  }

  private static int largestPartition(IMap<Integer, byte[]> map) {
    PartitionService partitions = cluster.client().getPartitionService();
    Map<Integer, Integer> counts = new HashMap<>();
    for (Integer k : map.keySet()) {
      counts.merge(partitions.getPartition(k).getPartitionId(), 1, Integer::sum);
    }
    return counts.values().stream().mapToInt(Integer::intValue).max().orElse(0);
  }

  /**
   * Free-heap policies: after a full GC each member has at least the configured free heap
   * (bytes, or a negative percentage of the maximum heap).
   */
  private static String freeHeapAtLeast(String label, long minFree) throws Exception {
    List<String> seen = new ArrayList<>();
    for (MemberProcess m : cluster.members()) {
      long used = m.heapUsedAfterFullGc();
      long max = maxHeap(m);
      long want = minFree >= 0 ? minFree : (long) (max * -minFree / 100.0);
      seen.add(((max - used) >> 20) + " MB free of " + (max >> 20));
      assertTrue(label + ": " + m.name() + " keeps " + (want >> 20) + " MB free after a full GC,"
          + " has " + ((max - used) >> 20) + " MB", max - used >= want);
    }
    return "after full GC " + seen;
  }

  /**
   * Used-heap policies: each member's modelled cost (owned + backup) is within the limit, once
   * the passes have run (backup replicas' passes included, which the drain may not reach).
   */
  private static String usedHeapAtMost(IMap<Integer, byte[]> map, String label, long limit)
      throws Exception {
    List<String> seen = new ArrayList<>();
    for (MemberProcess m : cluster.members()) {
      MemberMapStats stats = EvictionWaits.until(label + ": " + m.name() + " holds at most its"
              + " limit of " + limit + " bytes of the map",
          () -> MemberMapStats.of(m, map.getName()), s -> s.cost() <= limit);
      seen.add(stats.toString());
    }
    return "per member " + seen + " against " + (limit >> 10) + " KB";
  }

  static long maxHeap(MemberProcess m) throws Exception {
    CompositeData usage = (CompositeData) m.jmx()
        .getAttribute(new ObjectName("java.lang:type=Memory"), "HeapMemoryUsage");
    return MemoryUsage.from(usage).getMax();
  }

  static <T> List<T> first(java.util.Collection<T> items, int n) {
    List<T> out = new ArrayList<>();
    for (T t : items) {
      if (out.size() == n) {
        break;
      }
      out.add(t);
    }
    return out;
  }
}
