package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.partition.IPartitionService;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.MapServiceContext;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.impl.NodeEngine;
import java.util.ArrayList;
import java.util.List;

/**
 * One map's record stores on this member: those a partition thread serves, their summed cost, and
 * the share of it in partitions this member owns.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Record stores are reached through {@code MapServiceContext#getExistingRecordStore}, which
 *       has one shape on Hazelcast 5.3 and 5.5+ (unlike {@code PartitionContainer}, a class on 5.3
 *       and an interface on 5.5+), and never created here.</li>
 *   <li>Summing visits every partition: done only where the running total cannot serve
 *       (see {@link MapFootprint}) and for the owned share, at most once a second unless what
 *       this member owns may have changed (see {@link #ownedRatio}).</li>
 * </ol>
 */
final class MapRecordStores {
  private static final long OWNED_RATIO_NANOS = 1_000_000_000L;

  private final String mapName;
  private final NodeEngine nodeEngine;
  private final IPartitionService partitionService;
  private final PartitionThreads threads;
  private volatile double ownedRatio;
  private volatile long ownedRatioAt;
  private volatile long ownedRatioStamp;
  private volatile boolean ownedRatioValid;

  MapRecordStores(String mapName, NodeEngine nodeEngine, IPartitionService partitionService,
      PartitionThreads threads) {
    this.mapName = mapName;
    this.nodeEngine = nodeEngine;
    this.partitionService = partitionService;
    this.threads = threads;
  }

  /** The record stores of the map in the partitions partition thread {@code thread} serves. */
  List<SampledDomain.Source> ofThread(int thread) {
    List<SampledDomain.Source> sources = new ArrayList<>();
    if (thread < 0) {
      return sources;
    }
    MapServiceContext context = context();
    for (int pid = thread; pid < threads.partitionCount(); pid += threads.count()) {
      RecordStore<?> store = context.getExistingRecordStore(pid, mapName);
      if (store != null) {
        sources.add(SampledDomain.of(store, partitionService));
      }
    }
    return sources;
  }

  /** The map's record store of partition {@code partitionId}, or null if it has none here. */
  RecordStore<?> of(int partitionId) {
    return context().getExistingRecordStore(partitionId, mapName);
  }

  /**
   * The module's estimator of one of the map's existing record stores that feeds a running
   * total, or null when none does: what an evictor built for a config update takes the map's
   * running total from.
   */
  GcAwareEntryCostEstimator anyEstimator() {
    MapServiceContext context = contextOrNull();
    if (context == null) {
      return null;
    }
    for (int pid = 0; pid < threads.partitionCount(); pid++) {
      GcAwareEntryCostEstimator estimator = estimatorOf(context.getExistingRecordStore(pid, mapName));
      if (estimator != null && estimator.footprint() != null) {
        return estimator;
      }
    }
    return null;
  }

  /** The module's estimator of {@code store}, or null. */
  private static GcAwareEntryCostEstimator estimatorOf(RecordStore<?> store) {
    if (store == null || store.getStorage() == null) {
      return null;
    }
    Object estimator = store.getStorage().getEntryCostEstimator();
    return estimator instanceof GcAwareEntryCostEstimator
        ? (GcAwareEntryCostEstimator) estimator : null;
  }

  /**
   * Binds the module's estimators of the record stores partition thread {@code thread} serves to
   * {@code footprint} and {@code oversized}; only on that thread.
   */
  void bindThread(int thread, MapFootprint footprint, OversizedEntries oversized) {
    MapServiceContext context = context();
    for (int pid = thread; pid < threads.partitionCount(); pid += threads.count()) {
      GcAwareEntryCostEstimator estimator = estimatorOf(context.getExistingRecordStore(pid, mapName));
      if (estimator != null) {
        estimator.bind(footprint, oversized);
      }
    }
  }

  /** Whether the map holds any entry on this member. */
  boolean anyEntries() {
    MapServiceContext context = contextOrNull();
    if (context == null) {
      return false;
    }
    for (int pid = 0; pid < threads.partitionCount(); pid++) {
      RecordStore<?> store = context.getExistingRecordStore(pid, mapName);
      if (store != null && store.size() > 0) {
        return true;
      }
    }
    return false;
  }

  /** Whether some record store of the map has an estimator that is not the module's. */
  boolean anyForeignEstimator() {
    MapServiceContext context = context();
    for (int pid = 0; pid < threads.partitionCount(); pid++) {
      RecordStore<?> store = context.getExistingRecordStore(pid, mapName);
      if (store != null && store.getStorage() != null && estimatorOf(store) == null) {
        return true;
      }
    }
    return false;
  }

