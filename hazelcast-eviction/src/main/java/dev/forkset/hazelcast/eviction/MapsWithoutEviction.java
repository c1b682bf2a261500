package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.partition.IPartition;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.impl.MapContainer;
import com.hazelcast.map.impl.MapEntries;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.impl.NodeEngine;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.BitSet;
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
 *   <li>No per-map state: a write that needs the rule gets an {@link Admission} with the backups
 *       the running map sends, its container's total backup count (the config that matched when
 *       the container was made: a map config added later for its name, dynamic config, does not
 *       change a running map, and counting that one's backups let through values the map cannot
 *       take), so a destroyed or re-added map leaves nothing behind. The member's config
 *       ({@code Config#findMapConfig}) stands in only where this member has no container of the
 *       map. {@code MapContainer} is a class on 5.3 and an interface on 5.5+, so its count is
 *       read through a method handle, which links on both ({@code LinksOnOldestLineTest}).</li>
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

  /** MapContainer#getTotalBackupCount, on the class (5.3) or the interface (5.5+). */
  private static final MethodHandle TOTAL_BACKUPS = totalBackupsHandle();

  private static MethodHandle totalBackupsHandle() {
    try {
      return MethodHandles.publicLookup().findVirtual(MapContainer.class, "getTotalBackupCount",
          MethodType.methodType(int.class));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("MapContainer#getTotalBackupCount not found", e);
    }
  }

  /** A write of {@code values} (null where computed later) to the store's map; see Admission. */
  void beforeWrite(RecordStore<?> store, List<Data> values) {
    if (values != null && !fitsAnyMap(sum(values))) {
      admission(store).checkInFlight(values);
    }
  }

  /**
   * One partition's batch of a split-brain merge: a refusal drops it with a WARNING, as on a map
   * with eviction ({@link Admission#admitMerge}).
   *
   * @return whether to merge the batch
   */
  boolean beforeMerge(RecordStore<?> store, List<Data> values) {
    if (fitsAnyMap(sum(values))) {
      return true;
    }
    Admission admission = admission(store);
    return admission.admitMerge(nodeEngine.getLogger(MapsWithoutEviction.class),
        store.getPartitionId(), values, () -> admission.checkInFlight(values));
  }

  /**
   * The same with the values over the in-flight allowance together dropped one by one instead of
   * the whole batch (custom jars of revision 11 or later; {@link Admission#mergeDrops}).
   *
   * @return the indexes of the entries to drop
   */
  BitSet mergeBatchDrops(RecordStore<?> store, List<Data> keys, List<Data> values) {
    if (fitsAnyMap(sum(values))) {
      return new BitSet();
    }
    Admission admission = admission(store);
    return admission.mergeDrops(nodeEngine.getLogger(MapsWithoutEviction.class),
        store.getPartitionId(), null, keys, values,
        (keptKeys, keptValues) -> admission.checkInFlight(keptValues));
  }

  /** A value a single-key entry processor computed. */
  void beforeComputedWrite(RecordStore<?> store, Object value) {
    if (value instanceof Data) {
      beforeWrite(store, Collections.singletonList((Data) value));
    }
  }

  /** A value a transaction writes, asked on the calling member. */
  void beforeTransactionalWrite(String mapName, Data value) {
    if (value != null && !fitsAnyMap(value.totalSize())) {
      admission(mapName).checkInFlight(Collections.singletonList(value));
    }
  }

  /** The values a multi-key entry processor computed for one partition's batch, together. */
  void beforeComputedWrites(RecordStore<?> store, List<Object> values) {
    long together = 0;
    for (Object value : values) {
      together += value instanceof Data ? ((Data) value).totalSize() : 0;
    }
    if (!fitsAnyMap(together)) {
      admission(store).checkComputedInFlight(values);
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

  private Admission admission(RecordStore<?> store) {
    return admission(store.getName(), store.getMapContainer());
  }

  /** For a write asked on the calling member: its container of the map, if it has one. */
  private Admission admission(String mapName) {
    MapService service = nodeEngine.getService(MapService.SERVICE_NAME);
    return admission(mapName, service.getMapServiceContext().getExistingMapContainer(mapName));
  }

  private Admission admission(String mapName, MapContainer container) {
    int backups = container == null
        ? nodeEngine.getConfig().findMapConfig(mapName).getTotalBackupCount()
        : totalBackups(container);
    return Admission.inFlightOnly(mapName, metrics, backups, inFlightPercent, maxHeap);
  }

  private static int totalBackups(MapContainer container) {
    try {
      return (int) TOTAL_BACKUPS.invokeExact(container);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }
}
