package dev.forkset.hazelcast.chunked;

import com.hazelcast.internal.serialization.Data;
import dev.forkset.hazelcast.eviction.GcFootprintModel;

/**
 * When a stored value is chunked and how large its pieces are, derived from the member's
 * {@link GcFootprintModel} (the one the entry cost estimator uses, {@code
 * GcAwareEvictionProvider#model()}), so chunking and the cost model share one notion of the
 * collector.
 *
 * <p>A value is chunked when its payload as one {@code byte[]} would be rounded beyond alignment
 * ({@link GcFootprintModel#roundingThreshold()}: G1 above half a region, Shenandoah above a region,
 * ZGC above its medium-object limit, or its small-object limit where the heap has no medium
 * pages, the conservative model above 256 KB). Parallel and Serial round nothing: no chunking.
 * Smaller values stay the {@code HeapData} they arrived as, at no cost.
 *
 * <p>The chunk size, a power of two (the hash blocks and header ints then stay inside one chunk,
 * {@link ChunkedData}):
 * <ul>
 *   <li>G1, Shenandoah, conservative: the largest power of two at most half of the largest array
 *       the model does not round: G1 region/8 (512 KB on 4 MB regions), Shenandoah region/4.
 *       Half rather than all of the threshold bounds what a chunk leaves unused at the end of an
 *       allocation region when it does not fit there. Measured (ChunkedValuesHeapTest, G1 4 MB
 *       regions, -Xmx256m): 5 MB values occupy 5243377 B each after a full GC, modelled 5243120 B;
 *       as one array 8388664 B.</li>
 *   <li>ZGC: 64 KB, a quarter of the 256 KB small-object limit, whatever the medium limit:
 *       medium objects fill their 8 MB+ pages worse than small ones fill 2 MB pages (5 MB values
 *       at -Xmx256m, heap per value after a full GC: 256 KB chunks 5872025 B, 128 KB 5662310 B,
 *       64 KB 5347737 B; pages under 75% live are all ZGC compacts). Each chunk is modelled as its
 *       share of a small page packed with chunks ({@link #modelledCost}), not with the 1.2 x
 *       page-fill slack the model gives single small values among the garbage of puts.</li>
 * </ul>
 */
public final class ChunkSize {
  private static final ChunkSize NEVER = new ChunkSize(null, Integer.MAX_VALUE, 0);
  private static final int ZGC_CHUNK = 64 * 1024;
  private static final long ZGC_SMALL_PAGE = 2L * 1024 * 1024;

  private final GcFootprintModel model;
  private final long largestWhole;
  private final int chunkSize;

  private ChunkSize(GcFootprintModel model, long largestWhole, int chunkSize) {
    this.model = model;
    this.largestWhole = largestWhole;
    this.chunkSize = chunkSize;
  }

  /** The chunking for a member modelled by {@code model}. */
  public static ChunkSize of(GcFootprintModel model) {
    long threshold = model.roundingThreshold();
    if (threshold <= 0) {
      return NEVER;
    }
    // The largest object the model only aligns, less the array header: the largest whole payload.
    long largestWhole = threshold - 1 - model.arrayHeader();
    int chunk = zgc(model) ? ZGC_CHUNK
        : (int) Math.min(1 << 30, Long.highestOneBit(largestWhole) / 2);
    if (chunk < ChunkedData.MIN_CHUNK_SIZE) {
      return NEVER;
    }
    return new ChunkSize(model, largestWhole, chunk);
  }

  /**
   * Chunks every payload above {@code chunkSize} bytes into pieces of {@code chunkSize} (a power
   * of two, at least {@link ChunkedData#MIN_CHUNK_SIZE}), costed through {@code model}: for tests
   * that want chunks on every path, small values included.
   */
  public static ChunkSize fixed(GcFootprintModel model, int chunkSize) {
    if (chunkSize < ChunkedData.MIN_CHUNK_SIZE || Integer.bitCount(chunkSize) != 1) {
      throw new IllegalArgumentException("chunk size " + chunkSize + " is not a power of two >= "
          + ChunkedData.MIN_CHUNK_SIZE);
    }
    return new ChunkSize(model, chunkSize, chunkSize);
  }

  /** Never chunks (Parallel, Serial, or chunking off). */
  public static ChunkSize never() {
    return NEVER;
  }

  /** The size of every piece but the last, or 0 if nothing is chunked. */
  public int chunkSize() {
    return chunkSize;
  }

  /** The largest payload stored as one array; larger ones are chunked. */
  public long largestWhole() {
    return largestWhole;
  }

  /** Whether a payload of {@code totalSize} bytes is stored in chunks. */
  public boolean chunks(long totalSize) {
    return chunkSize > 0 && totalSize > largestWhole;
  }

  /**
   * The copy to store for {@code value}: the value itself if it is small (or null), else a chunked
   * copy. This is the one function the record store's value seam is to call (see the design in
   * docs/hazelcast-eviction.md): {@code GcAwareEvictionProvider#storedValue}.
   */
  public Data storedCopy(Data value) {
    if (value == null || !chunks(value.totalSize())) {
      return value;
    }
    return ChunkedData.copyOf(value, chunkSize);
  }

  /**
   * The heap the model says a value of {@code totalSize} payload bytes occupies as stored: one
   * HeapData and its array, or a ChunkedData (object, array of chunk references, chunks). Same
   * terms as the estimator's {@code dataCost} for a HeapData, so the two differ only by layout.
   */
  public long modelledCost(long totalSize) {
    GcFootprintModel m = model;
    if (!chunks(totalSize)) {
      return heapDataCost(totalSize);
    }
    long full = totalSize / chunkSize;
    long last = totalSize % chunkSize;
    long pieces = full + (last > 0 ? 1 : 0);
    // ChunkedData: a reference to the chunks and two ints.
    long object = m.object(m.referenceSize() + 2L * Integer.BYTES);
    long refs = m.footprint(m.arrayHeader() + pieces * m.referenceSize());
    return object + refs + full * pieceCost(chunkSize) + (last > 0 ? pieceCost(last) : 0);
  }

  // A chunk's heap: its array through the model, or on ZGC its share of a small page filled with
  // chunks (all chunks of a value are allocated together and live as long as each other).
  private long pieceCost(long length) {
    if (!zgc(model)) {
      return model.byteArray(length);
    }
    long object = alignUp(model.arrayHeader() + length, model.alignment());
    long perPage = ZGC_SMALL_PAGE / object;
    return (ZGC_SMALL_PAGE + perPage - 1) / perPage;
  }

  private static long alignUp(long bytes, long to) {
    return (bytes + to - 1) / to * to;
  }

  private static boolean zgc(GcFootprintModel model) {
    return model.kind() == GcFootprintModel.Kind.ZGC
        || model.kind() == GcFootprintModel.Kind.ZGC_GENERATIONAL;
  }

  /** The modelled heap of the same payload as one HeapData (what stock stores). */
  public long heapDataCost(long totalSize) {
    GcFootprintModel m = model;
    if (m == null) {
      throw new IllegalStateException("no footprint model: chunking is off");
    }
    return m.object(m.referenceSize()) + m.byteArray(totalSize);
  }

  @Override
  public String toString() {
    return chunkSize == 0 ? "no chunking" : "payloads > " + largestWhole + " B stored in chunks of "
        + chunkSize + " B";
  }
}
