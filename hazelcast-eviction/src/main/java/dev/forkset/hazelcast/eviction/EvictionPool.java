package dev.forkset.hazelcast.eviction;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The best {@code capacity} candidates of one sample, handed out best first. It is refilled
 * only when used up (the Redis eviction pool, without Redis's per-eviction resampling), so
 * each eviction costs {@code sampleCount / capacity} sampled entries amortized.
 * Confined to one thread.
 */
final class EvictionPool<C> {
  private final int capacity;
  private final List<C> candidates;
  private int next;
  private Object domain;

  EvictionPool(int capacity) {
    this.capacity = capacity;
    this.candidates = new ArrayList<>(capacity);
  }

  /** The next candidate, or null when the pool is used up. */
  C poll() {
    return next < candidates.size() ? candidates.get(next++) : null;
  }

  boolean isUsedUp() {
    return next >= candidates.size();
  }

  /** Replaces the pool by the best {@code capacity} of {@code sample} under {@code order}. */
  void refill(List<C> sample, Comparator<? super C> order, Object domain) {
    refill(sample, order, domain, capacity);
  }

  /** As {@link #refill(List, Comparator, Object)}, keeping {@code keep} candidates this time. */
  void refill(List<C> sample, Comparator<? super C> order, Object domain, int keep) {
    candidates.clear();
    next = 0;
    this.domain = domain;
    sample.sort(order);
    for (int i = 0; i < sample.size() && i < keep; i++) {
      candidates.add(sample.get(i));
    }
  }

  /** Drops the remaining candidates if they were drawn from another domain. */
  void retarget(Object domain) {
    if (this.domain == null || !this.domain.equals(domain)) {
      candidates.clear();
      next = 0;
      this.domain = domain;
    }
  }

  int remaining() {
    return candidates.size() - next;
  }
}
