package dev.forkset.hbase21.jvm;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongSupplier;
import org.apache.hadoop.hbase.regionserver.HRegion;

/**
 * Times how long each write-lock acquisition of a region's update lock waited and how long the
 * lock was then held, the same way on the stock and the custom hbase-server jar: the region's
 * {@code updatesLock} is replaced, while the region is idle, by a lock of the same kind whose write
 * lock reads the clock around {@code lock()} and {@code unlock()}. Stock 2.1.2 has no metric for
 * this; a flush is the only thing that takes a primary region's write lock, so every record is
 * one flush (the empty-memstore path included).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>{@code HRegion.updatesLock} is a private final {@link ReentrantReadWriteLock}; a final
 *       instance field can be set through reflection on JDK 8. The replacement keeps the
 *       non-fair policy of the original, and its read lock is the JDK's own, so writers see no
 *       difference but the two clock reads per flush.</li>
 *   <li>Only the outermost acquisition is recorded (write hold count 1), so a re-entrant
 *       acquisition inside a flush does not split it in two.</li>
 *   <li>The memstore data size is read right after the lock is taken, before the snapshot
 *       empties the memstore: the size the flush snapshotted under the lock.</li>
 * </ol>
 */
public final class UpdatesLockProbe {
  /** One write-lock hold of one region. */
  public static final class Hold {
    public final String table;
    public final String region;
    public final long waitNanos;
    public final long holdNanos;
    public final long dataSize;
    public final long endMillis;

    Hold(String table, String region, long waitNanos, long holdNanos, long dataSize) {
      this.table = table;
      this.region = region;
      this.waitNanos = waitNanos;
      this.holdNanos = holdNanos;
      this.dataSize = dataSize;
      this.endMillis = System.currentTimeMillis();
    }
  }

  private static final ConcurrentLinkedQueue<Hold> HOLDS = new ConcurrentLinkedQueue<>();

  private UpdatesLockProbe() {}

  /** Replaces the update lock of an idle region (no writes in flight) by a timed one. */
  public static void install(HRegion region) throws ReflectiveOperationException {
    Field f = HRegion.class.getDeclaredField("updatesLock");
    f.setAccessible(true);
    Object current = f.get(region);
    if (current instanceof TimedUpdatesLock) {
      return;
    }
    ReentrantReadWriteLock old = (ReentrantReadWriteLock) current;
    if (old.isWriteLocked() || old.getReadLockCount() > 0 || old.hasQueuedThreads()) {
      throw new IllegalStateException("region " + region + " is not idle: " + old);
    }
    f.set(region, new TimedUpdatesLock(region.getRegionInfo().getTable().getNameAsString(),
        region.getRegionInfo().getEncodedName(), region::getMemStoreDataSize, old.isFair()));
  }

  /** True when the region's update lock is the timed one. */
  public static boolean installed(HRegion region) throws ReflectiveOperationException {
    Field f = HRegion.class.getDeclaredField("updatesLock");
    f.setAccessible(true);
    return f.get(region) instanceof TimedUpdatesLock;
  }

  /** Removes and returns the holds recorded so far for {@code table}, oldest first. */
  public static List<Hold> drain(String table) {
    List<Hold> out = new ArrayList<>();
    for (Iterator<Hold> it = HOLDS.iterator(); it.hasNext();) {
      Hold h = it.next();
      if (h.table.equals(table)) {
        out.add(h);
        it.remove();
      }
    }
    return out;
  }

  /** The timed lock. Serializable only in name: it is never serialized. */
  @SuppressWarnings("serial")
  static final class TimedUpdatesLock extends ReentrantReadWriteLock {
    private final TimedWriteLock timedWriteLock;

    /**
     * @param dataSize read right after the write lock is taken (the region's memstore data size)
     */
    TimedUpdatesLock(String table, String region, LongSupplier dataSize, boolean fair) {
      super(fair);
      this.timedWriteLock = new TimedWriteLock(this, table, region, dataSize);
    }

    @Override
    public WriteLock writeLock() {
      return timedWriteLock;
    }
  }

  @SuppressWarnings("serial")
  static final class TimedWriteLock extends ReentrantReadWriteLock.WriteLock {
    private final TimedUpdatesLock owner;
    private final LongSupplier memstoreDataSize;
    private final String table;
    private final String name;
    // Written and read only by the thread holding the write lock.
    private long acquiredAt;
    private long waited;
    private long dataSize;

    TimedWriteLock(TimedUpdatesLock owner, String table, String region,
        LongSupplier memstoreDataSize) {
      super(owner);
      this.owner = owner;
      this.memstoreDataSize = memstoreDataSize;
      this.table = table;
      this.name = region;
    }

    private void acquired(long askedAt) {
      if (owner.getWriteHoldCount() == 1) {
        acquiredAt = System.nanoTime();
        waited = acquiredAt - askedAt;
        dataSize = memstoreDataSize.getAsLong();
      }
    }

    @Override
    public void lock() {
      long t0 = System.nanoTime();
      super.lock();
      acquired(t0);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
      long t0 = System.nanoTime();
      super.lockInterruptibly();
      acquired(t0);
    }

    @Override
    public boolean tryLock() {
      long t0 = System.nanoTime();
      boolean ok = super.tryLock();
      if (ok) {
        acquired(t0);
      }
      return ok;
    }

    @Override
    public boolean tryLock(long timeout, TimeUnit unit) throws InterruptedException {
      long t0 = System.nanoTime();
      boolean ok = super.tryLock(timeout, unit);
      if (ok) {
        acquired(t0);
      }
      return ok;
    }

    @Override
    public void unlock() {
      if (owner.getWriteHoldCount() == 1) {
        long held = System.nanoTime() - acquiredAt;
        HOLDS.add(new Hold(table, name, waited, held, dataSize));
      }
      super.unlock();
    }
  }
}
