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
 * <p>The chunk size is the largest power of two at most half of the largest array the model does
 * not round: G1 region/8 (512 KB on 4 MB regions), Shenandoah region/4, ZGC a quarter of the
 * medium limit (256 KB at a 256 MB heap, 1 MB from 1 GB on), 64 KB with no medium pages. A power
 * of two keeps the hash blocks and header ints inside one chunk ({@link ChunkedData}); half
 * rather than all of the threshold bounds what a chunk leaves unused at the end of an allocation
 * region when it does not fit there (at most an eighth of a G1 region instead of a half).
 */
public final class ChunkSize {
  private static final ChunkSize NEVER = new ChunkSize(null, Integer.MAX_VALUE, 0);

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
    int chunk = (int) Math.min(1 << 30, Long.highestOneBit(largestWhole) / 2);
    if (chunk < ChunkedData.MIN_CHUNK_SIZE) {
      return NEVER;
    }
    return new ChunkSize(model, largestWhole, chunk);
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
   * docs/hazelcast-eviction.md); nothing calls it on a live path yet.
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
    return object + refs + full * m.byteArray(chunkSize) + (last > 0 ? m.byteArray(last) : 0);
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
