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
 * <p>Implementation note: Hazelcast keeps access and creation times in whole seconds, so entries
 * written in the same second tie under LRU and LFU. Among those the smaller is evicted first, so
 * that a large entry written after many small ones in the same second is not taken for the
 * oldest. Only LRU and LFU get that tie-break: under RANDOM every candidate ties, and ordering
 * them by size would turn RANDOM into smallest-first; a custom comparator is taken as it is. The
 * sort is stable, so candidates that still tie keep the random order they were sampled in.
 */
final class CandidateOrder {
  private CandidateOrder() {
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static Comparator<Candidate> of(EvictionConfig evictionConfig, EvictionPolicyComparator policy) {
    boolean bySizeOnTies = evictionConfig.getComparator() == null
        && evictionConfig.getComparatorClassName() == null
        && (evictionConfig.getEvictionPolicy() == EvictionPolicy.LRU
            || evictionConfig.getEvictionPolicy() == EvictionPolicy.LFU);
    return (a, b) -> {
      if (a.expired != b.expired) {
        return a.expired ? -1 : 1;
      }
      int byPolicy = policy.compare((EntryView) a.view, (EntryView) b.view);
      if (byPolicy != 0 || !bySizeOnTies) {
        return byPolicy;
      }
      return Long.compare(a.recordCost, b.recordCost);
    };
  }
}
