package dev.forkset.hazelcast.eviction;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The one eviction loop of every policy: take the pool's next candidate, refill the pool when it
 * is used up, evict, until the goal is met or a cap is hit.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Caps: at most {@code maxEvictions} evictions and {@code maxNanos} per operation, and a
 *       refill count that follows from them; a capped operation leaves the rest to the next, so
 *       a partition thread never stalls on one put. The time cap applies once the loop has
 *       evicted one entry, so every over-limit write frees at least one entry however slowly its
 *       thread runs.</li>
 *   <li>A candidate that cannot be evicted (written again since it was sampled, locked, its
 *       partition migrating) is skipped. When {@value #IDLE_REFILLS} refills in a row yield no
 *       eviction the domain is treated as exhausted for this operation: entries that are locked
 *       stay locked for longer than a put should wait, and sampling them again until the time
 *       cap (100-200 ms per put before) helps nobody.</li>
 * </ol>
 */
final class EvictionLoop<C> {
  /** Refills that yield no eviction before the domain counts as exhausted for the operation. */
  static final int IDLE_REFILLS = 2;
  /** {@link Evict#evict} result: the candidate was not evicted. */
  static final long SKIPPED = -1;
  /** {@link Evict#evict} result: enough is being freed; end the loop. */
  static final long ENOUGH = -2;

  /** How a loop ended. */
  enum Outcome {
    /** The goal is met (or other threads are meeting it). */
    DONE,
    /** A cap was hit; the next operation continues. */
    CAPPED,
    /** The domain has nothing more that can be evicted now. */
    EXHAUSTED
  }

  /** Fills the pool from the domain; false when the domain holds nothing to sample. */
  interface Refill<C> {
    boolean refill(EvictionPool<C> pool);
  }

  /** Evicts a candidate: the bytes (or entries) freed, or {@link #SKIPPED} / {@link #ENOUGH}. */
  interface Evict<C> {
    long evict(C candidate);
  }

  private final int maxEvictions;
  private final long maxNanos;
  private final int maxRefills;
  private final LongSupplier nanoClock;

  EvictionLoop(int maxEvictions, long maxNanos, int poolSize, LongSupplier nanoClock) {
    this.maxEvictions = maxEvictions;
    this.maxNanos = maxNanos;
    this.maxRefills = maxEvictions / Math.max(1, poolSize) + 4;
    this.nanoClock = nanoClock;
  }

  /** Runs the loop; {@code unmet} tells whether the goal still needs evictions. */
  Outcome run(EvictionPool<C> pool, Refill<C> refill, Evict<C> evict, BooleanSupplier unmet) {
    long deadline = nanoClock.getAsLong() + maxNanos;
    int evictions = 0;
    int refills = 0;
    int idle = 0;
    while (unmet.getAsBoolean()) {
      // The time cap ends a loop only after its first eviction: a write adds at most one entry
      // to a count policy's partition, so a loop that evicts one keeps it at its limit even when
      // the partition thread was descheduled past the deadline (16 partition threads on 2 cores).
      if (evictions >= maxEvictions || refills > maxRefills
          || (evictions > 0 && nanoClock.getAsLong() > deadline)) {
        return Outcome.CAPPED;
      }
      C candidate = pool.poll();
      if (candidate == null) {
        if (idle >= IDLE_REFILLS || !refill.refill(pool)) {
          return Outcome.EXHAUSTED;
        }
        refills++;
        idle++;
        continue;
      }
      long freed = evict.evict(candidate);
      if (freed == ENOUGH) {
        return Outcome.DONE;
      }
      if (freed >= 0) {
        evictions++;
        idle = 0;
      }
    }
    return Outcome.DONE;
  }
}
