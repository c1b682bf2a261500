package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.EvictionConfig;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.core.EntryView;
import com.hazelcast.spi.eviction.EvictionPolicyComparator;
import java.util.Comparator;

/**
 * The order in which a refill ranks its sample: expired entries first, then the map's eviction
 * policy.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Hazelcast keeps access and creation times in whole seconds, so entries written in the
 *       same second tie under LRU and LFU. Among those the smaller is evicted first, so that a
 *       large entry written after many small ones in the same second is not taken for the
 *       oldest. Only LRU and LFU get that tie-break: under RANDOM every candidate ties, and
 *       ordering them by size would turn RANDOM into smallest-first; a custom comparator is
 *       taken as it is. The sort is stable, so candidates that still tie keep the random order
 *       they were sampled in.</li>
 *   <li>For the built-in LRU and LFU the policy's keys are read once per candidate
 *       ({@link #rank}) and compared as numbers, as {@code LRUEvictionPolicyComparator} (the
 *       later of creation and last access) and {@code LFUEvictionPolicyComparator} (hits, then
 *       creation) compare them; sorting a sample through the views read them again on every
 *       comparison.</li>
 * </ol>
 */
final class CandidateOrder implements Comparator<Candidate> {
  private enum Kind {
    LRU, LFU, OTHER
  }

  private final Kind kind;
  @SuppressWarnings("rawtypes")
  private final EvictionPolicyComparator policy;

  private CandidateOrder(Kind kind, EvictionPolicyComparator<?, ?, ?> policy) {
    this.kind = kind;
    this.policy = policy;
  }

  static CandidateOrder of(EvictionConfig evictionConfig, EvictionPolicyComparator<?, ?, ?> policy) {
    boolean builtIn = evictionConfig.getComparator() == null
        && evictionConfig.getComparatorClassName() == null;
    Kind kind = !builtIn ? Kind.OTHER
        : evictionConfig.getEvictionPolicy() == EvictionPolicy.LRU ? Kind.LRU
        : evictionConfig.getEvictionPolicy() == EvictionPolicy.LFU ? Kind.LFU : Kind.OTHER;
    return new CandidateOrder(kind, policy);
  }

  /** Reads the policy's keys of a sampled candidate, before the sample is sorted. */
  void rank(Candidate c) {
    EntryView<?, ?> view = c.view;
    switch (kind) {
      case LRU:
        c.rank = Math.max(view.getCreationTime(), view.getLastAccessTime());
        break;
      case LFU:
        c.rank = view.getHits();
        c.rank2 = view.getCreationTime();
        break;
      default:
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public int compare(Candidate a, Candidate b) {
    if (a.expired != b.expired) {
      return a.expired ? -1 : 1;
    }
    int byPolicy;
    if (kind == Kind.OTHER) {
      return policy.compare(a.view, b.view);
    }
    byPolicy = Long.compare(a.rank, b.rank);
    if (byPolicy == 0) {
      byPolicy = Long.compare(a.rank2, b.rank2);
    }
    return byPolicy != 0 ? byPolicy : Long.compare(a.recordCost, b.recordCost);
  }
}
