package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.partition.IPartition;
import com.hazelcast.internal.partition.IPartitionService;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.util.Clock;
import com.hazelcast.map.impl.recordstore.LazyEvictableEntryView;
import com.hazelcast.map.impl.recordstore.RecordStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The entries one partition thread may evict for one map, and how a pool refill samples them.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The domain of a heap policy is every partition of the map that the thread serves, not
 *       the put's own partition: sampling a 1/271 slice of the map makes the policy local (the
 *       oldest of 15 entries of one partition is rarely among the oldest of the map;
 *       hazelcast/hazelcast#19862). A count policy's domain is the put's record store, since
 *       its limit is per partition. The domain of a thread never changes, so its pool is never
 *       emptied because the next put went to another partition.</li>
 *   <li>Listing the thread's record stores, with their sizes, costs and states, costs
 *       partitions / threads lookups; it is done at most every {@value #RELIST_MILLIS} ms, not
 *       per refill (a record store's {@code size()} visits its 16 segments). A stale list is
 *       harmless: each candidate is checked against its store before it is evicted, and a
 *       refill that draws nothing makes the next one list again ({@link #relistNext}). Without
 *       that, a pass whose listed stores had all been emptied since the listing gave up while a
 *       store listed as empty held the last write's overshoot, and with no later write the map
 *       stayed over its limit (upstream {@code EvictionMaxSizePolicyTest#testUsedHeapSizePolicy},
 *       about one run in 15).</li>
 *   <li>A refill draws its sample from up to {@value #STORES_PER_REFILL} stores picked at
 *       random in proportion to their sizes, several entries from each, so every entry of the
 *       domain is about equally likely to be drawn. Drawing one entry from each of 64 stores
 *       instead cost more than the evictions (a sampling iterator per store); an entry's age
 *       does not depend on its partition, so the best of 8 x 8 ranks like the best of 64.</li>
 *   <li>Partitions that are migrating are left out: an entry evicted from a replica that is
 *       being copied to another member would reappear there, and evicting from a replica that
 *       is being received races the copy.</li>
 *   <li>With {@code backups.follow.owner} the domain is the owned partitions only: a backup
 *       replica drops only what its owner evicted. A thread that owns nothing of the map draws
 *       nothing, and its pass hands the overshoot to the threads that do (in
 *       {@link SizeProportionalEvictor}). Sampling backups there when nothing was owned let a
 *       member evict backup entries their owner kept, and the loss of that owner then lost the
 *       keys without an EVICTED event (OwnerModeBackupsTest).</li>
 * </ol>
 */
final class SampledDomain {
  static final long RELIST_MILLIS = 50;
  /** Stores a refill draws from. */
  static final int STORES_PER_REFILL = 8;

  /** One partition's entries as the domain samples them. */
  interface Source {
    int partitionId();

    int size();

    /** The modelled cost of the entries. */
    long cost();

    /** Adds up to {@code n} sampled entries other than {@code excludedKey} to {@code sink}. */
    void sample(int n, Data excludedKey, List<Candidate> sink);
  }

  /** What the domain needs to know of a partition. */
  interface Partitions {
    boolean isMigrating(int partitionId);

    boolean isOwned(int partitionId);
  }

  private final Supplier<List<Source>> lister;
  private final Partitions partitions;
  private final boolean ownedOnly;
  private final LongSupplier nanoClock;
  private final Random random;
  private List<Source> listed;
  private long listedAt;
  /** The sources a refill draws from, and their cumulative sizes, as of the last listing. */
  private Source[] chosen = new Source[0];
  private long[] cumulative = new long[0];
  private long lastEntries;
  private long lastCost;

  SampledDomain(Supplier<List<Source>> lister, Partitions partitions, boolean ownedOnly,
      LongSupplier nanoClock, Random random) {
    this.lister = lister;
    this.partitions = partitions;
    this.ownedOnly = ownedOnly;
    this.nanoClock = nanoClock;
    this.random = random;
  }

  /** A domain of one record store (count policies, or a caller that is not a partition thread). */
  static SampledDomain of(Source source, Partitions partitions) {
    List<Source> one = Collections.singletonList(source);
    return new SampledDomain(() -> one, partitions, false, System::nanoTime, new Random());
  }

  /**
   * Samples about {@code n} entries of the domain into {@code sink}; false when the domain
   * holds nothing that may be sampled.
   */
  boolean sample(int n, Data excludedKey, List<Candidate> sink) {
    long now = nanoClock.getAsLong();
    if (listed == null || now - listedAt > RELIST_MILLIS * 1_000_000L) {
      list(now);
    }
    if (lastEntries == 0) {
      listed = null;
      return false;
    }
    int stores = Math.min(n, STORES_PER_REFILL);
    // A store picked more than once is sampled once for all its draws: separate draws from one
    // store can return the same entry, and a sample must not hold an entry twice (a policy
    // comparator may require distinct entries, and a duplicate wastes a slot of the sample).
    int[] picks = new int[stores];
    int[] draws = new int[stores];
    int distinct = 0;
    for (int i = 0; i < stores; i++) {
      int draw = n / stores + (i < n % stores ? 1 : 0);
      long at = (long) (random.nextDouble() * lastEntries);
      int pick = java.util.Arrays.binarySearch(cumulative, at + 1);
      pick = pick < 0 ? -pick - 1 : pick;
      int j = 0;
      while (j < distinct && picks[j] != pick) {
        j++;
      }
      if (j == distinct) {
        picks[distinct++] = pick;
      }
      draws[j] += draw;
    }
    for (int j = 0; j < distinct; j++) {
      chosen[picks[j]].sample(draws[j], excludedKey, sink);
    }
    return true;
  }

  /**
   * Makes the next {@link #sample} list the stores again, however recent the listing: a refill
   * that drew nothing had only stores emptied since they were listed, while stores listed as
   * empty may hold entries now (the last write of a burst can land in one).
   */
  void relistNext() {
    listed = null;
  }

  /** Entries in the stores the last {@link #sample} drew from. */
  long lastEntries() {
    return lastEntries;
  }

  /** Their modelled cost. */
  long lastCost() {
    return lastCost;
  }

  private void list(long now) {
    listed = lister.get();
    listedAt = now;
    List<Source> use = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    for (Source s : listed) {
      int pid = s.partitionId();
      int size = s.size();
      if (size == 0 || partitions.isMigrating(pid) || ownedOnly && !partitions.isOwned(pid)) {
        continue;
      }
      use.add(s);
      sizes.add(size);
    }
    chosen = use.toArray(new Source[0]);
    cumulative = new long[chosen.length];
    lastEntries = 0;
    lastCost = 0;
    for (int i = 0; i < chosen.length; i++) {
      lastEntries += sizes.get(i);
      cumulative[i] = lastEntries;
      lastCost += chosen[i].cost();
    }
  }

  /** The partitions of a member's partition service. */
  static Partitions of(IPartitionService partitionService) {
    return new Partitions() {
      @Override
      public boolean isMigrating(int partitionId) {
        return partitionService.getPartition(partitionId, false).isMigrating();
      }

      @Override
      public boolean isOwned(int partitionId) {
        return partitionService.getPartition(partitionId, false).isLocal();
      }
    };
  }

  /** A record store as a source. */
  static Source of(RecordStore<?> store, IPartitionService partitionService) {
    int partitionId = store.getPartitionId();
    return new Source() {
      @Override
      public int partitionId() {
        return partitionId;
      }

      @Override
      public int size() {
        return store.size();
      }

      @Override
      public long cost() {
        return store.getOwnedEntryCost();
      }

      @Override
      public void sample(int n, Data excludedKey, List<Candidate> sink) {
        IPartition partition = partitionService.getPartition(partitionId, false);
        boolean backup = !partition.isLocal();
        long now = Clock.currentTimeMillis();
        for (Object o : store.getStorage().getRandomSamples(n)) {
          LazyEvictableEntryView<?> view = (LazyEvictableEntryView<?>) o;
          Data key = view.getDataKey();
          if (excludedKey != null && key.equals(excludedKey)) {
            continue;
          }
          sink.add(new Candidate(store, partitionId, key, view.getRecord(), view,
              store.isExpired(key, now, backup)));
        }
      }
    };
  }
}
