package dev.forkset.hazelcast.eviction;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The partitions of one map on this member that may hold an entry whose modelled cost alone
 * exceeds the map's per-member limit: an entry that got in without admission (a load, a
 * transaction's commit, an entry processor on many keys, an interceptor, a backup or a migration
 * onto a member whose model makes it larger, {@code reject.oversized=false}, a limit lowered by a
 * config update).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Such an entry is the one a pass evicts, before anything else (Caffeine's rule in
 *       {@code BoundedLocalCache.evictFromMain}: an entry heavier than the maximum goes first).
 *       With it in the map, no eviction of other entries can bring the map under its limit, and
 *       a pass that aims at the limit would empty the map around it.</li>
 *   <li>The record stores' estimators report what they add ({@link #added}); an entry over the
 *       limit, or a value over half of it (its key's size is not known there),
 *       {@linkplain #mark marks} its partition. The partition thread that serves it
 *       {@linkplain #take takes} the marks at its next pass and checks every entry of those
 *       partitions. A mark is a superset: a scan that finds nothing costs one walk of a
 *       partition, and only after a write of about half the limit's size. Every positive
 *       adjustment of a record store's estimate runs on its partition thread (puts, loads,
 *       backups, replication, entry processors), so a thread's marks and its scans never
 *       interleave.</li>
 *   <li>A thread's flag is set after its partition's mark and cleared before the marks are read,
 *       so a mark is never lost: at worst a partition is scanned once more.</li>
 *   <li>{@link #pendingCost} is the cost of the oversized entries marked and not evicted yet: on
 *       another partition thread (which evicts them at its next pass), or {@linkplain #hold held}
 *       where a pass could not evict them (a locked entry, a migrating partition). A pass frees
 *       only the overshoot of the other entries ({@code used - pending - limit}), never more
 *       because of an entry it cannot evict; while another thread has marks whose cost is not
 *       known yet ({@link #hasUnknown}: a value between half the limit and the limit, a lowered
 *       limit) a pass leaves the overshoot to that thread. The pending cost, and whether a
 *       thread has marks of no known cost, change only once its scan ended ({@link #settle}),
 *       so no pass elsewhere sees either drop while the entry stays. An estimator marks before
 *       it adds to the map's total, and every mark changes {@link #version}: a pass that started
 *       before an oversized entry came stops at its next step instead of evicting around it.</li>
 *   <li>Held entries are checked again at their thread's passes at most every
 *       {@value #HELD_RETRY_MILLIS} ms, and a write's pass elsewhere asks that thread for a pass
 *       no more often: a lock held for long costs one walk of its partition per interval, not
 *       one per write, and nothing on an idle member.</li>
 * </ol>
 */
final class OversizedEntries {
  static final long HELD_RETRY_MILLIS = 100;
  private static final long HELD_RETRY_NANOS = HELD_RETRY_MILLIS * 1_000_000L;

  private final PartitionThreads threads;
  private final AtomicIntegerArray partitions;
  private final AtomicIntegerArray ofThread;
  /**
   * Per partition thread: how many marks of no known cost it got, and how many of them its last
   * finished scan took; it has such marks while they differ (note 4).
   */
  private final AtomicIntegerArray unknownMarks;
  private final AtomicIntegerArray unknownSettled;
  /** Per partition thread: the known cost of its marked entries (note 4). */
  private final AtomicLongArray pending;
  private final AtomicIntegerArray heldPartitions;
  private final AtomicIntegerArray heldOfThread;
  /** Per partition thread: the cost of its held entries (note 4). */
  private final AtomicLongArray held;
  /** Per partition thread: when it last checked its held entries (note 5). */
  private final AtomicLongArray heldCheckedAt;
  /** Entries costing more are oversized; Long.MAX_VALUE while the map has no heap limit. */
  private volatile long above = Long.MAX_VALUE;
  private final java.util.concurrent.atomic.AtomicInteger version =
      new java.util.concurrent.atomic.AtomicInteger();

  OversizedEntries(PartitionThreads threads) {
    this.threads = threads;
    this.partitions = new AtomicIntegerArray(threads.partitionCount());
    this.ofThread = new AtomicIntegerArray(threads.count());
    this.unknownMarks = new AtomicIntegerArray(threads.count());
    this.unknownSettled = new AtomicIntegerArray(threads.count());
    this.pending = new AtomicLongArray(threads.count());
    this.heldPartitions = new AtomicIntegerArray(threads.partitionCount());
    this.heldOfThread = new AtomicIntegerArray(threads.count());
    this.held = new AtomicLongArray(threads.count());
    this.heldCheckedAt = new AtomicLongArray(threads.count());
  }

  /**
   * The map's limit from now on (Long.MAX_VALUE for none). A lower limit than before marks every
   * partition when the map holds {@code entries}: they may exceed it.
   */
  synchronized void limit(long limit, java.util.function.BooleanSupplier entries) {
    long was = above;
    above = limit;
    // asked after the new limit is in place: an entry stored from now on is judged by it
    if (limit < was && entries.getAsBoolean()) {
      for (int pid = 0; pid < partitions.length(); pid++) {
        mark(pid, 0);
      }
    }
  }

  /**
   * The estimator of partition {@code partitionId}'s record store added {@code cost}: a whole
   * entry, or (with {@code valueOnly}) a value, whose entry costs at least that.
   */
  void added(int partitionId, long cost, boolean valueOnly) {
    long limit = above;
    if (cost > limit || (valueOnly && cost > limit / 2)) {
      mark(partitionId, cost > limit ? cost : 0);
    }
  }

  /**
   * Partition {@code partitionId} may hold an oversized entry of at least {@code knownCost}, or
   * of a cost not known (0).
   */
  void mark(int partitionId, long knownCost) {
    int thread = threads.threadOf(partitionId);
    // the partition first, the thread's flag last: a scan that counts the mark collects it
    partitions.set(partitionId, 1);
    if (knownCost > 0) {
      pending.addAndGet(thread, knownCost);
    } else {
      unknownMarks.incrementAndGet(thread);
    }
    ofThread.set(thread, 1);
    version.incrementAndGet();
  }

  /**
   * Partition {@code partitionId} holds an oversized entry of {@code cost} that could not be
   * evicted now (note 5).
   */
  void hold(int partitionId, long cost) {
    int thread = threads.threadOf(partitionId);
    heldPartitions.set(partitionId, 1);
    held.addAndGet(thread, cost);
    heldOfThread.set(thread, 1);
    version.incrementAndGet();
  }

  /** Changes with every mark and hold: a pass stops when an oversized entry came meanwhile. */
  int version() {
    return version.get();
  }

  /** Whether partition thread {@code thread} has fresh marks to take. */
  boolean hasMarks(int thread) {
    return ofThread.get(thread) == 1;
  }

  /** Whether partition thread {@code thread} holds entries it has not checked for a while. */
  boolean heldDue(int thread, long nanoTime) {
    return heldOfThread.get(thread) == 1
        && nanoTime - heldCheckedAt.get(thread) >= HELD_RETRY_NANOS;
  }

  /** Whether partition thread {@code thread} has marks whose cost is not known yet. */
  boolean hasUnknown(int thread) {
    return unknownMarks.get(thread) != unknownSettled.get(thread);
  }

  /**
   * What partition thread {@code thread}, on which alone this is called, checks now: its marked
   * partitions and, with them or at most every {@value #HELD_RETRY_MILLIS} ms, those holding
   * held entries; their marks cleared. Null when there is nothing; otherwise {@link #settle}
   * follows once the check ended.
   */
  Taken take(int thread, long nanoTime) {
    boolean fresh = ofThread.get(thread) == 1 && ofThread.getAndSet(thread, 0) == 1;
    // held entries with fresh marks too: a scan of their partition would hold them again
    boolean withHeld = heldOfThread.get(thread) == 1
        && (fresh || nanoTime - heldCheckedAt.get(thread) >= HELD_RETRY_NANOS);
    if (!fresh && !withHeld) {
      return null;
    }
    Taken taken = new Taken();
    if (fresh) {
      taken.unknownMarks = unknownMarks.get(thread);
      taken.pendingCost = pending.get(thread);
      collect(partitions, thread, taken.partitions);
    }
    if (withHeld) {
      heldCheckedAt.set(thread, nanoTime);
      heldOfThread.set(thread, 0);
      taken.heldCost = held.get(thread);
      collect(heldPartitions, thread, taken.partitions);
    }
    return taken;
  }

  private void collect(AtomicIntegerArray marks, int thread, List<Integer> out) {
    for (int pid = thread; pid < marks.length(); pid += threads.count()) {
      if (marks.get(pid) == 1 && marks.getAndSet(pid, 0) == 1 && !out.contains(pid)) {
        out.add(pid);
      }
    }
  }

  /**
   * Partition thread {@code thread} checked what it took: the costs taken leave the pending
   * cost now, after what the check kept was marked or held again (note 4).
   */
  void settle(int thread, Taken taken) {
    if (taken.pendingCost != 0) {
      pending.addAndGet(thread, -taken.pendingCost);
    }
    if (taken.heldCost != 0) {
      held.addAndGet(thread, -taken.heldCost);
    }
    if (taken.unknownMarks >= 0) {
      // only now: until the scan ended, the costs it was finding were not counted anywhere
      unknownSettled.set(thread, taken.unknownMarks);
    }
  }

  /** The known cost of the oversized entries marked or held and not evicted yet (note 4). */
  long pendingCost() {
    long sum = 0;
    for (int t = 0; t < pending.length(); t++) {
      sum += pending.get(t) + held.get(t);
    }
    return sum;
  }

  /** Whether {@code cost} alone exceeds the limit. */
  boolean exceeds(long cost) {
    return cost > above;
  }

  /** The partitions one check takes, and the pending costs it takes with them. */
  static final class Taken {
    final List<Integer> partitions = new ArrayList<>(0);
    long pendingCost;
    long heldCost;
    /** The thread's count of unknown-cost marks when it took them; -1 if it took none. */
    int unknownMarks = -1;
  }
}
