package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.impl.HeapData;
import dev.forkset.hazelcast.chunked.ChunkSize;
import dev.forkset.hazelcast.chunked.ChunkedData;
import org.junit.Test;

/**
 * The estimator costs a value in the layout the member stores it in, from the same
 * {@link ChunkSize} that chunks it: a stored ChunkedData, and a value about to be admitted whose
 * size is chunked, at {@link ChunkSize#modelledCost}; keys and small values as one HeapData.
 */
public class ChunkedValueCostTest {
  private static final long MB = 1 << 20;
  private final GcFootprintModel g1 = GcFootprintModel.g1(4 * MB);
  private final ChunkSize chunking = ChunkSize.of(g1);

  private static Data heapData(int totalSize) {
    byte[] payload = new byte[totalSize];
    payload[7] = -2; // type: byte array
    return new HeapData(payload);
  }

  @Test
  public void fiveMegabyteValue_onFourMegabyteRegions_costsItsChunksNotTwoRegions() {
    GcAwareEntryCostEstimator chunked =
        new GcAwareEntryCostEstimator(g1, 72, false, null, chunking);
    GcAwareEntryCostEstimator whole = new GcAwareEntryCostEstimator(g1, 72);
    Data arrived = heapData((int) (5 * MB) + 8);
    Data stored = chunking.storedCopy(arrived);
    assertTrue(stored instanceof ChunkedData);

    long modelled = chunking.modelledCost(arrived.totalSize());
    assertEquals(modelled, chunked.valueCost(stored));
    // Admission asks before the copy exists: the same cost.
    assertEquals(modelled, chunked.valueCost(arrived));
    assertEquals(modelled, chunked.dataCost(stored));
    assertTrue(modelled < 5 * MB + 64 * 1024);
    // Without chunking: two whole regions, as before.
    assertEquals(8 * MB, whole.valueCost(arrived), 64);
    // A key stays one array whatever its size.
    assertEquals(whole.dataCost(arrived), chunked.dataCost(arrived));
  }

  @Test
  public void smallValue_costsOneHeapData() {
    GcAwareEntryCostEstimator chunked =
        new GcAwareEntryCostEstimator(g1, 72, false, null, chunking);
    GcAwareEntryCostEstimator whole = new GcAwareEntryCostEstimator(g1, 72);
    Data small = heapData(1000);
    assertEquals(whole.valueCost(small), chunked.valueCost(small));
    assertEquals(chunking.heapDataCost(1000), chunked.valueCost(small));
  }
}
