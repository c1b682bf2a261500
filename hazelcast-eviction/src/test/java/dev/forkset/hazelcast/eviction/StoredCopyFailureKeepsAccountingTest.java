package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.fail;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.InternalSerializationService;
import com.hazelcast.internal.serialization.impl.DefaultSerializationServiceBuilder;
import com.hazelcast.map.impl.eviction.MapEvictionProvider;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.record.SimpleRecord;
import com.hazelcast.map.impl.recordstore.StorageImpl;
import dev.forkset.hazelcast.chunked.ChunkSize;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * A record's value set in place ({@code StorageImpl#updateRecordValue}: an update, and replica
 * sync or migration onto a replica that holds the key) asks the provider for the stored copy
 * ({@code MapEvictionProvider#storedValue}, patch 0006). That copy can fail (an
 * OutOfMemoryError while a chunked copy allocates its pieces): the record then keeps its old
 * value, and the estimate, and with it the map's footprint, must still be the cost of what the
 * storage holds, not that less the old value's cost (which every later removal would take off
 * again, so the footprint would stay low by it for good and eviction start that much late).
 */
public class StoredCopyFailureKeepsAccountingTest {
  private static final long MB = 1 << 20;
  private final GcFootprintModel g1 = GcFootprintModel.g1(4 * MB);
  private InternalSerializationService ss;
  private MapFootprint footprint;
  private GcAwareEntryCostEstimator estimator;
  private StorageImpl<Record> storage;
  private MapEvictionProvider provider;

  @Before
  public void setUp() {
    ss = new DefaultSerializationServiceBuilder().build();
    footprint = new MapFootprint();
    estimator = new GcAwareEntryCostEstimator(g1, 72, false, footprint, ChunkSize.of(g1));
    storage = new StorageImpl<>(InMemoryFormat.BINARY, null, ss);
    storage.setEntryCostEstimator(estimator);
    provider = mock(MapEvictionProvider.class);
    storage.setEvictionProvider(provider);
  }

  @After
  public void tearDown() {
    ss.dispose();
  }

  private Record<?> put(Object key, byte[] value) {
    Data k = ss.toData(key);
    Record<Data> record = new SimpleRecord<>(ss.toData(value));
    storage.put(k, record);
    return record;
  }

  /** What the storage holds, costed record by record. */
  private long costOfWhatIsStored(Object... keys) {
    long sum = 0;
    for (Object key : keys) {
      Data k = ss.toData(key);
      sum += estimator.entryCostQuietly(k, storage.get(k));
    }
    return sum;
  }

  @Test
  public void updateRecordValue_whenTheStoredCopyFails_keepsTheOldValueAndItsCost() {
    put("a", new byte[1000]);
    Record<?> b = put("b", new byte[3 * (int) MB]);
    Object old = b.getValue();
    long before = estimator.getEstimate();
    assertEquals(costOfWhatIsStored("a", "b"), before);
    assertEquals(before, footprint.used());

    when(provider.storedValue(any(Data.class)))
        .thenThrow(new OutOfMemoryError("injected: the chunked copy's pieces"));
    try {
      storage.updateRecordValue(ss.toData("b"), b, ss.toData(new byte[5 * (int) MB]));
      fail("the copy's failure was swallowed");
    } catch (OutOfMemoryError expected) {
      // the write fails: its caller (an operation, a replica sync) sees it
    }

    assertSame("the record keeps its value", old, b.getValue());
    assertEquals("the estimate is the cost of what is stored", costOfWhatIsStored("a", "b"),
        estimator.getEstimate());
    assertEquals("the map's footprint with it", before, footprint.used());

    // every later change starts from the true cost: removing everything leaves nothing
    storage.removeRecord(ss.toData("b"), (Record) b);
    storage.removeRecord(ss.toData("a"), storage.get(ss.toData("a")));
    assertEquals(0, estimator.getEstimate());
    assertEquals(0, footprint.used());
  }

  @Test
  public void updateRecordValue_whenTheStoredCopySucceeds_costsTheCopy() {
    Record<?> b = put("b", new byte[1000]);
    Data copy = ss.toData(new byte[2000]);
    when(provider.storedValue(any(Data.class))).thenReturn(copy);
    storage.updateRecordValue(ss.toData("b"), b, ss.toData(new byte[2000]));
    assertSame(copy, b.getValue());
    assertEquals(costOfWhatIsStored("b"), estimator.getEstimate());
    assertEquals(estimator.getEstimate(), footprint.used());
  }
}
