package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.impl.EntryCostEstimator;
import com.hazelcast.map.impl.record.Record;

/**
 * Cost of BINARY-format entries as the heap really holds them: the key's and the value's
 * {@code HeapData} object and its {@code byte[]} payload, the record object and the hash-table
 * node, each sized by the {@link GcFootprintModel} of the running collector. A 5 MB value on
 * G1 with 4 MB regions costs 8 MB here, where the built-in estimator says 5 MB.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>A map that caches deserialized values ({@code cache-deserialized-values: ALWAYS}, or
 *       {@code INDEX_ONLY} with indexes configured) keeps a deserialized copy beside each value
 *       once a query or an index has read it. Such a map's entries count that copy from the
 *       put on, as a {@code byte[]} of the serialized size (exact for {@code byte[]} values, an
 *       estimate for objects): a cost that changed when a query ran would not be taken back in
 *       full when the entry goes. An index added at run time is not seen.</li>
 *   <li>Only the partition thread of the owning record store changes the estimate; any thread
 *       reads it (volatile), as in the built-in estimator. Every change also goes to the map's
 *       {@link MapFootprint} (when the map has the module's evictor), and {@link #reset} gives
 *       the whole estimate back, so the footprint stays the sum of the record stores' estimates
 *       through clear, destroy and migration.</li>
 *   <li>The storage asks for an entry's cost when it adds or removes the entry, and for a value's
 *       cost around a value update. An answer above the map's limit (half of it for a value,
 *       whose key is not known there) tells the evictor's {@link OversizedEntries} that the
 *       record store may hold an oversized entry; a removal's answer is a false alarm that costs
 *       one check of the partition.</li>
 *   <li>The footprint and the oversized-entry marks belong to the map, not to one evictor: an
 *       evictor built for a config update ({@code MapContainer#initEvictor}) takes them over
 *       from the record stores' estimators, which keep feeding them.</li>
 * </ol>
 */
public final class GcAwareEntryCostEstimator implements EntryCostEstimator<Data, Record> {
  private final GcFootprintModel model;
  private final int entryOverhead;
  private final boolean cachedValues;
  private final MapFootprint footprint;
  /** Entries costing more are oversized: {@link #oversized} hears of them (note 3). */
  private final long oversizedAbove;
  private final OversizedEntries oversized;
  private final int partitionId;
  private final long heapDataObject;
  private volatile long estimate;

  public GcAwareEntryCostEstimator(GcFootprintModel model, int entryOverhead) {
    this(model, entryOverhead, false, null);
  }

  GcAwareEntryCostEstimator(GcFootprintModel model, int entryOverhead, boolean cachedValues,
      MapFootprint footprint) {
    this(model, entryOverhead, cachedValues, footprint, Long.MAX_VALUE, null, -1);
  }

  /**
   * An estimator of the record store of partition {@code partitionId} of a map with the module's
   * evictor: {@code oversized} hears when an entry of more than {@code limit} may have been
   * stored there (note 3).
   */
  GcAwareEntryCostEstimator(GcFootprintModel model, int entryOverhead, boolean cachedValues,
      MapFootprint footprint, long limit, OversizedEntries oversized, int partitionId) {
    this.oversizedAbove = oversized == null ? Long.MAX_VALUE : limit;
    this.oversized = oversized;
    this.partitionId = partitionId;
    this.model = model;
    this.entryOverhead = entryOverhead;
    this.cachedValues = cachedValues;
    this.footprint = footprint;
    // HeapData: header + one reference to the payload array.
    this.heapDataObject = model.object(model.referenceSize());
  }

  /** Cost of a serialized key or value: its HeapData object and payload array. */
  public long dataCost(Data data) {
    if (data == null) {
      return 0;
    }
    return heapDataObject + model.byteArray(data.totalSize());
  }

  /** Cost of a value of {@code payloadBytes} serialized bytes. */
  public long dataCost(long payloadBytes) {
    return heapDataObject + model.byteArray(payloadBytes);
  }

  /** Cost of a value as stored: its serialized form and, if the map caches them, its copy. */
  public long valueCost(Data value) {
    if (value == null) {
      return 0;
    }
    return dataCost(value) + (cachedValues ? model.byteArray(value.totalSize()) : 0);
  }

  /** Cost of the record and its value. */
  public long recordCost(Record record) {
    Object value = record.getValue();
    long valueHeap = value instanceof Data ? ((Data) value).getHeapCost() : 0;
    long shell = Math.max(0, record.getCost() - valueHeap);
    return model.footprint(shell) + (value instanceof Data ? valueCost((Data) value) : 0);
  }

  /** Cost of a new entry of {@code key} and {@code value}, before its record exists. */
  public long entryCost(Data key, Data value) {
    return entryOverhead + dataCost(key) + valueCost(value);
  }

  public int entryOverhead() {
    return entryOverhead;
  }

  public GcFootprintModel model() {
    return model;
  }

  boolean countsCachedValues() {
    return cachedValues;
  }

  /** Whether this estimator keeps {@code footprint} current. */
  boolean feeds(MapFootprint footprint) {
    return this.footprint == footprint;
  }

  /** The footprint this estimator keeps current, or null. */
  MapFootprint footprint() {
    return footprint;
  }

  /** Where this estimator reports oversized entries, or null. */
  OversizedEntries oversized() {
    return oversized;
  }

  @Override
  public long getEstimate() {
    return estimate;
  }

  @Override
  @SuppressWarnings("NonAtomicOperationOnVolatileField")
  public void adjustEstimateBy(long adjustment) {
    estimate += adjustment;
    if (footprint != null) {
      footprint.add(adjustment);
    }
  }

  @Override
  public long calculateValueCost(Record record) {
    long cost = recordCost(record);
    // A value update: the key's cost is not known here, so half the limit stands in for it.
    if (entryOverhead + cost > oversizedAbove / 2) {
      oversized.mark(partitionId);
    }
    return cost;
  }

  @Override
  public long calculateEntryCost(Data key, Record record) {
    long cost = entryOverhead + dataCost(key) + recordCost(record);
    if (cost > oversizedAbove) {
      oversized.mark(partitionId);
    }
    return cost;
  }

  /** {@link #calculateEntryCost} without telling anyone of an oversized entry. */
  long entryCostQuietly(Data key, Record<?> record) {
    return entryOverhead + dataCost(key) + recordCost(record);
  }

  @Override
  public void reset() {
    long was = estimate;
    estimate = 0;
    if (footprint != null) {
      footprint.add(-was);
    }
  }
}
