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
 * <p>Only the partition thread of the owning record store changes the estimate; any thread
 * reads it (volatile), as in the built-in estimator.
 */
public final class GcAwareEntryCostEstimator implements EntryCostEstimator<Data, Record> {
  private final GcFootprintModel model;
  private final int entryOverhead;
  private final long heapDataObject;
  private volatile long estimate;

  public GcAwareEntryCostEstimator(GcFootprintModel model, int entryOverhead) {
    this.model = model;
    this.entryOverhead = entryOverhead;
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

  /** Cost of the record and its value. */
  public long recordCost(Record record) {
    Object value = record.getValue();
    long valueHeap = value instanceof Data ? ((Data) value).getHeapCost() : 0;
    long shell = Math.max(0, record.getCost() - valueHeap);
    return model.footprint(shell) + (value instanceof Data ? dataCost((Data) value) : 0);
  }

  public int entryOverhead() {
    return entryOverhead;
  }

  public GcFootprintModel model() {
    return model;
  }

  @Override
  public long getEstimate() {
    return estimate;
  }

  @Override
  @SuppressWarnings("NonAtomicOperationOnVolatileField")
  public void adjustEstimateBy(long adjustment) {
    estimate += adjustment;
  }

  @Override
  public long calculateValueCost(Record record) {
    return recordCost(record);
  }

  @Override
  public long calculateEntryCost(Data key, Record record) {
    return entryOverhead + dataCost(key) + recordCost(record);
  }

  @Override
  public void reset() {
    estimate = 0;
  }
}
