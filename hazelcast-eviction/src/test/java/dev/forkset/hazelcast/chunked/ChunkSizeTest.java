package dev.forkset.hazelcast.chunked;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.impl.HeapData;
import dev.forkset.hazelcast.eviction.GcFootprintModel;
import org.junit.Test;

public class ChunkSizeTest {
  private static final int KB = 1024;
  private static final int MB = 1024 * KB;

  @Test
  public void of_g1_chunksWhatWouldBeHumongousInEighthsOfARegion() {
    ChunkSize fourMb = ChunkSize.of(GcFootprintModel.g1(4 * MB));
    assertEquals(512 * KB, fourMb.chunkSize());
    assertFalse(fourMb.chunks(2 * MB - 16));   // a 2 MB object: not humongous
    assertTrue(fourMb.chunks(2 * MB - 15));    // array header + payload > half a region
    assertEquals(128 * KB, ChunkSize.of(GcFootprintModel.g1(MB)).chunkSize());
    assertEquals(4 * MB, ChunkSize.of(GcFootprintModel.g1(32 * MB)).chunkSize());
  }

  @Test
  public void of_shenandoah_chunksWhatExceedsARegion() {
    ChunkSize size = ChunkSize.of(GcFootprintModel.shenandoah(4 * MB));
    assertEquals(MB, size.chunkSize());
    assertFalse(size.chunks(4 * MB - 16));
    assertTrue(size.chunks(4 * MB - 15));
  }

  @Test
  public void of_zgc_chunksWhatExceedsTheMediumLimitInSmallObjects() {
    ChunkSize heap256 = ChunkSize.of(GcFootprintModel.zgc(256L * MB, false)); // medium <= 1 MB
    assertEquals(64 * KB, heap256.chunkSize());
    assertFalse(heap256.chunks(MB - 16));
    assertTrue(heap256.chunks(MB - 15));
    ChunkSize heap4g = ChunkSize.of(GcFootprintModel.zgc(4096L * MB, true)); // medium <= 4 MB
    assertEquals(64 * KB, heap4g.chunkSize());
    assertFalse(heap4g.chunks(4 * MB - 16));
    // No medium pages in a 32 MB heap: above the 256 KB small-object limit is large.
    ChunkSize tiny = ChunkSize.of(GcFootprintModel.zgc(32L * MB, false));
    assertEquals(64 * KB, tiny.chunkSize());
    assertTrue(tiny.chunks(256 * KB));
  }

  @Test
  public void modelledCost_zgcChunks_countTheirShareOfAPackedSmallPage() {
    ChunkSize zgc = ChunkSize.of(GcFootprintModel.zgc(256L * MB, false));
    // 31 chunks of 64 KB + 16 B fill a 2 MB page: each costs 1/31 of it; 80 of them, 5 MB.
    long perChunk = (2L * MB + 30) / 31;
    long modelled = zgc.modelledCost(5 * MB);
    assertTrue(modelled >= 80 * perChunk && modelled < 80 * perChunk + 1024);
  }

  @Test
  public void of_parallelOrSerial_neverChunks() {
    assertFalse(ChunkSize.of(GcFootprintModel.flat(GcFootprintModel.Kind.PARALLEL)).chunks(1L << 30));
    assertFalse(ChunkSize.of(GcFootprintModel.flat(GcFootprintModel.Kind.SERIAL)).chunks(1L << 30));
    assertEquals(0, ChunkSize.never().chunkSize());
  }

  @Test
  public void of_conservativeModel_chunksAboveItsSmallLimit() {
    ChunkSize size = ChunkSize.of(GcFootprintModel.conservative());
    assertEquals(64 * KB, size.chunkSize());
    assertTrue(size.chunks(256 * KB));
  }

  @Test
  public void storedCopy_smallOrNullValue_isTheValueItself() {
    ChunkSize size = ChunkSize.of(GcFootprintModel.g1(4 * MB));
    Data small = new HeapData(new byte[2 * MB - 16]);
    assertSame(small, size.storedCopy(small));
    assertNull(size.storedCopy(null));
    Data large = new HeapData(new byte[5 * MB]);
    assertSame(large, ChunkSize.never().storedCopy(large));
  }