  /** Whether every record store of the map has the module's estimator feeding {@code footprint}. */
  boolean allFeed(MapFootprint footprint) {
    MapServiceContext context = context();
    for (int pid = 0; pid < threads.partitionCount(); pid++) {
      RecordStore<?> store = context.getExistingRecordStore(pid, mapName);
      if (store != null && store.getStorage() != null) {
        GcAwareEntryCostEstimator estimator = estimatorOf(store);
        if (estimator == null || !estimator.feeds(footprint)) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * The modelled cost of the map's record stores of partition thread {@code thread}; with
   * {@code ownedOnly}, of those in partitions this member owns.
   */
  long costOfThread(int thread, boolean ownedOnly, SampledDomain.Partitions partitions) {
    MapServiceContext context = context();
    long sum = 0;
    for (int pid = thread; pid < threads.partitionCount(); pid += threads.count()) {
      RecordStore<?> store = context.getExistingRecordStore(pid, mapName);
      if (store != null && (!ownedOnly || partitions.isOwned(pid))) {
        sum += store.getOwnedEntryCost();
      }
    }
    return sum;
  }

  /** The sum of the cost estimates of the map's record stores, primary and backup. */
  long sumOfCosts() {
    MapServiceContext context = context();
    long sum = 0;
    for (int pid = 0; pid < threads.partitionCount(); pid++) {
      RecordStore<?> store = context.getExistingRecordStore(pid, mapName);
      if (store != null) {
        sum += store.getOwnedEntryCost();
      }
    }
    return sum;
  }

  /**
   * The part of an overshoot this member frees from its owned partitions when backups follow
   * their owner: overshoot x owned / used, and nothing when it owns nothing of the map. The
   * owners of its backup replicas free the rest; freeing all of it here too would evict about
   * twice what is needed with one backup.
   */
  long ownedShare(long over, long used, SampledDomain.Partitions partitions) {
    double ratio = ownedRatio(used, partitions);
    return ratio == 0 ? 0 : Math.max(1, (long) Math.ceil(over * ratio));
  }

  /**
   * The share of {@code used} in partitions this member owns. Measuring it visits every
   * partition, so it is measured again only after a second, after the partition table changed
   * (a promotion or migration changes what is owned at once), or after
   * {@link #refreshOwnedRatio} or {@link #ownedWrite}. A ratio of 0 turns eviction and
   * back-pressure off, and only a write to an owned partition or a change of the table ends it.
   */
  double ownedRatio(long used, SampledDomain.Partitions partitions) {
    long now = System.nanoTime();
    long stamp = partitionService.getPartitionStateStamp();
    if (!ownedRatioValid || stamp != ownedRatioStamp
        || now - ownedRatioAt > OWNED_RATIO_NANOS) {
      MapServiceContext context = context();
      long owned = 0;
      for (int pid = 0; pid < threads.partitionCount(); pid++) {
        RecordStore<?> store = context.getExistingRecordStore(pid, mapName);
        if (store != null && partitions.isOwned(pid)) {
          owned += store.getOwnedEntryCost();
        }
      }
      ownedRatio = owned <= 0 ? 0 : used <= 0 ? 1 : Math.min(1, (double) owned / used);
      ownedRatioAt = now;
      ownedRatioStamp = stamp;
      ownedRatioValid = true;
    }
    return ownedRatio;
  }

  /** Makes the next {@link #ownedRatio} measure again (after a pass evicted owned entries). */
  void refreshOwnedRatio() {
    ownedRatioValid = false;
  }

  /**
   * A write reached a partition this member owns: a ratio of 0 is measured again. Backup writes
   * leave it cached, so a member over its limit by backups alone does not visit every partition
   * on each of them.
   */
  void ownedWrite() {
    if (ownedRatio == 0) {
      ownedRatioValid = false;
    }
  }

  /**
   * The map service's context, or null while an evictor is built for a member that shuts down
   * (its map containers are made to deregister their listeners, with no map service).
   */
  private MapServiceContext contextOrNull() {
    MapService service = nodeEngine.getServiceOrNull(MapService.SERVICE_NAME);
    return service == null ? null : service.getMapServiceContext();
  }

  private MapServiceContext context() {
    MapService service = nodeEngine.getService(MapService.SERVICE_NAME);
    return service.getMapServiceContext();
  }
}
