package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.metrics.Probe;
import com.hazelcast.internal.metrics.ProbeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Per-member counters, published as Hazelcast metrics under {@code map.eviction.gcaware.*}
 * (so also through Hazelcast's JMX metrics publisher) and as {@link GcAwareEvictionMXBean}.
 */
public final class EvictionMetrics implements GcAwareEvictionMXBean {
  final LongAdder evictions = new LongAdder();
  final LongAdder bytesFreed = new LongAdder();
  final LongAdder rejected = new LongAdder();
  final LongAdder refills = new LongAdder();
  final LongAdder sampled = new LongAdder();
  final LongAdder capped = new LongAdder();
  final LongAdder continuations = new LongAdder();
  /** New entries refused (retryably) while the map was far over its limit. */
  final LongAdder deferred = new LongAdder();
  /** Batches of owner-evicted keys sent to backups (one per partition and pass). */
  final LongAdder backupBatches = new LongAdder();
  /** Entries evicted first because alone they exceed their map's per-member limit. */
  final LongAdder oversizedEvictions = new LongAdder();
  /** Maps whose heap limit is checked by summing their partitions now (stock's way). */
  final LongAdder summedMaps = new LongAdder();
  /** Operations of this member's own putAlls sent to another member in runs, one per run. */
  final LongAdder putAllRuns = new LongAdder();
  private final GcFootprintModel model;
  private final String settings;
  private final java.util.function.ToLongBiFunction<String, Boolean> mapView;

  EvictionMetrics(GcFootprintModel model, String settings,
      java.util.function.ToLongBiFunction<String, Boolean> mapView) {
    this.model = model;
    this.settings = settings;
    this.mapView = mapView;
  }

  @Override
  public long mapCost(String mapName) {
    return mapView.applyAsLong(mapName, Boolean.TRUE);
  }

  @Override
  public long mapEntries(String mapName) {
    return mapView.applyAsLong(mapName, Boolean.FALSE);
  }

  @Probe(name = "evictionCount")
  @Override
  public long getEvictionCount() {
    return evictions.sum();
  }

  @Probe(name = "bytesFreed", unit = ProbeUnit.BYTES)
  @Override
  public long getBytesFreed() {
    return bytesFreed.sum();
  }

  @Probe(name = "rejectedEntries")
  @Override
  public long getRejectedEntries() {
    return rejected.sum();
  }

  @Probe(name = "poolRefills")
  @Override
  public long getPoolRefills() {
    return refills.sum();
  }

  @Probe(name = "sampledEntries")
  @Override
  public long getSampledEntries() {
    return sampled.sum();
  }

  @Probe(name = "cappedOperations")
  @Override
  public long getCappedOperations() {
    return capped.sum();
  }

  @Probe(name = "continuations")
  @Override
  public long getContinuations() {
    return continuations.sum();
  }

  @Probe(name = "deferred")
  @Override
  public long getDeferredPuts() {
    return deferred.sum();
  }

  @Probe(name = "backupEvictionBatches")
  @Override
  public long getBackupEvictionBatches() {
    return backupBatches.sum();
  }

  @Probe(name = "oversizedEvictions")
  @Override
  public long getOversizedEvictions() {
    return oversizedEvictions.sum();
  }

  @Probe(name = "summedMaps")
  @Override
  public long getSummedMaps() {
    return summedMaps.sum();
  }

  @Probe(name = "putAllRuns")
  @Override
  public long getPutAllRuns() {
    return putAllRuns.sum();
  }

  /** Ordinal of {@link GcFootprintModel.Kind}: 0 g1, 1 zgc, 2 zgc-generational, 3 shenandoah, 4 parallel, 5 serial, 6 conservative. */
  @Probe(name = "model")
  public long modelOrdinal() {
    return model.kind().ordinal();
  }

  @Probe(name = "regionSize", unit = ProbeUnit.BYTES)
  public long regionSize() {
    return model.regionSize();
  }

  @Override
  public String getModel() {
    return model.describe();
  }

  @Override
  public String getSettings() {
    return settings;
  }
}
