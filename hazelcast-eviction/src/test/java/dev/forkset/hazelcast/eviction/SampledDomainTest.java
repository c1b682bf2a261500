package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.hazelcast.internal.serialization.Data;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Test;

public class SampledDomainTest {

  /** A partition's store that counts what it was asked to draw. */
  static final class FakeSource implements SampledDomain.Source {
    final int partitionId;
    int size;
    long drawn;

    FakeSource(int partitionId, int size) {
      this.partitionId = partitionId;
      this.size = size;
    }

    @Override
    public int partitionId() {
      return partitionId;
    }

    @Override
    public int size() {
      return size;
    }

    @Override
    public long cost() {
      return size * 100L;
    }

    int calls;

    @Override
    public void sample(int n, Data excludedKey, List<Candidate> sink) {
      drawn += n;
      calls++;
    }
  }

  private final Set<Integer> migrating = new HashSet<>();
  private final Set<Integer> owned = new HashSet<>();
  private final SampledDomain.Partitions partitions = new SampledDomain.Partitions() {
    @Override
    public boolean isMigrating(int partitionId) {
      return migrating.contains(partitionId);
    }

    @Override
    public boolean isOwned(int partitionId) {
      return owned.contains(partitionId);
    }
  };

  private final AtomicLong clock = new AtomicLong();

  private SampledDomain domain(List<SampledDomain.Source> sources, boolean ownedOnly) {
    return new SampledDomain(() -> sources, partitions, ownedOnly, clock::get, new Random(7));
  }

  /** Lets the domain list its stores again, as it does every 50 ms. */
  private void later() {
    clock.addAndGet(SampledDomain.RELIST_MILLIS * 1_000_000L + 1);
  }

  @Test
  public void relistNext_afterAListingWhoseStoresWereEmptied_drawsFromAStoreListedAsEmpty() {
    // The stores as listed at clock 0: a holds an entry, b none.
    FakeSource a = new FakeSource(0, 1);
    FakeSource b = new FakeSource(2, 0);
    SampledDomain domain = domain(Arrays.asList(a, b), false);
    assertTrue(domain.sample(64, null, new ArrayList<>()));
    // Within the same 50 ms, a is emptied and the last write lands in b.
    a.size = 0;
    b.size = 1;
    clock.addAndGet(1_000_000L);
    domain.sample(64, null, new ArrayList<>());
    assertEquals("the listing is reused within 50 ms", 0, b.drawn);
    // A refill that drew nothing has the evictor list again at once.
    domain.relistNext();
    assertTrue(domain.sample(64, null, new ArrayList<>()));
    assertEquals(64, b.drawn);
  }

  @Test
  public void sample_drawsFromStoresInProportionToTheirSizes() {
    FakeSource a = new FakeSource(0, 100);
    FakeSource b = new FakeSource(2, 300);
    FakeSource empty = new FakeSource(4, 0);
    SampledDomain domain = domain(Arrays.asList(a, b, empty), false);
    for (int i = 0; i < 1000; i++) {
      assertTrue(domain.sample(64, null, new ArrayList<>()));
    }
    assertEquals(16_000, a.drawn, 1000);
    assertEquals(48_000, b.drawn, 1000);
    assertEquals(64_000, a.drawn + b.drawn);
    assertEquals(0, empty.drawn);
    assertEquals(400, domain.lastEntries());
    assertEquals(40_000, domain.lastCost());
  }

  @Test
  public void sample_leavesOutPartitionsThatAreMigrating() {
    FakeSource staying = new FakeSource(0, 100);
    FakeSource moving = new FakeSource(2, 100);
    migrating.add(2);
    SampledDomain domain = domain(Arrays.asList(staying, moving), false);
    for (int i = 0; i < 100; i++) {
      domain.sample(64, null, new ArrayList<>());
    }
    assertEquals(6400, staying.drawn);
    assertEquals(0, moving.drawn);
    migrating.add(0);
    later();
    assertFalse("nothing left to sample", domain.sample(64, null, new ArrayList<>()));
  }

  @Test
  public void sample_ownedOnly_neverDrawsFromBackups() {
    FakeSource mine = new FakeSource(0, 10);
    FakeSource backup = new FakeSource(2, 1000);
    owned.add(0);
    SampledDomain domain = domain(Arrays.asList(mine, backup), true);
    assertTrue(domain.sample(64, null, new ArrayList<>()));
    assertEquals(64, mine.drawn);
    mine.size = 0;
    later();
    assertFalse("nothing owned holds entries", domain.sample(64, null, new ArrayList<>()));
    assertEquals(0, backup.drawn);
  }

  @Test
  public void sample_drawsFromAtMostEightStoresPerRefill() {
    List<SampledDomain.Source> many = new ArrayList<>();
    for (int pid = 0; pid < 100; pid++) {
      many.add(new FakeSource(pid, 50));
    }
    SampledDomain domain = domain(many, false);
    domain.sample(64, null, new ArrayList<>());
    int asked = 0;
    long drawn = 0;
    for (SampledDomain.Source s : many) {
      FakeSource f = (FakeSource) s;
      asked += f.drawn > 0 ? 1 : 0;
      drawn += f.drawn;
    }
    assertTrue("stores asked: " + asked, asked >= 1 && asked <= SampledDomain.STORES_PER_REFILL);
    assertEquals(64, drawn);
  }

  @Test
  public void sample_ofOneStore_asksItOnceForTheWholeSample() {
    // Separate draws from one store can return one entry twice; upstream's
    // CustomEvictionPolicyComparatorTest (one partition) found it: its comparator rejects a
    // comparison of an entry with itself.
    FakeSource only = new FakeSource(0, 16);
    SampledDomain domain = domain(Arrays.asList(only), false);
    assertTrue(domain.sample(15, null, new ArrayList<>()));
    assertEquals(1, only.calls);
    assertEquals(15, only.drawn);
  }

  @Test
  public void sample_listsTheThreadsStoresAtMostEvery50Milliseconds() {
    AtomicLong now = new AtomicLong();
    AtomicInteger listings = new AtomicInteger();
    FakeSource a = new FakeSource(0, 10);
    SampledDomain domain = new SampledDomain(() -> {
      listings.incrementAndGet();
      return Arrays.<SampledDomain.Source>asList(a);
    }, partitions, false, now::get, new Random(1));
    for (int i = 0; i < 100; i++) {
      domain.sample(64, null, new ArrayList<>());
      now.addAndGet(1_000_000); // 1 ms
    }
    assertEquals(2, listings.get());
  }
}
