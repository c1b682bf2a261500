package org.apache.hadoop.hbase.regionserver;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.util.EnvironmentEdgeManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link DefaultMemStore} for HBase 2.0/2.1 whose snapshot knows its cell count without asking
 * the skip list. Stock 2.1.2 sizes a snapshot with {@code ConcurrentSkipListMap.size()}, which
 * walks every cell on JDK 8 while the region's update lock is held (the HBASE-21738 problem).
 * Here the active segment counts cells as they are added ({@link CellCountingMutableSegment})
 * and the snapshot segment carries that count ({@link CellCountingImmutableSegment}).
 *
 * <p>Enable with {@code hbase.regionserver.memstore.class} set to this class on a server jar whose
 * HStore honours that key for the default memstore (the hbase 2.1.2 fork series does). This class
 * is compiled against the HBase 2.1.2 jars (see the module pom): it lives in the HBase package
 * because the segment constructors and the cell set it reuses are package-private there.
 */
public class CellCountingMemStore extends DefaultMemStore {
  private static final Logger LOG = LoggerFactory.getLogger(CellCountingMemStore.class);

  /** Constructor used by tests; see {@link DefaultMemStore#DefaultMemStore()}. */
  public CellCountingMemStore() {
    super();
  }

  /** Constructor used by HStore (through reflection) and by tests. */
  public CellCountingMemStore(Configuration conf, CellComparator c) {
    super(conf, c);
  }

  /** Constructor used by HStore through reflection. */
  public CellCountingMemStore(Configuration conf, CellComparator c,
      RegionServicesForStores regionServices) {
    super(conf, c, regionServices);
  }

  /**
   * Lets the stock code make the new active segment (heap accounting, MSLAB, oldest-edit time),
   * then swaps in a counting segment over the same, still empty, cell set and MSLAB. The counting
   * segment's own size starts at the same overhead as the stock one's, so nothing is counted
   * twice.
   */
  @Override
  protected void resetActive() {
    super.resetActive();
    MutableSegment stock = this.active;
    this.active = new CellCountingMutableSegment(stock.getCellSet(), getComparator(),
        stock.getMemStoreLAB());
  }

  /**
   * Same steps as {@link DefaultMemStore#snapshot()}, except that the snapshot segment takes its
   * cell count from the counting active segment.
   */
  @Override
  public MemStoreSnapshot snapshot() {
    if (!this.snapshot.isEmpty()) {
      LOG.warn("Snapshot called again without clearing previous. "
          + "Doing nothing. Another ongoing flush or did we fail last attempt?");
    } else {
      this.snapshotId = EnvironmentEdgeManager.currentTime();
      if (!this.active.isEmpty()) {
        MemStoreSizing memstoreAccounting = new NonThreadSafeMemStoreSizing();
        ImmutableSegment immutableSegment = new CellCountingImmutableSegment(
            (CellCountingMutableSegment) this.active, memstoreAccounting);
        // regionServices can be null when testing
        if (regionServices != null) {
          regionServices.addMemStoreSize(memstoreAccounting.getDataSize(),
              memstoreAccounting.getHeapSize(), memstoreAccounting.getOffHeapSize());
        }
        this.snapshot = immutableSegment;
        resetActive();
      }
    }
    return new MemStoreSnapshot(this.snapshotId, this.snapshot);
  }
}
