package dev.forkset.hazelcast.eviction;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The partitions of one map on this member that may hold an entry whose modelled cost alone
 * exceeds the map's per-member limit: an entry that got in without admission (a load, a
 * transaction's commit, an entry processor on many keys, an interceptor, a backup or a migration
 * onto a member whose model makes it larger, {@code reject.oversized=false}).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Such an entry is the one a pass evicts, before anything else (Caffeine's rule in
 *       {@code BoundedLocalCache.evictFromMain}: an entry heavier than the maximum goes first).
 *       With it in the map, no eviction of other entries can bring the map under its limit, and
 *       a pass that aims at the limit would empty the map around it.</li>
 *   <li>The record stores' estimators {@linkplain #mark mark} a partition when they add an entry
 *       (or set a value) that may be oversized; the partition thread that serves it
 *       {@linkplain #take takes} the marks at its next pass and checks every entry of those
 *       partitions. A mark is a superset: a scan that finds nothing costs one walk of a partition,
 *       and only after a write of about the limit's size.</li>
 *   <li>A thread's flag is set after its partition's mark and cleared before the marks are read,
 *       so a mark is never lost: at worst a partition is scanned once more.</li>
 * </ol>
 */
final class OversizedEntries {
  private final PartitionThreads threads;
  private final AtomicIntegerArray partitions;
  private final AtomicIntegerArray ofThread;

  OversizedEntries(PartitionThreads threads) {
    this.threads = threads;
    this.partitions = new AtomicIntegerArray(threads.partitionCount());
    this.ofThread = new AtomicIntegerArray(threads.count());
  }

  /** Partition {@code partitionId} may now hold an oversized entry. */
  void mark(int partitionId) {
    partitions.set(partitionId, 1);
    ofThread.set(threads.threadOf(partitionId), 1);
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
}
