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
 *       partition, and only after a write of about half the limit's size.</li>
 *   <li>A thread's flag is set after its partition's mark and cleared before the marks are read,
 *       so a mark is never lost: at worst a partition is scanned once more.</li>
 *   <li>{@link #pendingCost} is the cost of the oversized entries marked and not evicted yet: on
 *       another partition thread (which evicts them at its next pass), or held where its pass
 *       could not evict them (the entry the running operation writes, a locked entry, a
 *       migrating partition; marked again with their cost). A pass frees only the overshoot of
 *       the other entries: {@code used - pending - limit}, never more because of an entry it
 *       cannot evict.</li>
 * </ol>
 */
final class OversizedEntries {
  private final PartitionThreads threads;
  private final AtomicIntegerArray partitions;
  private final AtomicIntegerArray ofThread;
  /** Per partition thread: the known cost of the oversized entries marked there (note 4). */
  private final AtomicLongArray pending;
  /** Entries costing more are oversized; Long.MAX_VALUE while the map has no heap limit. */
  private volatile long above = Long.MAX_VALUE;

  OversizedEntries(PartitionThreads threads) {
    this.threads = threads;
    this.partitions = new AtomicIntegerArray(threads.partitionCount());
    this.ofThread = new AtomicIntegerArray(threads.count());
    this.pending = new AtomicLongArray(threads.count());
  }

  /**
   * The map's limit from now on (Long.MAX_VALUE for none). A lower limit than before marks every
   * partition: entries stored under the old one may exceed it.
   */
  synchronized void limit(long limit) {
    long was = above;
    above = limit;
    if (limit < was) {
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

  /** Partition {@code partitionId} may hold an oversized entry of at least {@code knownCost}. */
  void mark(int partitionId, long knownCost) {
    int thread = threads.threadOf(partitionId);
    if (knownCost > 0) {
      pending.addAndGet(thread, knownCost);
    }
    partitions.set(partitionId, 1);
    ofThread.set(thread, 1);
  }

  /** Whether partition thread {@code thread} has marks to take. */
  boolean hasMarks(int thread) {
    return ofThread.get(thread) == 1;
  }

  /** The marked partitions that partition thread {@code thread} serves; their marks cleared. */
  List<Integer> take(int thread) {
    List<Integer> out = new ArrayList<>(0);
    if (ofThread.get(thread) == 0 || ofThread.getAndSet(thread, 0) == 0) {
      return out;
    }
    for (int pid = thread; pid < partitions.length(); pid += threads.count()) {
      if (partitions.get(pid) == 1 && partitions.getAndSet(pid, 0) == 1) {
        out.add(pid);
      }
    }
    return out;
  }

  /** The known cost of the oversized entries marked on partition thread {@code thread}. */
  long pending(int thread) {
    return pending.get(thread);
  }

  /**
   * Partition thread {@code thread} checked the partitions it {@linkplain #take took} when its
   * pending cost was {@code taken}, and kept oversized entries of {@code kept} (marked again).
   * The pending cost changes only now, so that no pass elsewhere sees it drop while the entries
   * are still there (note 4).
   */
  void settle(int thread, long taken, long kept) {
    pending.addAndGet(thread, kept - taken);
  }

  /** The known cost of the oversized entries marked and not evicted yet (note 4). */
  long pendingCost() {
    long sum = 0;
    for (int t = 0; t < pending.length(); t++) {
      sum += pending.get(t);
    }
    return sum;
  }

  /** Whether {@code cost} alone exceeds the limit. */
  boolean exceeds(long cost) {
    return cost > above;
  }
}
