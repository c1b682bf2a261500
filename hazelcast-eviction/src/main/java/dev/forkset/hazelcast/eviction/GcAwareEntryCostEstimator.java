package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.impl.EntryCostEstimator;
import com.hazelcast.map.impl.record.Record;
import dev.forkset.hazelcast.chunked.ChunkSize;
import dev.forkset.hazelcast.chunked.ChunkedData;

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
 *   <li>The storage asks for an entry's cost before it adds or removes the entry, and for a
 *       value's cost around a value update, then adjusts the estimate by the answer. What is
 *       added (a positive adjustment) goes to the map's {@link OversizedEntries}, as an entry or,
 *       after a value's cost was asked, as a value whose key is not known; removals and the
 *       evictor's own questions mark nothing.</li>
 *   <li>The footprint and the oversized-entry marks belong to the map, not to one evictor: an
 *       evictor built for a config update ({@code MapContainer#initEvictor}) takes them over
 *       from the record stores' estimators, which keep feeding them; an estimator that fed none
 *       (made while the map had no eviction) is {@linkplain #bind bound} to them on its
 *       partition thread.</li>
 *   <li>A value the member stores in chunks ({@link ChunkSize}, through the provider's
 *       {@code storedValue}) costs its chunked layout ({@link ChunkSize#modelledCost}): a stored
 *       {@link ChunkedData}, and a value about to be stored (admission) whose size the member
 *       chunks, since every such value is stored chunked. The same {@link ChunkSize} chunks and
 *       costs, so chunking and cost never disagree about the collector. Keys are never
 *       chunked.</li>
 * </ol>
 */
public final class GcAwareEntryCostEstimator implements EntryCostEstimator<Data, Record> {
  private final GcFootprintModel model;
  private final int entryOverhead;
  private final boolean cachedValues;
  /** The map's running total and oversized-entry marks, or null (note 4). */
  private volatile MapFootprint footprint;
  private volatile OversizedEntries oversized;
  private final int partitionId;
  private final long heapDataObject;
  /** How this member stores values: the chunked layout's cost comes from it (note 5). */
  private final ChunkSize chunking;
  private volatile long estimate;
  /** The last cost asked was a value's (note 3); partition-thread confined. */
  private boolean valueAsked;

  public GcAwareEntryCostEstimator(GcFootprintModel model, int entryOverhead) {
    this(model, entryOverhead, false, null);
  }

  GcAwareEntryCostEstimator(GcFootprintModel model, int entryOverhead, boolean cachedValues,
      MapFootprint footprint) {
    this(model, entryOverhead, cachedValues, footprint, null, -1, ChunkSize.never());
  }

  GcAwareEntryCostEstimator(GcFootprintModel model, int entryOverhead, boolean cachedValues,
      MapFootprint footprint, ChunkSize chunking) {
    this(model, entryOverhead, cachedValues, footprint, null, -1, chunking);
  }

  /**
   * An estimator of the record store of partition {@code partitionId} of a map with the module's
   * evictor: {@code oversized} hears what is added there (note 3).
   */
  GcAwareEntryCostEstimator(GcFootprintModel model, int entryOverhead, boolean cachedValues,
      MapFootprint footprint, OversizedEntries oversized, int partitionId, ChunkSize chunking) {
    this.chunking = chunking;
    this.oversized = oversized;
    this.partitionId = partitionId;
    this.model = model;
    this.entryOverhead = entryOverhead;
    this.cachedValues = cachedValues;
    this.footprint = footprint;
    // HeapData: header + one reference to the payload array.
    this.heapDataObject = model.object(model.referenceSize());
  }

  /**
   * Cost of a serialized key or value as it is: its HeapData object and payload array, or a
   * chunked value's layout.
   */
  public long dataCost(Data data) {
    if (data == null) {
      return 0;
    }
    if (data instanceof ChunkedData && chunking.chunks(data.totalSize())) {
      return chunking.modelledCost(data.totalSize());
    }
    return heapDataObject + model.byteArray(data.totalSize());
  }

  /** Cost of a value as the member stores it: chunked if its size is chunked (note 5). */
  private long storedDataCost(Data value) {
    return chunking.chunks(value.totalSize()) ? chunking.modelledCost(value.totalSize())
        : dataCost(value);
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
    return storedDataCost(value) + (cachedValues ? model.byteArray(value.totalSize()) : 0);
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

  /**
   * From now on this estimator keeps {@code footprint} current and tells {@code oversized} what
   * it adds; its estimate moves from the footprint it fed, if any. Only on the partition thread
   * of its record store (note 2), for a store of partition {@code partitionId}.
   */
  synchronized void bind(MapFootprint footprint, OversizedEntries oversized) {
    MapFootprint was = this.footprint;
    if (was == footprint) {
      return;
    }
    long now = estimate;
    if (was != null) {
      was.add(-now);
    }
    this.oversized = oversized;
    this.footprint = footprint;
    footprint.add(now);
  }

  int partitionId() {
    return partitionId;
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
    OversizedEntries o = oversized;
    if (adjustment > 0 && o != null && partitionId >= 0) {
      // Marked before the total grows, so that no pass sees the entry's cost without its mark.
      // A value's entry holds at least the value and the entry's overhead (note 3).
      o.added(partitionId, valueAsked ? entryOverhead + adjustment : adjustment, valueAsked);
    }
    MapFootprint f = footprint;
    if (f != null) {
      f.add(adjustment);
    }
  }

  @Override
  public long calculateValueCost(Record record) {
    valueAsked = true;
    return recordCost(record);
  }

  @Override
  public long calculateEntryCost(Data key, Record record) {
    valueAsked = false;
    return entryCostQuietly(key, record);
  }

  /** {@link #calculateEntryCost} for a question that is not followed by an adjustment. */
  long entryCostQuietly(Data key, Record<?> record) {
    return entryOverhead + dataCost(key) + recordCost(record);
  }

  @Override
  public synchronized void reset() {
    // synchronized with bind: a split-brain merge resets record stores from its own thread
    long was = estimate;
    estimate = 0;
    MapFootprint f = footprint;
    if (f != null) {
      f.add(-was);
    }
  }
}
