package org.apache.hadoop.hbase.regionserver;

/**
 * The snapshot segment of {@link CellCountingMemStore}: a {@link CSLMImmutableSegment} over the
 * active segment's cell set that takes the active segment's counter value as its cell count, so
 * {@link MemStoreSnapshot} never calls {@code size()} on the skip list.
 */
public class CellCountingImmutableSegment extends CSLMImmutableSegment {
  /** Cells in the segment, fixed when the segment was made (it is immutable). */
  private final int cellsCount;

  CellCountingImmutableSegment(CellCountingMutableSegment active, MemStoreSizing memstoreSizing) {
    super(active, memstoreSizing);
    this.cellsCount = active.getCellsCount();
  }

  @Override
  public int getCellsCount() {
    return cellsCount;
  }
}
