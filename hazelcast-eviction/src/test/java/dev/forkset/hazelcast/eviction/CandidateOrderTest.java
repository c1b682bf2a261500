package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;

import com.hazelcast.config.EvictionConfig;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.internal.eviction.impl.comparator.LRUEvictionPolicyComparator;
import com.hazelcast.internal.eviction.impl.comparator.RandomEvictionPolicyComparator;
import com.hazelcast.internal.serialization.SerializationService;
import com.hazelcast.internal.serialization.impl.DefaultSerializationServiceBuilder;
import com.hazelcast.map.impl.record.SimpleRecord;
import com.hazelcast.map.impl.recordstore.LazyEvictableEntryView;
import com.hazelcast.map.impl.recordstore.expiry.ExpiryMetadata;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

public class CandidateOrderTest {
  private final SerializationService ss = new DefaultSerializationServiceBuilder().build();

  private Candidate candidate(int key, int valueBytes, long lastAccess, boolean expired) {
    SimpleRecord<Object> record = new SimpleRecord<Object>(ss.toData(new byte[valueBytes])) {
      @Override
      public long getLastAccessTime() {
        return lastAccess;
      }

      @Override
      public long getCreationTime() {
        return lastAccess;
      }
    };
    LazyEvictableEntryView<SimpleRecord<Object>> view =
        new LazyEvictableEntryView<>(ss.toData(key), record, ExpiryMetadata.NULL, ss);
    return new Candidate(null, 0, ss.toData(key), record, view, expired);
  }

  private static List<Integer> keys(List<Candidate> sorted, SerializationService ss) {
    List<Integer> keys = new ArrayList<>();
    for (Candidate c : sorted) {
      keys.add(ss.toObject(c.key));
    }
    return keys;
  }

  @Test
  public void lru_expiredFirstThenOldestThenSmallestOnTies() {
    List<Candidate> sample = new ArrayList<>(Arrays.asList(candidate(1, 100, 2000, false),
        candidate(2, 5000, 1000, false), candidate(3, 10, 1000, false),
        candidate(4, 9000, 3000, true)));
    CandidateOrder order = CandidateOrder.of(
        new EvictionConfig().setEvictionPolicy(EvictionPolicy.LRU),
        LRUEvictionPolicyComparator.INSTANCE);
    sample.forEach(order::rank);
    sample.sort(order);
    assertEquals(Arrays.asList(4, 3, 2, 1), keys(sample, ss));
  }

  @Test
  public void random_keepsTheSampledOrder_whateverTheSizes() {
    List<Candidate> sample = new ArrayList<>(Arrays.asList(candidate(1, 9000, 1000, false),
        candidate(2, 10, 1000, false), candidate(3, 5000, 1000, false),
        candidate(4, 100, 1000, false)));
    CandidateOrder order = CandidateOrder.of(
        new EvictionConfig().setEvictionPolicy(EvictionPolicy.RANDOM),
        RandomEvictionPolicyComparator.INSTANCE);
    sample.forEach(order::rank);
    sample.sort(order);
    assertEquals(Arrays.asList(1, 2, 3, 4), keys(sample, ss));
  }
}
