package dev.forkset.hazelcast.eviction;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The best candidates of one sample, handed out best first and refilled only when used up: the
 * eviction pool of Redis ({@code evict.c}, {@code evictionPoolPopulate}) without its resampling
 * on every eviction, so an eviction costs {@code sample / capacity} sampled entries amortized.
 * Each pool belongs to one partition thread ({@link PartitionThreads}).
 */
final class EvictionPool<C> {
  private final int capacity;
  private final List<C> candidates;
  private int next;

  EvictionPool(int capacity) {
    this.capacity = capacity;
    this.candidates = new ArrayList<>(capacity);
  }

  /** The next candidate, or null when the pool is used up. */
  C poll() {
    if (next >= candidates.size()) {
      return null;
    }
    C c = candidates.get(next);
    candidates.set(next++, null);
    return c;
  }

  boolean isUsedUp() {
    return next >= candidates.size();
  }

  /** Replaces the pool by the best {@code capacity} of {@code sample} under {@code order}. */
  void refill(List<C> sample, Comparator<? super C> order) {
    refill(sample, order, capacity);
  }

  /** As {@link #refill(List, Comparator)}, keeping {@code keep} candidates this time. */
  void refill(List<C> sample, Comparator<? super C> order, int keep) {
    candidates.clear();
    next = 0;
    sample.sort(order);
    for (int i = 0; i < sample.size() && i < keep; i++) {
      candidates.add(sample.get(i));
    }
  }

  int capacity() {
    return capacity;
  }

  int remaining() {
    return candidates.size() - next;
  }
}
