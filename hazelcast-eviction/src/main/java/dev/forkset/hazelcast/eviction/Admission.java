package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.spi.exception.RetryableHazelcastException;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Decides, on the owner's partition thread and before anything of a write is stored, whether a
 * map under a heap limit can take it.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Oversized: an entry whose modelled cost alone exceeds the map's per-member limit is
 *       refused with {@link IllegalArgumentException}, and with it the whole write (all entries
 *       of a putAll or merge batch): evicting every other entry could not make room for it, and
 *       storing it could exhaust the heap.</li>
 *   <li>Back-pressure: a partition thread frees only its own partitions and hands the rest of an
 *       overshoot to the other threads, so a client that keeps writing large values can outrun
 *       eviction (seen: 26 live 5 MB values against a limit of 18 on a loaded 2-core machine,
 *       then OutOfMemoryError). A write that grows the map while it is more than
 *       1/{@value #SLACK_DIVISOR} of its limit over it first makes this thread catch up; if the
 *       map is still that far over, the write is refused with Hazelcast's
 *       {@link RetryableHazelcastException}, which client and member invocations retry. Updates
 *       that grow an entry count as growth; writes that only shrink or keep entries pass.
 *       "Over" is the part of the overshoot this member's own passes free: with backups
 *       following their owner, the owned share (see {@link SizeProportionalEvictor}).</li>
 * </ol>
 */
final class Admission {
  /** Over-limit share (1/n of the limit) beyond which growing writes wait for eviction. */
  static final int SLACK_DIVISOR = 16;

  private final String mapName;
  private final long limit;
  private final String limitSetting;
  private final boolean rejectOversized;
  private final LongSupplier overshoot;
  private final EvictionMetrics metrics;

  /**
   * @param overshoot the part of the map's overshoot of {@code limit} that this member's
   *                  eviction passes free, 0 when under the limit
   */
  Admission(String mapName, long limit, String limitSetting, boolean rejectOversized,
      LongSupplier overshoot, EvictionMetrics metrics) {
    this.mapName = mapName;
    this.limit = limit;
    this.limitSetting = limitSetting;
    this.rejectOversized = rejectOversized;
    this.overshoot = overshoot;
    this.metrics = metrics;
  }

  /**
   * Admits a write of {@code keys} with {@code values} (null where the values are not known
   * yet) or throws.
   *
   * @param costs    the cost model of the partition's record store
   * @param existing the record a key has now, or null
   * @param catchUp  an eviction pass on this thread
   */
  void admit(GcAwareEntryCostEstimator costs, Function<Data, Record<?>> existing,
      List<Data> keys, List<Data> values, Runnable catchUp) {
    if (values != null && costs != null) {
      long growth = 0;
      for (int i = 0; i < values.size(); i++) {
        checkSize(costs, keys.get(i), values.get(i));
      }
      for (int i = 0; i < values.size() && growth == 0; i++) {
        Data value = values.get(i);
        Record<?> now = existing.apply(keys.get(i));
        growth += now == null ? costs.entryCost(keys.get(i), value)
            : Math.max(0, costs.valueCost(value) - costs.recordCost(now));
      }
      if (growth == 0) {
        return;
      }
    }
    backPressure(catchUp);
  }

  /** Refuses an entry whose cost alone exceeds the limit. */
  void checkSize(GcAwareEntryCostEstimator costs, Data key, Data value) {
    if (!rejectOversized || value == null) {
      return;
    }
    long cost = costs.entryCost(key, value);
    if (cost > limit) {
      metrics.rejected.increment();
      throw new IllegalArgumentException("Map '" + mapName + "': an entry of this write needs "
          + cost + " bytes of heap on this member (" + value.totalSize() + " serialized bytes"
          + " under the " + costs.model().kind().value + " footprint model), more than the"
          + " map's whole per-member limit of " + limit + " bytes (" + limitSetting + ")."
          + " Nothing of the write was stored. Raise the limit or store smaller values.");
    }
  }

  private void backPressure(Runnable catchUp) {
    long slack = limit / SLACK_DIVISOR;
    if (overshoot.getAsLong() <= slack) {
      return;
    }
    catchUp.run();
    long over = overshoot.getAsLong();
    if (over > slack) {
      metrics.deferred.increment();
      throw new RetryableHazelcastException("Map '" + mapName + "' has " + over
          + " bytes over its per-member limit of " + limit + " bytes to free on this member"
          + " while eviction catches up on other partition threads; the write is retried.");
    }
  }
}
