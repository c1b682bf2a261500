package dev.forkset.it.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.partition.PartitionService;
import dev.forkset.it.harness.MemberProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * What the eviction ITs wait for, each an exact state with an explicit failure: the members'
 * partition threads having run every eviction pass queued so far ({@link #drain}), a value
 * reaching a state ({@link #until}), every key a test wrote being in its map or reported evicted
 * ({@link #awaitKeysAccountedFor}), a member's JVM having exited ({@link #awaitExit}).
 *
 * <p>The states these ITs read are reached in milliseconds on an idle machine; {@link #TIMEOUT}
 * is the bound for "never", generous because the ITs run three at a time on a loaded 2-core
 * machine.
 */
final class EvictionWaits {
  /** How long a state may take before a wait fails. */
  static final Duration TIMEOUT = Duration.ofSeconds(60);
  /** How long a reported (not asserted) count of lost keys waits for late eviction events. */
  static final Duration REPORT_WAIT = Duration.ofSeconds(10);

  /**
   * Members' properties (a line under "properties:") that lift the module's time cap on one
   * eviction pass to its maximum, 60 s. With the default cap a pass stops once it has evicted an
   * entry and run 100 ms, which a loaded machine reaches long before the pass is done; a capped
   * pass is not rescheduled and leaves the rest of the overshoot to the map's next write. A test
   * that asserts "back under the limit" after a write with no write after it needs the pass to
   * run to its end. Stock members ignore the property.
   */
  static final String UNCAPPED_PASSES =
      "  hazelcast.map.eviction.max.micros.per.operation: 60000000\n";

  /**
   * First key (counting up) of the keys {@link #drain} reads: no IT writes keys this low, so the
   * reads find nothing and touch no entry's access time.
   */
  private static final int DRAIN_KEYS_FROM = Integer.MIN_VALUE;

  /**
   * First key (counting up) of the keys {@link #writeEveryPartition} writes: below the keys the
   * ITs write themselves, above the drain's.
   */
  private static final int WRITE_KEYS_FROM = -2_000_000;

  /** One key per partition, by first key and partition count. */
  private static final Map<List<Integer>, int[]> KEYS = new ConcurrentHashMap<>();

  private EvictionWaits() {}

  /** A read of a member's or a map's state. */
  interface Read<T> {
    T get() throws Exception;
  }

  /**
   * Reads until {@code done} holds and returns that value; fails with {@code state} and the last
   * value read if it does not hold within {@link #TIMEOUT}.
   */
  static <T> T until(String state, Read<T> read, Predicate<? super T> done) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    T value = read.get();
    while (!done.test(value)) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(state + ": not so " + TIMEOUT.getSeconds() + " s after it was"
            + " awaited; last seen " + describe(value));
      }
      Thread.sleep(100);
      value = read.get();
    }
    return value;
  }

  /**
   * Returns once every eviction pass queued on the partition threads of {@code map}'s owners
   * before the call has run, and every continuation those passes handed to other partition
   * threads: reads one key of every partition, in two rounds, the second sent once the first
   * has returned.
   *
   * <p>Why that is enough. Hazelcast runs every operation of partition p, and the eviction pass
   * of a write to p (in the write's afterRun, after its response was sent), on partition thread
   * p % T of p's owner; a thread takes its queue in order, so a read of p sent after a write's
   * response returns after that write's pass. The reads reach every thread that serves a
   * partition its member owns, and so every thread that runs an owner's pass. Round one thus
   * completes every pass queued before it. A pass may queue continuations on the other partition
   * threads of its member, in order behind what is already queued there, and a continuation
   * never hands over again; round two, sent after round one has returned, completes them.
   *
   * <p>A thread that serves no partition its member owns is not reached. With 271 partitions
   * there is none on a single member, none with the default two partition threads (the
   * machine's two cores), and with 16 threads on two members one only with a chance of about
   * 2^-16 per thread (a member owns about half of the 16 or 17 partitions of each thread); with
   * three or four members of 16 threads a thread or two of a member can miss out (seen with
   * four). Such a thread holds backup replicas only, so a pass there (a continuation, or a
   * backup replica's own eviction) changes backup costs only, never an owned entry nor an
   * eviction event (owners publish them), and nothing of a map without backups; the ITs read
   * backup costs with {@link #until}. Eviction events reach listeners asynchronously: the drain
   * does not wait for them.
   */
  static void drain(HazelcastInstance client, IMap<Integer, ?> map) {
    int[] keys = keysPerPartition(client.getPartitionService(), DRAIN_KEYS_FROM);
    for (int round = 0; round < 2; round++) {
      List<CompletableFuture<?>> reads = new ArrayList<>(keys.length);
      for (int key : keys) {
        reads.add(map.getAsync(key).toCompletableFuture());
      }
      for (CompletableFuture<?> read : reads) {
        read.join();
      }
    }
  }

  /**
   * One small write to every partition of {@code map}, each of a key of its own that no other
   * write uses: every member runs a write's eviction pass on each partition thread that serves
   * a partition it owns, whichever member the client believes owns what. A map that a pass
   * left over its limit with no write after it (a capped pass, or a migration's commit that
   * found its partition migrating again) evicts again on these writes' passes; the caller
   * drains them ({@link #drain}) before it reads the result.
   */
  static void writeEveryPartition(HazelcastInstance client, IMap<Integer, byte[]> map,
      int valueBytes) {
    int[] keys = keysPerPartition(client.getPartitionService(), WRITE_KEYS_FROM);
    List<CompletableFuture<?>> writes = new ArrayList<>(keys.length);
    for (int key : keys) {
      writes.add(map.setAsync(key, new byte[valueBytes]).toCompletableFuture());
    }
    for (CompletableFuture<?> write : writes) {
      write.join();
    }
  }

  /** For each partition id, the first key counting up from {@code from} of that partition. */
  private static int[] keysPerPartition(PartitionService partitions, int from) {
    int count = partitions.getPartitions().size();
    return KEYS.computeIfAbsent(List.of(from, count), n -> {
      int[] keys = new int[count];
      boolean[] found = new boolean[count];
      int missing = count;
      for (int key = from; missing > 0; key++) {
        int p = partitions.getPartition(key).getPartitionId();
        if (!found[p]) {
          found[p] = true;
          keys[p] = key;
          missing--;
        }
      }
      return keys;
    });
  }

  /**
   * Waits until every key of {@code written} is either in {@code map} or was reported evicted by
   * {@code evicted}, and fails naming the keys that are neither after {@link #TIMEOUT}. The
   * caller has drained the partition threads ({@link #drain}) after its last write, so the map
   * holds what it will hold; what is left to wait for is the eviction events, which arrive
   * asynchronously. A key found missing once stays counted until its event arrives, even if a
   * later read finds it.
   */
  static void awaitKeysAccountedFor(String label, IMap<Integer, ?> map, Set<Integer> written,
      Set<Integer> evicted) throws Exception {
    Set<Integer> missing = new HashSet<>();
    until(label + ": every key written is in the map or reported evicted (keys neither)",
        () -> unaccounted(map, written, evicted, missing), Set::isEmpty);
  }

  /**
   * For a run that reports lost keys instead of failing on them (a stock member, for
   * comparison): the keys of {@code written} that are neither in {@code map} nor reported
   * evicted, as soon as there are none, else as they are {@link #REPORT_WAIT} later. The events
   * of the evictions before a drain arrive within milliseconds; a report does not wait the full
   * {@link #TIMEOUT} an assertion gives them, since stock does lose keys.
   */
  static Set<Integer> keysUnaccountedFor(IMap<Integer, ?> map, Set<Integer> written,
      Set<Integer> evicted) throws Exception {
    Set<Integer> missing = new HashSet<>();
    long deadline = System.nanoTime() + REPORT_WAIT.toNanos();
    Set<Integer> lost = unaccounted(map, written, evicted, missing);
    while (!lost.isEmpty() && System.nanoTime() - deadline < 0) {
      Thread.sleep(200);
      lost = unaccounted(map, written, evicted, missing);
    }
    return lost;
  }

  /**
   * Adds to {@code missing} the keys of {@code written} that are not in {@code map} now and
   * returns those of {@code missing} not reported evicted.
   */
  private static Set<Integer> unaccounted(IMap<Integer, ?> map, Set<Integer> written,
      Set<Integer> evicted, Set<Integer> missing) {
    Set<Integer> expected = new HashSet<>(written);
    expected.removeAll(evicted);
    expected.removeAll(missing);
    missing.addAll(absent(map, expected));
    Set<Integer> lost = new HashSet<>(missing);
    lost.removeAll(evicted);
    return lost;
  }

  /** The keys of {@code keys} that {@code map} does not hold. */
  private static Set<Integer> absent(IMap<Integer, ?> map, Set<Integer> keys) {
    Set<Integer> absent = new HashSet<>(keys);
    if (!absent.isEmpty()) {
      absent.removeAll(new HashSet<>(map.keySet()));
    }
    return absent;
  }

  /** Waits until {@code member}'s JVM has exited; false if it still runs after the timeout. */
  static boolean awaitExit(MemberProcess member) throws InterruptedException {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (member.isAlive() && System.nanoTime() - deadline < 0) {
      Thread.sleep(50);
    }
    return !member.isAlive();
  }

  private static String describe(Object value) {
    String s = String.valueOf(value);
    if (s.length() > 2000) {
      s = s.substring(0, 2000) + "...";
    }
    return value instanceof java.util.Collection
        ? ((java.util.Collection<?>) value).size() + " items: " + s : s;
  }
}
