package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.MapConfig;
import com.hazelcast.internal.partition.IPartition;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.impl.MapEntries;
import com.hazelcast.spi.impl.NodeEngine;
import java.util.Collections;
import java.util.List;

/**
 * The in-flight rule ({@link Admission}, note 3) for the writes of maps without eviction. Such a
 * map has no evictor to hold an admission, yet a value on its way in takes the same arrays as on
 * any map; patch 0010 asks the provider about every map's writes, with the null evictor for these.
 * Nothing else of the module applies to them: no limit, no back-pressure.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>No per-map state: a write that needs the rule gets an {@link Admission} made from the
 *       map's config as the member resolves it ({@code Config#findMapConfig}: wildcards and
 *       dynamic config, the lookup the map's container is made from), so a destroyed or re-added
 *       map leaves nothing behind.</li>
 *   <li>The lookup is made only for a write that could be refused: values whose sum would pass
 *       with the most backups a map can have ({@link IPartition#MAX_BACKUP_COUNT}, sync and
 *       async together) pass without it, as the rule only grows with the backups. So the small
 *       writes of such maps cost a sum of sizes.</li>
 *   <li>A value the map keeps as an object (an entry processor's result on an OBJECT map) is not
 *       serialized on its way in and not checked, as on a map with eviction.</li>
 * </ol>
 */
final class MapsWithoutEviction {
  private final NodeEngine nodeEngine;
  private final EvictionMetrics metrics;
  private final int inFlightPercent;
  private final long maxHeap;
  private final long allowance;

  MapsWithoutEviction(NodeEngine nodeEngine, EvictionMetrics metrics, int inFlightPercent,
      long maxHeap) {
    this.nodeEngine = nodeEngine;
    this.metrics = metrics;
    this.inFlightPercent = inFlightPercent;
    this.maxHeap = maxHeap;
    this.allowance = Admission.inFlightAllowance(inFlightPercent, maxHeap);
  }

  /** A write of {@code values} (null where computed later) to the map; see Admission. */
  void beforeWrite(String mapName, List<Data> values) {
    if (values != null && !fitsAnyMap(sum(values))) {
      admission(mapName).checkInFlight(values);
    }
  }

  /**
   * One partition's batch of a split-brain merge: a refusal drops it with a WARNING, as on a map
   * with eviction ({@link Admission#admitMerge}).
   *
   * @return whether to merge the batch
   */
  boolean beforeMerge(String mapName, int partitionId, List<Data> values) {
    if (fitsAnyMap(sum(values))) {
      return true;
    }
    Admission admission = admission(mapName);
    return admission.admitMerge(nodeEngine.getLogger(MapsWithoutEviction.class), partitionId,
        values, () -> admission.checkInFlight(values));
  }

  /** A value a single-key entry processor computed, or one a transaction writes. */
  void beforeComputedWrite(String mapName, Object value) {
    if (value instanceof Data) {
      beforeWrite(mapName, Collections.singletonList((Data) value));
    }
  }

  /** The values a multi-key entry processor computed for one partition's batch, together. */
  void beforeComputedWrites(String mapName, List<Object> values) {
    long together = 0;
    for (Object value : values) {
      together += value instanceof Data ? ((Data) value).totalSize() : 0;
    }
    if (!fitsAnyMap(together)) {
      admission(mapName).checkComputedInFlight(values);
    }
  }

  /** How a member's own putAll splits the batches it sends another member. */
  int[] putAllOperationEnds(String mapName, MapEntries[] batches) {
    long together = 0;
    for (long bytes : Admission.batchBytes(batches)) {
      together += bytes;
    }
    return fitsAnyMap(together) ? null : admission(mapName).operationEnds(batches);
  }

  private boolean fitsAnyMap(long together) {
    return Admission.inFlightBytes(together, IPartition.MAX_BACKUP_COUNT) <= allowance;
  }

  private static long sum(List<Data> values) {
    long together = 0;
    for (Data value : values) {
      together += value == null ? 0 : value.totalSize();
    }
    return together;
  }

  private Admission admission(String mapName) {
    MapConfig config = nodeEngine.getConfig().findMapConfig(mapName);
    return Admission.inFlightOnly(mapName, metrics, config.getTotalBackupCount(), inFlightPercent,
        maxHeap);
  }
}
