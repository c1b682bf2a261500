package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.partition.IPartition;
import com.hazelcast.internal.partition.IPartitionService;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.util.Clock;
import com.hazelcast.map.impl.EntryCostEstimator;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.map.impl.recordstore.expiry.ExpiryReason;

/**
 * Evicts one pooled candidate, if it may be evicted now.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Skipped (not evicted): the key the write just stored; a partition that is migrating; an
 *       entry written again since it was sampled (another record, or another version); a locked
 *       entry, as the built-in evictor does.</li>
 *   <li>Under a heap policy the entry's cost is reserved against the pass's target before the
 *       entry goes ({@link MapFootprint#reserve}); when there is nothing left to reserve, the
 *       pass ends: other threads are freeing the rest.</li>
 *   <li>As the built-in evictor: an owned entry's eviction fires the EVICTED event and the
 *       post-eviction steps (write-behind flush, near cache invalidation); a backup replica's
 *       entry is dropped quietly.</li>
 *   <li>With {@code backups.follow.owner} ({@code backups} not null) a backup replica's entry
 *       is never evicted, also when its partition stopped being owned here since it was sampled:
 *       the owner still holds the key, and if that owner were lost the key would be lost with
 *       it, without an EVICTED event.</li>
 * </ol>
 */
final class CandidateEviction {
  /** The target of a pass that counts entries, not bytes: nothing is reserved. */
  static final long NO_TARGET = Long.MIN_VALUE;

  private final IPartitionService partitionService;
  private final MapFootprint footprint;
  private final EvictionMetrics metrics;

  CandidateEviction(IPartitionService partitionService, MapFootprint footprint,
      EvictionMetrics metrics) {
    this.partitionService = partitionService;
    this.footprint = footprint;
    this.metrics = metrics;
  }

  /** An entry's cost; the module's estimator answers without a mark (it marks what is added). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static long costOf(RecordStore<?> store, Data key, Record<?> record) {
    EntryCostEstimator estimator = store.getStorage().getEntryCostEstimator();
    return estimator instanceof GcAwareEntryCostEstimator
        ? ((GcAwareEntryCostEstimator) estimator).entryCostQuietly(key, record)
        : estimator.calculateEntryCost(key, record);
  }

  /**
   * Evicts {@code c}: the bytes it freed, {@link EvictionLoop#SKIPPED}, or
   * {@link EvictionLoop#ENOUGH} when {@code target} is met by what is being evicted already.
   * Keys evicted from owned partitions go to {@code backups} when it is not null.
   */
  long evict(Candidate c, Data excludedKey, long target, BackupEvictions backups) {
    if (excludedKey != null && c.key.equals(excludedKey)) {
      return EvictionLoop.SKIPPED;
    }
    IPartition partition = partitionService.getPartition(c.partitionId, false);
    if (partition.isMigrating()) {
      return EvictionLoop.SKIPPED;
    }
    boolean backup = !partition.isLocal();
    if (backup && backups != null) {
      return EvictionLoop.SKIPPED;
    }
    Record<?> record = c.liveRecord();
    RecordStore<?> store = c.store;
    if (record == null || store.isLocked(c.key)) {
      return EvictionLoop.SKIPPED;
    }
    long cost = costOf(store, c.key, record);
    boolean reserved = target != NO_TARGET;
    if (reserved && !footprint.reserve(cost, target)) {
      return EvictionLoop.ENOUGH;
    }
    try {
      ExpiryReason reason = store.hasExpired(c.key, Clock.currentTimeMillis(), backup);
      Object value = store.evict(c.key, backup);
      if (value != null && !backup) {
        store.doPostEvictionOperations(c.key, value, reason);
        if (backups != null) {
          backups.add(c.partitionId, c.key, value);
        }
      }
      metrics.evictions.increment();
      metrics.bytesFreed.add(cost);
      return cost;
    } finally {
      if (reserved) {
        footprint.release(cost);
      }
    }
  }
}
