package dev.forkset.hazelcast.eviction;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * One map's modelled cost on this member, kept current as entries come and go, and the bytes
 * partition threads are evicting from it right now.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>{@link #used()} is the sum of the estimates of the map's record stores on this member
 *       (primary and backup), the figure the built-in {@code EvictionChecker} computes by
 *       visiting every partition on every put. Here each record store's
 *       {@link GcAwareEntryCostEstimator} adds its own changes as it makes them, and gives its
 *       whole estimate back when its storage is cleared (map clear or destroy, a partition that
 *       migrated away, member shutdown), so reading the sum costs the same for 271 partitions as
 *       for one. A {@link LongAdder}: every partition thread writes it on every put.</li>
 *   <li>{@link #reserve} makes the partition threads that evict at the same time share one
 *       overshoot instead of each freeing all of it: before it evicts an entry a thread reserves
 *       the entry's cost, and it may do so only while the map, less what the others are already
 *       evicting, is above the target. The reservations are read before the sum, so a thread
 *       that sees an eviction's release also sees the eviction: at worst it stops early, and the
 *       next operation continues. Together the threads free the overshoot plus at most one
 *       entry.</li>
 *   <li>A record store whose estimator is not the map's own (an OBJECT map's, or one a test put
 *       in place with {@code DefaultRecordStore#setSizeEstimator}) adds nothing here. The evictor
 *       then switches the footprint to {@link #measureBy measuring} the record stores' sum on
 *       every read, as the built-in checker does, and the figure stays right; it switches back
 *       once every estimator feeds the total again.</li>
 * </ol>
 */
final class MapFootprint {
  private final LongAdder used = new LongAdder();
  private final AtomicLong evicting = new AtomicLong();
  private volatile LongSupplier measure;

  /** Called by the map's estimators with every change of their estimate. */
  void add(long delta) {
    used.add(delta);
  }

  /** The map's modelled cost on this member, in bytes. */
  long used() {
    LongSupplier m = measure;
    return m == null ? used.sum() : m.getAsLong();
  }

  /**
   * From now on, {@link #used()} is what {@code sum} returns (see the class comment); true for
   * the call that made the switch.
   */
  synchronized boolean measureBy(LongSupplier sum) {
    if (measure != null) {
      return false;
    }
    measure = sum;
    return true;
  }

  /**
   * {@link #used()} is the running total again: every record store's estimator feeds it (see
   * {@code SizeProportionalEvictor}, note 9); true for the call that made the switch.
   */
  synchronized boolean stopMeasuring() {
    if (measure == null) {
      return false;
    }
    measure = null;
    return true;
  }

  boolean isMeasured() {
    return measure != null;
  }

  /** True while the map, less what is being evicted now, is above {@code target}. */
  boolean above(long target) {
    long inFlight = evicting.get();
    return used() - inFlight > target;
  }

  /**
   * Reserves {@code cost} bytes of eviction if the map, less what other threads are evicting
   * now, is still above {@code target}; every successful call is followed by
   * {@link #release(long)} once the entry is gone.
   */
  boolean reserve(long cost, long target) {
    for (;;) {
      long inFlight = evicting.get();
      if (used() - inFlight <= target) {
        return false;
      }
      if (evicting.compareAndSet(inFlight, inFlight + cost)) {
        return true;
      }
    }
  }

  void release(long cost) {
    evicting.addAndGet(-cost);
  }

  @Override
  public String toString() {
    return "MapFootprint{used=" + used() + ", evicting=" + evicting.get() + '}';
  }
}
