package dev.forkset.hazelcast.eviction;

import java.util.concurrent.atomic.AtomicBoolean;
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
 *       that sees an eviction's release also sees the eviction: at worst it stops early.
 *       Together the threads free the overshoot plus at most one entry.</li>
 *   <li>Stopping early is a doubt, not an answer: a thread that reads an eviction after its
 *       entry left the total but before its release counts it twice, and finds the map within
 *       the target while it is not. The evicting thread goes on only while its own pass wants
 *       to; once that pass ends (its own target met, or its partitions have nothing more to
 *       evict), nobody would free the rest until the next write. So every "not above" answered
 *       while evictions were in flight is remembered, and the pass that ends with none in
 *       flight {@link #settleDoubt takes} it and checks again on the exact total
 *       ({@code SizeProportionalEvictor}, note 10).</li>
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
  /** A "not above" was answered while evictions were in flight (note 3). */
  private final AtomicBoolean doubt = new AtomicBoolean();
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
    if (used() - inFlight > target) {
      return true;
    }
    doubtIfInFlight(inFlight);
    return false;
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
        doubtIfInFlight(inFlight);
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

  private void doubtIfInFlight(long inFlight) {
    if (inFlight != 0 && !doubt.get()) {
      doubt.set(true);
    }
  }

  /**
   * True, for one caller, when a "not above" answered while evictions were in flight may have
   * been wrong and no eviction is in flight now: the caller checks the map again (note 3). Every
   * pass that reserves calls this once it has released all it reserved, so the last of them to
   * end takes the doubt; a reservation made after that is checked by its own pass.
   */
  boolean settleDoubt() {
    // read first: every pass of a map at its limit ends here, and most leave no doubt
    return evicting.get() == 0 && doubt.get() && doubt.getAndSet(false);
  }

  @Override
  public String toString() {
    return "MapFootprint{used=" + used() + ", evicting=" + evicting.get() + '}';
  }
}
