package org.apache.hadoop.hbase.regionserver;

import java.util.Comparator;
import java.util.Iterator;
import java.util.SortedSet;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;

/**
 * A {@link MutableSegment} that keeps an exact count of the cells in its set: one more for each
 * add that inserted a new key (the set replaces an equal cell, and then the count stays), one
 * less for each cell that {@code upsert} removes. {@link #getCellsCount()} reads the counter, not
 * the skip list.
 */
public class CellCountingMutableSegment extends MutableSegment {
  /** Cells in the set; updated by concurrent writers, read once the update lock is held. */
  private final LongAdder cells = new LongAdder();

  CellCountingMutableSegment(CellSet cellSet, CellComparator comparator,
      MemStoreLAB memStoreLAB) {
    // No MemStoreSizing: the stock segment this one replaces has already been accounted for.
    super(cellSet, comparator, memStoreLAB, null);
  }

  @Override
  protected void updateMetaInfo(Cell cellToAdd, boolean succ, boolean mslabUsed,
      MemStoreSizing memstoreSizing) {
    super.updateMetaInfo(cellToAdd, succ, mslabUsed, memstoreSizing);
    if (succ) {
      cells.increment();
    }
  }

  /** upsert removes older versions through this view's iterator; each removal is counted. */
  @Override
  protected SortedSet<Cell> tailSet(Cell firstCell) {
    return new CountingView(super.tailSet(firstCell));
  }

  @Override
  public int getCellsCount() {
    return cells.intValue();
  }

  /** A sorted-set view whose iterator decrements the cell count on {@code remove()}. */
  private final class CountingView extends java.util.AbstractSet<Cell>
      implements SortedSet<Cell> {
    private final SortedSet<Cell> view;

    CountingView(SortedSet<Cell> view) {
      this.view = view;
    }

    @Override
    public Iterator<Cell> iterator() {
      final Iterator<Cell> it = view.iterator();
      return new Iterator<Cell>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public Cell next() {
          return it.next();
        }

        @Override
        public void remove() {
          it.remove();
          cells.decrement();
        }
      };
    }

    @Override
    public int size() {
      return view.size();
    }

    @Override
    public Comparator<? super Cell> comparator() {
      return view.comparator();
    }

    @Override
    public SortedSet<Cell> subSet(Cell fromElement, Cell toElement) {
      return new CountingView(view.subSet(fromElement, toElement));
    }

    @Override
    public SortedSet<Cell> headSet(Cell toElement) {
      return new CountingView(view.headSet(toElement));
    }

    @Override
    public SortedSet<Cell> tailSet(Cell fromElement) {
      return new CountingView(view.tailSet(fromElement));
    }

    @Override
    public Cell first() {
      return view.first();
    }

    @Override
    public Cell last() {
      return view.last();
    }
  }
}