  @Test
  public void storedCopy_largeValue_isAnEqualChunkedCopyWithPiecesBelowHalfARegion() {
    ChunkSize size = ChunkSize.of(GcFootprintModel.g1(4 * MB));
    byte[] payload = new byte[5 * MB];
    payload[7] = 5;
    payload[5 * MB - 1] = 9;
    Data large = new HeapData(payload);
    Data stored = size.storedCopy(large);
    assertTrue(stored instanceof ChunkedData);
    assertEquals(large, stored);
    assertEquals(stored, large);
    assertEquals(large.hashCode(), stored.hashCode());
    ChunkedData chunked = (ChunkedData) stored;
    assertEquals(10, chunked.chunkCount());
    for (int i = 0; i < chunked.chunkCount(); i++) {
      assertTrue(16 + chunked.chunkLength(i) <= 2 * MB); // never humongous on 4 MB regions
    }
  }

  /**
   * Seed scenario 1 in the model: -Xmx256m, G1 4 MB regions, USED_HEAP_SIZE 150 MB, 5 MB values.
   * As one array a value costs two regions (18 fit, what the module holds today); chunked it
   * costs its size plus 11 array headers (29 fit).
   */
  @Test
  public void modelledCost_seedScenarioOne_fitsTwentyNineInsteadOfEighteen() {
    ChunkSize size = ChunkSize.of(GcFootprintModel.g1(4 * MB));
    long limit = 150L * MB;
    long whole = size.heapDataCost(5 * MB);
    long chunked = size.modelledCost(5 * MB);
    assertEquals(8L * MB + 16, whole);
    assertTrue("chunked " + chunked, chunked >= 5L * MB && chunked < 5L * MB + 1024);
    assertEquals(18, limit / whole);
    assertEquals(29, limit / chunked);
  }

  @Test
  public void modelledCost_justOverHalfARegion_isAboutHalfTheWholeArraysCost() {
    long value = 2 * MB + KB;
    ChunkSize g1 = ChunkSize.of(GcFootprintModel.g1(4 * MB));
    assertEquals(4L * MB + 16, g1.heapDataCost(value));
    assertTrue(g1.heapDataCost(value) / (double) g1.modelledCost(value) > 1.99);
    ChunkSize zgc = ChunkSize.of(GcFootprintModel.zgc(256L * MB, false));
    assertTrue(zgc.heapDataCost(value) >= 4L * MB && zgc.heapDataCost(value) < 4L * MB + 64);
    // 64 KB chunks pack 31 to a 2 MB page: 3% over the bytes.
    assertTrue(zgc.heapDataCost(value) / (double) zgc.modelledCost(value) > 1.9);
  }

  @Test
  public void modelledCost_smallValue_isTheHeapDataCost() {
    ChunkSize g1 = ChunkSize.of(GcFootprintModel.g1(4 * MB));
    assertEquals(g1.heapDataCost(10_000), g1.modelledCost(10_000));
  }

  @Test
  public void modelledCost_countsThePiecesStoredCopyMakes() {
    GcFootprintModel model = GcFootprintModel.g1(MB);
    ChunkSize size = ChunkSize.of(model);
    for (int total : new int[] {512 * KB, 5 * 128 * KB, 5 * 128 * KB + 1, 7 * MB + 5}) {
      ChunkedData chunked = (ChunkedData) size.storedCopy(new HeapData(new byte[total]));
      long pieces = 0;
      for (int i = 0; i < chunked.chunkCount(); i++) {
        pieces += model.byteArray(chunked.chunkLength(i));
      }
      long overhead = model.object(model.referenceSize() + 8)
          + model.footprint(model.arrayHeader() + (long) chunked.chunkCount() * model.referenceSize());
      assertEquals("total " + total, pieces + overhead, size.modelledCost(total));
    }
  }
}
