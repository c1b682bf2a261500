package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.EvictionConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.EntryView;
import com.hazelcast.internal.partition.IPartition;
import com.hazelcast.internal.partition.IPartitionService;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.util.Clock;
import com.hazelcast.internal.eviction.ExpiredKey;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.MapServiceContext;
import com.hazelcast.map.impl.eviction.EvictionChecker;
import com.hazelcast.map.impl.eviction.Evictor;
import com.hazelcast.map.impl.operation.EvictBatchBackupOperation;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.recordstore.LazyEvictableEntryView;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.map.impl.recordstore.expiry.ExpiryReason;
import com.hazelcast.spi.eviction.EvictionPolicyComparator;
import com.hazelcast.spi.exception.RetryableHazelcastException;
import com.hazelcast.spi.impl.NodeEngine;
import com.hazelcast.spi.impl.PartitionSpecificRunnable;
import com.hazelcast.spi.impl.operationservice.OperationService;
import com.hazelcast.spi.impl.operationexecutor.impl.PartitionOperationThread;
import com.hazelcast.spi.impl.operationservice.impl.OperationServiceImpl;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Evicts by size: after a put leaves the map over its limit, entries are evicted until the
 * cost they free covers the overshoot, instead of a fixed number of entries.
 *
 * <h2>Design</h2>
 * The built-in {@code EvictorImpl} removes {@code hazelcast.map.eviction.batch.size} entries
 * per over-limit put, each chosen by a fresh scan of {@code hazelcast.map.eviction.sample.count}
 * entries of the put's own partition. Three problems follow. The number of evictions does not
 * depend on how much must be freed, so one large value after many small ones either leaves
 * the map over its limit or needs a batch size that over-evicts on every other put (seed
 * scenario 3; hazelcast/hazelcast#16760). The work per put is {@code batch x sample}, an order
 * of magnitude of throughput at 10000 x 10000 (seed scenario 4). And sampling only the put's
 * partition (a 1/271 slice of the map) makes the policy local: the oldest of 15 entries of one
 * partition is rarely among the oldest of the map, so LRU accuracy was 13% at sample 15
 * (hazelcast/hazelcast#19862 reports LRU evicting the newest entries).
 *
 * <p>This evictor keeps one <em>eviction pool</em> per map and partition thread. A refill
 * samples {@code pool.sample.count} entries from the record stores of the map that the current
 * partition thread serves and this member owns (weighted by their sizes), orders them by the map's
 * {@link EvictionPolicyComparator} (expired entries first) and keeps the best
 * {@code pool.size}. Candidates are then evicted best first, each checked to be still the same
 * record, until the freed cost covers the overshoot; the pool is refilled only when used up.
 * This is the eviction pool of Redis (Sanfilippo, "Random notes on improving the Redis LRU
 * algorithm", antirez.com, 2016; redis/src/evict.c {@code evictionPoolPopulate}) without its
 * resampling on every eviction: the cost of an eviction is {@code sample.count / pool.size}
 * sampled entries amortized, never {@code batch x sample}. Keeping the best k of s samples
 * selects entries whose policy rank is within about k/s of the oldest, which is what bounds
 * the LRU accuracy error; the partition-thread-wide domain (half the member's partitions on
 * two threads) removes the per-partition locality of the built-in evictor. Sampling instead
 * of an exact LRU list keeps the record store untouched and the reads free of bookkeeping, the
 * same trade-off Caffeine avoids by its frequency sketch and Redis accepts by sampling
 * (Einziger, Friedman, Manes, "TinyLFU: A Highly Efficient Cache Admission Policy", ACM TOS
 * 2017; Manes, "Design of a Modern Cache", highscalability.com, 2016).
 *
 * <p>A partition thread may only touch record stores of the partitions it owns. So the pass
 * first evicts from those; if they cannot cover the overshoot, the rest is handed to the other
 * partition threads as a {@link PartitionSpecificRunnable} each (one in flight per thread).
 * The work of one operation is capped by {@code max.evictions.per.operation} and
 * {@code max.micros.per.operation}; a capped pass leaves the map over its limit and the next
 * operation continues, so a partition thread never stalls on one put. An entry whose modelled
 * cost alone exceeds the map's per-member limit is rejected before it is stored
 * ({@link GcAwareEvictionProvider#checkNewEntry}); evicting everything could not make room for
 * it and storing it could exhaust the heap.
 *
 * <p>Replicas: upstream lets each replica evict its own sample, so owner and backup of a
 * partition end up with different keys, and so does this evictor by default. With
 * {@code backups.follow.owner} a pass samples only the partitions the member owns and sends the
 * keys it evicted to their backups ({@code EvictBatchBackupOperation}, which upstream uses for
 * expired keys); backups are evicted locally only when the partition thread owns nothing of the
 * map.
 *
 * <p>Costs are the {@link GcAwareEntryCostEstimator}'s, so "size" here means the heap an entry
 * really occupies on the running collector, humongous rounding included; the limit of
 * USED_HEAP_SIZE and USED_HEAP_PERCENTAGE is compared against the sum of the owned (primary
 * and backup) record stores' estimates, as the built-in {@code EvictionChecker} does.
 * Count-based policies (PER_NODE, PER_PARTITION) evict from the put's own record store until
 * the built-in check passes; free-heap policies evict {@code batch.size} entries per put.
 */
public final class SizeProportionalEvictor implements Evictor {

  /** A sampled entry. */
  static final class Candidate {
    final RecordStore store;
    final int partitionId;
    final Data key;
    final Record record;
    final EntryView view;
    final boolean expired;

    Candidate(RecordStore store, int partitionId, Data key, Record record, EntryView view,
        boolean expired) {
      this.store = store;
      this.partitionId = partitionId;
      this.key = key;
      this.record = record;
      this.view = view;
      this.expired = expired;
    }
  }

  private final String mapName;
  /**
   * The map's eviction config, from the config its container was built with. Taken here rather
   * than through RecordStore.getMapContainer(): MapContainer is a class on 5.3 and an interface
   * on 5.5+, so a call on it links on one line only, and this jar runs on both.
   */
  private final EvictionConfig evictionConfig;
  /** Sync + async backups of the map: the replicas an owner's evicted keys are sent to. */
  private final int totalBackups;
  private final EvictionPolicyComparator policy;
  private final EvictionChecker checker;
  private final int batchSize;
  private final IPartitionService partitionService;
  private final NodeEngine nodeEngine;
  private final GcAwareEvictionConfig config;
  private final EvictionMetrics metrics;
  private final int threadCount;
  private final int partitionCount;
  private final EvictionPool<Candidate>[] pools;
  private final AtomicBoolean[] continuationPending;
  private final Comparator<Candidate> order;
  /** Per partition thread: the map's used heap as the last checkEvictable computed it. */
  private final long[] lastUsed;
  /** Per partition thread: the record stores of its domain, and when they were listed. */
  private final Object[][] domainStores;
  private final long[] domainListedAt;
  private static final long DOMAIN_TTL_NANOS = 50_000_000L;
  /** Over-limit share (1/n of the limit) beyond which new entries wait for eviction to catch up. */
  static final int BACKPRESSURE_SLACK_DIVISOR = 16;

  @SuppressWarnings("unchecked")
  SizeProportionalEvictor(String mapName, MapConfig mapConfig, EvictionPolicyComparator policy,
      EvictionChecker checker,
      int batchSize, IPartitionService partitionService, NodeEngine nodeEngine,
      GcAwareEvictionConfig config, EvictionMetrics metrics) {
    this.mapName = mapName;
    this.evictionConfig = mapConfig.getEvictionConfig();
    this.totalBackups = mapConfig.getTotalBackupCount();
    this.policy = policy;
    this.checker = checker;
    this.batchSize = Math.max(1, batchSize);
    this.partitionService = partitionService;
    this.nodeEngine = nodeEngine;
    this.config = config;
    this.metrics = metrics;
    this.partitionCount = partitionService.getPartitionCount();
    this.threadCount = Math.max(1, ((OperationServiceImpl) nodeEngine.getOperationService())
        .getOperationExecutor().getPartitionThreadCount());
    this.pools = new EvictionPool[threadCount + 1];
    this.continuationPending = new AtomicBoolean[threadCount];
    this.lastUsed = new long[threadCount + 1];
    this.domainStores = new Object[threadCount][];
    this.domainListedAt = new long[threadCount];
    java.util.Arrays.fill(lastUsed, -1);
    for (int i = 0; i < pools.length; i++) {
      pools[i] = new EvictionPool<>(config.poolSize);
    }
    for (int i = 0; i < threadCount; i++) {
      continuationPending[i] = new AtomicBoolean();
    }
    this.order = (a, b) -> {
      if (a.expired != b.expired) {
        return a.expired ? -1 : 1;
      }
      int byPolicy = policy.compare(a.view, b.view);
      // Hazelcast keeps access and creation times in whole seconds: entries of the same second
      // tie under LRU/LFU. Among those, evict the smaller first, so a large entry written after
      // many small ones in the same second is not taken for the oldest.
      return byPolicy != 0 ? byPolicy : Long.compare(a.record.getCost(), b.record.getCost());
    };
  }

  /**
   * With {@code backups.follow.owner}: keys one pass evicted from partitions this member owns,
   * sent to those partitions' backup replicas when the pass ends: one {@code EvictBatchBackupOperation} per partition and backup,
   * the operation upstream sends for expired keys. The backup drops each key whose value still
   * has the same hash (a newer put of the key survives) and then trims itself to the owner's
   * entry count, so owner and backups keep the same entries instead of each replica evicting
   * its own choice.
   */
  private final class OwnerEvictions {
    private Map<Integer, List<ExpiredKey>> keys;
    private Map<Integer, RecordStore> stores;

    void add(RecordStore store, int partitionId, Data key, Object value) {
      if (totalBackups == 0 || !config.backupsFollowOwner) {
        return;
      }
      if (keys == null) {
        keys = new HashMap<>();
        stores = new HashMap<>();
      }
      keys.computeIfAbsent(partitionId, p -> new ArrayList<>())
          .add(new ExpiredKey(key, value.hashCode()));
      stores.put(partitionId, store);
    }

    void sendToBackups() {
      if (keys == null) {
        return;
      }
      OperationService operations = nodeEngine.getOperationService();
      for (Map.Entry<Integer, List<ExpiredKey>> e : keys.entrySet()) {
        int pid = e.getKey();
        int primaryCount = stores.get(pid).size();
        IPartition partition = partitionService.getPartition(pid, false);
        for (int replica = 1; replica <= totalBackups; replica++) {
          if (partition.getReplicaAddress(replica) != null) {
            operations.invokeOnPartitionAsync(MapService.SERVICE_NAME,
                new EvictBatchBackupOperation(mapName, e.getValue(), primaryCount), pid, replica);
          }
        }
      }
      metrics.backupBatches.add(keys.size());
      keys = null;
      stores = null;
    }
  }

  /** The eviction config of this evictor's map. */
  EvictionConfig evictionConfig() {
    return evictionConfig;
  }

  @Override
  public void evict(RecordStore recordStore, Data excludedKey) {
    MaxSizePolicy maxSizePolicy = evictionConfig.getMaxSizePolicy();
    switch (maxSizePolicy) {
      case USED_HEAP_SIZE:
      case USED_HEAP_PERCENTAGE:
        long limit = limitBytes(evictionConfig);
        int slot = currentThreadIndex() < 0 ? threadCount : currentThreadIndex();
        long used = lastUsed[slot] >= 0 ? lastUsed[slot] : usedHeap();
        lastUsed[slot] = -1;
        long over = used - limit;
        if (over > 0) {
          evictBytes(recordStore, excludedKey, ownedShare(over, used), limit, true);
        }
        break;
      case PER_NODE:
      case PER_PARTITION:
        evictCount(recordStore, excludedKey, Integer.MAX_VALUE);
        break;
      default:
        evictCount(recordStore, excludedKey, batchSize);
    }
  }

  /**
   * Back-pressure before a new entry is stored under a heap policy. A partition thread can only
   * evict from its own partitions; when the overshoot sits in another thread's partitions the
   * rest is handed over asynchronously, and meanwhile a client that keeps putting large values
   * can fill the heap (seen here: 26 live 5 MB values against a limit of 18 on a loaded
   * 2-core machine, then OutOfMemoryError). So when the map is more than
   * 1/{@value #BACKPRESSURE_SLACK_DIVISOR} of its limit over it, a new entry first makes this
   * thread catch up; if the map is still that far over, the entry is refused with Hazelcast's
   * retryable exception, which the client and member invocations retry (nothing was stored).
   */
  void admit(RecordStore store) {
    MaxSizePolicy policy = evictionConfig.getMaxSizePolicy();
    if (policy != MaxSizePolicy.USED_HEAP_SIZE && policy != MaxSizePolicy.USED_HEAP_PERCENTAGE) {
      return;
    }
    long limit = limitBytes(evictionConfig);
    long slack = limit / BACKPRESSURE_SLACK_DIVISOR;
    long used = usedHeap();
    if (used <= limit + slack) {
      return;
    }
    evictBytes(store, null, used - limit, limit, true);
    used = usedHeap();
    if (used > limit + slack) {
      metrics.deferred.increment();
      throw new RetryableHazelcastException("Map '" + mapName + "' is " + (used - limit)
          + " bytes over its per-member limit of " + limit + " while eviction catches up on"
          + " other partition threads; the put is retried.");
    }
  }

  /** The per-member limit of a heap policy, in bytes. */
  static long limitBytes(EvictionConfig evictionConfig) {
    if (evictionConfig.getMaxSizePolicy() == MaxSizePolicy.USED_HEAP_PERCENTAGE) {
      return (long) (Runtime.getRuntime().maxMemory() * (evictionConfig.getSize() / 100.0));
    }
    return evictionConfig.getSize() * 1024L * 1024L;
  }

  /**
   * The part of an overshoot this member frees from the partitions it owns: over x owned / used.
   * The rest sits in backup replicas, which the owners' evictions shrink (OwnerEvictions);
   * freeing the whole overshoot here too would evict about twice what is needed with one
   * backup. Without backups, or when this member owns nothing of the map, it is the whole.
   */
  private long ownedShare(long over, long used) {
    if (totalBackups == 0 || !config.backupsFollowOwner || used <= 0) {
      return over;
    }
    MapServiceContext context = mapServiceContext();
    long owned = 0;
    for (int pid = 0; pid < partitionCount; pid++) {
      RecordStore store = context.getExistingRecordStore(pid, mapName);
      if (store != null && !isBackup(pid)) {
        owned += store.getOwnedEntryCost();
      }
    }
    if (owned <= 0) {
      return over;
    }
    return Math.max(1, (long) Math.ceil((double) over * Math.min(owned, used) / used));
  }

  /** Sum of the cost estimates of the map's record stores on this member. */
  long usedHeap() {
    MapServiceContext context = mapServiceContext();
    long used = 0;
    for (int pid = 0; pid < partitionCount; pid++) {
      RecordStore store = context.getExistingRecordStore(pid, mapName);
      if (store != null) {
        used += store.getOwnedEntryCost();
      }
    }
    return used;
  }

  private MapServiceContext mapServiceContext() {
    MapService service = nodeEngine.getService(MapService.SERVICE_NAME);
    return service.getMapServiceContext();
  }

  private int currentThreadIndex() {
    Thread t = Thread.currentThread();
    return t instanceof PartitionOperationThread ? ((PartitionOperationThread) t).getThreadId() : -1;
  }

  private void evictBytes(RecordStore store, Data excludedKey, long over, long limit,
      boolean continueElsewhere) {
    int thread = currentThreadIndex();
    long deadline = System.nanoTime() + config.maxNanosPerOperation;
    EvictionPool<Candidate> pool = thread >= 0 ? pools[thread] : pools[threadCount];
    Object domain = thread >= 0 ? "thread-" + thread : "partition-" + store.getPartitionId();
    pool.retarget(domain);
    int maxRefills = config.maxEvictionsPerOperation / config.poolSize + 4;
    OwnerEvictions owned = new OwnerEvictions();
    try {
      boolean exhausted = evictPass(pool, domain, thread, store, excludedKey, over, deadline,
          maxRefills, owned);
      if (!exhausted) {
        return;
      }
      if (continueElsewhere && thread >= 0 && threadCount > 1) {
        scheduleContinuations(thread);
      }
      // Only the just-added entry is left here: if it alone is over the limit, drop it.
      Record added = excludedKey == null ? null : store.getRecord(excludedKey);
      if (added != null) {
        long own = store.getStorage().getEntryCostEstimator() instanceof GcAwareEntryCostEstimator
            ? ((GcAwareEntryCostEstimator) store.getStorage().getEntryCostEstimator())
                .calculateEntryCost(excludedKey, added) : 0;
        if (own > limit) {
          long cost = evictCandidate(new Candidate(store, store.getPartitionId(), excludedKey,
              added, null, false), null, owned);
          if (cost > 0) {
            nodeEngine.getLogger(getClass()).warning("Map '" + mapName + "': an entry of " + own
                + " bytes (modelled) is larger than the per-member limit of " + limit
                + " bytes and was evicted right after its update.");
          }
        }
      }
    } finally {
      owned.sendToBackups();
    }
  }

  /**
   * Evicts from the domain until {@code over} bytes are freed or a cap is hit; true when the
   * domain has nothing more to evict. Keys evicted from owned partitions go to {@code owned}.
   */
  private boolean evictPass(EvictionPool<Candidate> pool, Object domain, int thread,
      RecordStore store, Data excludedKey, long over, long deadline, int maxRefills,
      OwnerEvictions owned) {
    long freed = 0;
    int evictions = 0;
    int refills = 0;
    while (freed < over) {
      if (evictions >= config.maxEvictionsPerOperation || System.nanoTime() > deadline
          || refills > maxRefills) {
        metrics.capped.increment();
        return false;
      }
      Candidate c = pool.poll();
      if (c == null) {
        refills++;
        if (!refill(pool, domain, thread, store, excludedKey, over - freed)) {
          return true;
        }
        continue;
      }
      long cost = evictCandidate(c, excludedKey, owned);
      if (cost >= 0) {
        freed += cost;
        evictions++;
      }
    }
    return false;
  }

  private void evictCount(RecordStore store, Data excludedKey, int max) {
    EvictionPool<Candidate> pool = pools[threadCount];
    Object domain = "partition-" + store.getPartitionId() + "@" + System.identityHashCode(store);
    pool.retarget(domain);
    long deadline = System.nanoTime() + config.maxNanosPerOperation;
    int evictions = 0;
    int refills = 0;
    while (evictions < max && checker.checkEvictable(store)) {
      if (evictions >= config.maxEvictionsPerOperation || System.nanoTime() > deadline
          || refills > config.maxEvictionsPerOperation / config.poolSize + 4) {
        metrics.capped.increment();
        return;
      }
      Candidate c = pool.poll();
      if (c == null) {
        refills++;
        if (!refill(pool, domain, -1, store, excludedKey, 0)) {
          // Only the excluded key is left: evict it, as the built-in evictor does.
          Record added = excludedKey == null ? null : store.getRecord(excludedKey);
          if (added != null) {
            evictCandidate(new Candidate(store, store.getPartitionId(), excludedKey, added, null,
                false), null, null);
          }
          return;
        }
        continue;
      }
      if (evictCandidate(c, excludedKey, null) >= 0) {
        evictions++;
      }
    }
  }

  /** Samples the domain into the pool; false if it holds nothing evictable. */
  private boolean refill(EvictionPool<Candidate> pool, Object domain, int thread,
      RecordStore current, Data excludedKey, long bytesWanted) {
    List<RecordStore> stores = new ArrayList<>();
    List<Integer> pids = new ArrayList<>();
    long total = 0;
    long totalCost = 0;
    if (thread < 0) {
      stores.add(current);
      pids.add(current.getPartitionId());
      total = current.size();
    } else {
      long now = System.nanoTime();
      Object[] cached = domainStores[thread];
      if (cached == null || now - domainListedAt[thread] > DOMAIN_TTL_NANOS) {
        // Listing the thread's partitions costs partitionCount / threadCount lookups: done at
        // most every 50 ms, not on every refill. Stale entries are harmless: every candidate
        // is checked to be the same record in its store before it is evicted.
        MapServiceContext context = mapServiceContext();
        List<Object> listed = new ArrayList<>();
        for (int pid = thread; pid < partitionCount; pid += threadCount) {
          RecordStore s = context.getExistingRecordStore(pid, mapName);
          if (s != null) {
            listed.add(s);
            listed.add(pid);
          }
        }
        cached = listed.toArray();
        domainStores[thread] = cached;
        domainListedAt[thread] = now;
      }
      // With backups.follow.owner: owned partitions only, while they hold anything; their
      // evictions reach the backups (OwnerEvictions). Backup replicas are evicted here only
      // when this thread owns nothing of the map, so that a member holding mostly backups still
      // keeps to its limit. Without it: every partition of the thread, owned or backup.
      boolean ownedFirst = config.backupsFollowOwner && totalBackups > 0;
      for (int pass = 0; pass < 2 && total == 0; pass++) {
        for (int i = 0; i < cached.length; i += 2) {
          RecordStore s = (RecordStore) cached[i];
          int pid = (Integer) cached[i + 1];
          if (s.size() > 0 && (!ownedFirst || isBackup(pid) == (pass == 1))) {
            stores.add(s);
            pids.add(pid);
            total += s.size();
            totalCost += s.getOwnedEntryCost();
          }
        }
      }
      if (total == 0 && cached.length > 0) {
        domainStores[thread] = null;
      }
    }
    if (total == 0) {
      return false;
    }
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long now = Clock.currentTimeMillis();
    List<Candidate> sample = new ArrayList<>(config.sampleCount + stores.size());
    for (int i = 0; i < stores.size(); i++) {
      RecordStore s = stores.get(i);
      double share = (double) config.sampleCount * s.size() / total;
      int n = (int) share + (random.nextDouble() < share - (int) share ? 1 : 0);
      if (n == 0) {
        continue;
      }
      int pid = pids.get(i);
      boolean backup = isBackup(pid);
      for (Object o : s.getStorage().getRandomSamples(n)) {
        LazyEvictableEntryView<?> view = (LazyEvictableEntryView<?>) o;
        Data key = view.getDataKey();
        if (excludedKey != null && s == current && key.equals(excludedKey)) {
          continue;
        }
        sample.add(new Candidate(s, pid, key, view.getRecord(), view,
            s.isExpired(key, now, backup)));
      }
    }
    metrics.refills.increment();
    metrics.sampled.add(sample.size());
    if (sample.isEmpty()) {
      // Only the excluded entry was drawn: is there anything else at all?
      long others = total - (excludedKey != null && current.getRecord(excludedKey) != null ? 1 : 0);
      if (others <= 0) {
        return false;
      }
      return true;
    }
    // A large overshoot (one big value after many small ones) keeps more of each sample, up to
    // half of it: fewer refills for the same freed bytes, at some cost in policy accuracy.
    int keep = config.poolSize;
    if (bytesWanted > 0 && totalCost > 0) {
      long entriesWanted = bytesWanted / Math.max(1, totalCost / total) + 1;
      keep = (int) Math.max(keep, Math.min(entriesWanted / 4, config.sampleCount / 2));
    }
    pool.refill(sample, order, domain, keep);
    return true;
  }

  /**
   * Evicts a candidate if it is still there; returns the freed cost, or -1. An entry evicted
   * from an owned partition is added to {@code owned} (when given) for its backups.
   */
  private long evictCandidate(Candidate c, Data excludedKey, OwnerEvictions owned) {
    RecordStore s = c.store;
    if (excludedKey != null && c.key.equals(excludedKey)) {
      return -1;
    }
    if (s.getRecord(c.key) != c.record || s.isLocked(c.key)) {
      return -1;
    }
    boolean backup = isBackup(c.partitionId);
    long now = Clock.currentTimeMillis();
    long before = s.getOwnedEntryCost();
    ExpiryReason reason = s.hasExpired(c.key, now, backup);
    Object value = s.evict(c.key, backup);
    if (value != null && !backup) {
      s.doPostEvictionOperations(c.key, value, reason);
      if (owned != null) {
        owned.add(s, c.partitionId, c.key, value);
      }
    }
    long freed = Math.max(0, before - s.getOwnedEntryCost());
    metrics.evictions.increment();
    metrics.bytesFreed.add(freed);
    return freed;
  }

  private boolean isBackup(int partitionId) {
    IPartition partition = partitionService.getPartition(partitionId, false);
    return !partition.isLocal();
  }

  private void scheduleContinuations(int self) {
    OperationServiceImpl operations = (OperationServiceImpl) nodeEngine.getOperationService();
    for (int t = 0; t < threadCount; t++) {
      if (t == self || t >= partitionCount || !continuationPending[t].compareAndSet(false, true)) {
        continue;
      }
      final int thread = t;
      metrics.continuations.increment();
      operations.execute(new PartitionSpecificRunnable() {
        @Override
        public int getPartitionId() {
          return thread;
        }

        @Override
        public void run() {
          continuationPending[thread].set(false);
          RecordStore store = mapServiceContext().getExistingRecordStore(thread, mapName);
          if (store == null) {
            for (int pid = thread; pid < partitionCount && store == null; pid += threadCount) {
              store = mapServiceContext().getExistingRecordStore(pid, mapName);
            }
          }
          if (store == null) {
            return;
          }
          EvictionConfig ec = evictionConfig;
          long limit = limitBytes(ec);
          long used = usedHeap();
          if (used > limit) {
            evictBytes(store, null, ownedShare(used - limit, used), limit, false);
          }
        }
      });
    }
  }

  @Override
  public void forceEvictByPercentage(RecordStore recordStore, double evictionPercentage) {
    // Like the built-in evictor: nothing.
  }

  @Override
  public boolean checkEvictable(RecordStore recordStore) {
    EvictionConfig ec = evictionConfig;
    MaxSizePolicy p = ec.getMaxSizePolicy();
    if (p == MaxSizePolicy.USED_HEAP_SIZE || p == MaxSizePolicy.USED_HEAP_PERCENTAGE) {
      // Same sum as the built-in checker (near cache aside); kept for the evict() that follows
      // on this thread, so one put sums the partitions once.
      if (recordStore.size() == 0) {
        return false;
      }
      int slot = currentThreadIndex() < 0 ? threadCount : currentThreadIndex();
      long used = usedHeap();
      boolean over = used > limitBytes(ec);
      lastUsed[slot] = over ? used : -1;
      return over;
    }
    return checker.checkEvictable(recordStore);
  }

  @Override
  public String toString() {
    return "SizeProportionalEvictor{map=" + mapName + ", policy=" + policy + ", " + config + '}';
  }
}
