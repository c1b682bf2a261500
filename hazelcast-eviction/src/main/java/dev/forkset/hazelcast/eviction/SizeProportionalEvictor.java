package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.EvictionConfig;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.internal.partition.IPartition;
import com.hazelcast.internal.partition.IPartitionService;
import com.hazelcast.internal.nearcache.NearCache;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.impl.EntryCostEstimator;
import com.hazelcast.map.impl.MapEntries;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.eviction.EvictionChecker;
import com.hazelcast.map.impl.eviction.Evictor;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.eviction.EvictionPolicyComparator;
import com.hazelcast.spi.impl.NodeEngine;
import com.hazelcast.spi.impl.PartitionSpecificRunnable;
import com.hazelcast.spi.impl.operationservice.OperationService;
import com.hazelcast.spi.impl.operationservice.impl.OperationServiceImpl;
import dev.forkset.hazelcast.chunked.ChunkSize;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;

/**
 * Evicts a map by size: after a write leaves the map over its heap limit, entries are evicted
 * until the cost they free covers the overshoot, instead of a fixed number of entries. One per
 * map container and member. The design and its sources are in docs/hazelcast-eviction.md
 * ("Design"); the parts are:
 * {@link MapFootprint} (the map's running cost on this member), {@link SampledDomain} (what a
 * partition thread samples), {@link EvictionPool} (the best candidates of a sample),
 * {@link EvictionLoop} (the one capped loop), {@link CandidateEviction} (one entry),
 * {@link Continuations} (the overshoot another thread frees), {@link BackupEvictions}
 * (owner-driven backups), {@link Admission} (writes before they are stored),
 * {@link MapRecordStores} (the map's record stores on this member) and {@link PartitionThreads}
 * (state confined to a partition thread).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Heap policies (USED_HEAP_SIZE, USED_HEAP_PERCENTAGE) compare {@link MapFootprint#used()},
 *       read in O(1), with the per-member limit, where the built-in checker sums every
 *       partition on every put. A pass frees the overshoot from the partitions of its own
 *       partition thread; what it cannot free there goes to the other threads
 *       ({@link Continuations}); every eviction is reserved against the footprint first, so the
 *       threads together free the overshoot plus at most one entry.</li>
 *   <li>An overshoot larger than 1/{@value Admission#SLACK_DIVISOR} of the limit (one large
 *       value after many small ones) is shared: the writing thread frees the part of it in
 *       proportion to what its partitions hold besides the entry just written, and hands the
 *       rest to the other threads at once, even when its own pass was capped.
 *       Freeing all of it from the writing thread's partitions emptied them of everything older
 *       than the large entry while older entries stayed on the other threads; the large entry
 *       then became its thread's oldest, and the next small write there evicted it, freeing
 *       many times its own overshoot (a map at 3.3 of 8 MB after 20 small writes, and the
 *       5.3.8 case of {@code SizeProportionalEvictionIT} at 47 of 64 MB).</li>
 *   <li>Count policies (PER_NODE, PER_PARTITION) evict from the write's record store until the
 *       built-in check passes; free-heap policies evict {@code batch.size} entries per write, as
 *       the built-in evictor does. Both use a pool per partition.</li>
 *   <li>Pools and domains belong to one partition thread by construction
 *       ({@link PartitionThreads}); a caller that is not a partition thread gets its own.</li>
 *   <li>The entry the write just stored ({@code excludedKey}) is never evicted by a pass the
 *       write runs (its own, admission's catch-up, a load's): its caller may already have its
 *       success, and the record store may still hold its record. One that alone exceeds the
 *       limit goes at a pass of its own right after the operation (note 7).</li>
 *   <li>With {@code backups.follow.owner} a pass frees this member's owned share of the
 *       overshoot (overshoot x owned / used, the ratio refreshed every second) from the owned
 *       partitions only, and sends the evicted keys to the backups ({@link BackupEvictions}); a
 *       member that owns nothing of the map evicts nothing. Back-pressure waits for the same
 *       share: the rest is its backups, which their owners free, and refusing writes until they
 *       do could stall this member's writes for as long as those owners stay under their own
 *       limits.</li>
 *   <li>An entry whose cost alone exceeds the limit, however it got in, is evicted before
 *       anything else by the next pass on its partition's thread ({@link OversizedEntries}): no
 *       eviction of other entries could bring the map under its limit around it, and a pass
 *       aiming at the limit would empty the map. No pass frees more because of such an entry:
 *       every pass aims at the overshoot of the other entries, while the oversized ones wait for
 *       their thread (which a pass elsewhere asks for a pass) or stay marked where they cannot
 *       go now (the write's own entry, which gets a pass right after its operation; a locked
 *       entry; a migrating partition). A backup replica's copy goes too, quietly, even when
 *       backups follow their owner: the member cannot hold it, and the owner keeps its own.
 *       This is the one backup entry a member evicts on its own account in owner mode, and a
 *       member that owns nothing of the map still runs it.</li>
 *   <li>The map's near cache on this member counts against the limit as stock
 *       {@code EvictionChecker} counts it: a pass brings the records down to what the near cache
 *       leaves of the limit, but never below half of it. A member's near cache holds other
 *       members' entries (unless it caches local entries) and shrinks by its own eviction, not by
 *       the records': one as large as the limit would otherwise empty the records, where stock
 *       evicts one entry per write. Back-pressure ({@link Admission}) looks at the records
 *       only: a writer cannot shrink a near cache.</li>
 *   <li>The running total and the oversized-entry marks are the map's: an evictor built for a
 *       config update ({@code MapContainer#initEvictor}, from Management Center, REST or
 *       {@code UpdateMapConfigOperation}) takes them over from the estimators of the record
 *       stores that exist, which keep feeding them, and sets the oversized-entry limit (a lower
 *       one has every partition checked once). A new evictor starting from zero made every
 *       write after an update switch the map to summing its partitions for good, and
 *       back-pressure read 0 until the first eviction. Estimators made while the map had no
 *       eviction fed nothing: the map sums its partitions while each partition thread binds its
 *       estimators to the running total, then switches back. The metric {@code summedMaps}
 *       counts the maps that sum now; one stays summing only while a record store's estimator
 *       is not the module's (an OBJECT-format map), which is logged (INFO) once per map.</li>
 *   <li>A pass that stopped because it counted another thread's eviction twice
 *       ({@link MapFootprint}, note 3) leaves a doubt; the last pass to end takes it and, if the
 *       map is still over on the exact total, asks every partition thread for a pass. Otherwise
 *       a handed-over pass whose partitions had nothing more to evict left the rest until the
 *       next write. Not with backups following their owner (note 6): there a member stays over
 *       its limit by its backups' part, and each pass aims at its owned share of what is over
 *       when it starts, so a further round would free another share (93-98% of the overshoot
 *       instead of about 63%, 2 members with 2 MB of backups still to go); a pass stopped early
 *       there leaves at most one entry per thread evicting at that moment to the next write.</li>
 * </ol>
 */
public final class SizeProportionalEvictor implements Evictor {
  private static final long NO_TARGET = CandidateEviction.NO_TARGET;

  private final String mapName;
  private final EvictionConfig evictionConfig;
  private final MaxSizePolicy maxSizePolicy;
  private final boolean heapPolicy;
  private final long limit;
  private final int batchSize;
  private final boolean cachedValues;
  /** The entry cost model covers the BINARY format only (the checks on the owner likewise). */
  private final boolean binary;
  private final EvictionChecker checker;
  private final IPartitionService partitionService;
  private final NodeEngine nodeEngine;
  private final GcAwareEvictionConfig config;
  private final EvictionMetrics metrics;
  private final EvictionPolicyComparator policy;
  private final boolean ownerMode;
  private final int totalBackups;
  private final MapFootprint footprint;
  private final CandidateOrder order;
  private final PartitionThreads threads;
  private final SampledDomain.Partitions partitions;
  private final PartitionThreads.PerThread<HeapState> heapStates;
  private final PartitionThreads.PerPartition<CountSlot> countSlots;
  private final EvictionLoop<Candidate> loop;
  private final Continuations continuations;
  private final Admission admission;
  private final MapRecordStores stores;
  private final CandidateEviction eviction;
  private final OversizedEntries oversized;
  private final boolean nearCache;

  /** A partition thread's pool and domain under a heap policy. */
  private static final class HeapState {
    final EvictionPool<Candidate> pool;
    final SampledDomain domain;

    HeapState(EvictionPool<Candidate> pool, SampledDomain domain) {
      this.pool = pool;
      this.domain = domain;
    }
  }

  /** A partition's pool and domain under a count or free-heap policy, for its record store. */
  private static final class CountSlot {
    CountState state;
  }

  private static final class CountState {
    final RecordStore<?> store;
    final EvictionPool<Candidate> pool;
    final SampledDomain domain;

    CountState(RecordStore<?> store, EvictionPool<Candidate> pool, SampledDomain domain) {
      this.store = store;
      this.pool = pool;
      this.domain = domain;
    }
  }

  SizeProportionalEvictor(String mapName, MapConfig mapConfig, EvictionPolicyComparator policy,
      EvictionChecker checker, int batchSize, IPartitionService partitionService,
      NodeEngine nodeEngine, GcAwareEvictionConfig config, EvictionMetrics metrics) {
    this.mapName = mapName;
    this.evictionConfig = mapConfig.getEvictionConfig();
    this.maxSizePolicy = evictionConfig.getMaxSizePolicy();
    this.heapPolicy = maxSizePolicy == MaxSizePolicy.USED_HEAP_SIZE
        || maxSizePolicy == MaxSizePolicy.USED_HEAP_PERCENTAGE;
    this.limit = limitBytes(evictionConfig);
    this.batchSize = Math.max(1, batchSize);
    this.cachedValues = countsCachedValues(mapConfig);
    this.binary = mapConfig.getInMemoryFormat() == InMemoryFormat.BINARY;
    this.policy = policy;
    this.checker = checker;
    this.partitionService = partitionService;
    this.nodeEngine = nodeEngine;
    this.config = config;
    this.metrics = metrics;
    this.totalBackups = mapConfig.getTotalBackupCount();
    this.ownerMode = heapPolicy && config.backupsFollowOwner && totalBackups > 0;
    this.order = CandidateOrder.of(evictionConfig, policy);
    int threadCount = ((OperationServiceImpl) nodeEngine.getOperationService())
        .getOperationExecutor().getPartitionThreadCount();
    this.threads = PartitionThreads.ofMember(threadCount, partitionService.getPartitionCount());
    this.partitions = SampledDomain.of(partitionService);
    this.stores = new MapRecordStores(mapName, nodeEngine, partitionService, threads);
    // A config update builds a new evictor for a map whose record stores exist (note 9).
    GcAwareEntryCostEstimator earlier = stores.anyEstimator();
    this.footprint = earlier != null && earlier.footprint() != null ? earlier.footprint()
        : new MapFootprint();
    this.oversized = earlier != null && earlier.oversized() != null ? earlier.oversized()
        : new OversizedEntries(threads);
    oversized.limit(heapPolicy ? limit : Long.MAX_VALUE, stores::anyEntries);
    this.eviction = new CandidateEviction(partitionService, footprint, metrics);
    this.nearCache = mapConfig.isNearCacheEnabled();
    this.heapStates = threads.perThread(t -> new HeapState(new EvictionPool<>(config.poolSize),
        new SampledDomain(() -> stores.ofThread(t), partitions, ownerMode, System::nanoTime,
            new Random())));
    this.countSlots = threads.perPartition(pid -> new CountSlot());
    this.loop = new EvictionLoop<>(config.maxEvictionsPerOperation, config.maxNanosPerOperation,
        config.poolSize, System::nanoTime);
    this.continuations = new Continuations(threads.count(), threads.partitionCount(),
        this::runOnPartitionThread, t -> heapPass(null, null, false));
    this.admission = new Admission(mapName, limit, maxSizePolicy + " " + evictionConfig.getSize(),
        config.rejectOversized, this::overshootToFree, metrics, totalBackups,
        config.inFlightHeapPercent, Runtime.getRuntime().maxMemory());
  }

  /** The per-member limit of a heap policy, in bytes. */
  static long limitBytes(EvictionConfig evictionConfig) {
    if (evictionConfig.getMaxSizePolicy() == MaxSizePolicy.USED_HEAP_PERCENTAGE) {
      return (long) (Runtime.getRuntime().maxMemory() * (evictionConfig.getSize() / 100.0));
    }
    return evictionConfig.getSize() * 1024L * 1024L;
  }

  /** Whether the map's records keep a deserialized copy of their value once it is read. */
  static boolean countsCachedValues(MapConfig mapConfig) {
    switch (mapConfig.getCacheDeserializedValues()) {
      case ALWAYS:
        return true;
      case INDEX_ONLY:
        return !mapConfig.getIndexConfigs().isEmpty();
      default:
        return false;
    }
  }

  /**
   * The cost estimator of this map's record store of partition {@code partitionId}, adding to its
   * footprint and telling {@link OversizedEntries} what it adds (which marks nothing without a
   * heap policy).
   */
  GcAwareEntryCostEstimator newEstimator(GcFootprintModel model, int entryOverhead,
      int partitionId, ChunkSize chunking) {
    if (partitionId < 0 || partitionId >= threads.partitionCount()) {
      return new GcAwareEntryCostEstimator(model, entryOverhead, cachedValues, footprint,
          chunking);
    }
    return new GcAwareEntryCostEstimator(model, entryOverhead, cachedValues, footprint,
        oversized, partitionId, chunking);
  }

  MapFootprint footprint() {
    return footprint;
  }

  @Override
  public void evict(RecordStore recordStore, Data excludedKey) {
    watch(recordStore);
    switch (maxSizePolicy) {
      case USED_HEAP_SIZE:
      case USED_HEAP_PERCENTAGE:
        heapPass(recordStore, excludedKey, true);
        break;
      case PER_NODE:
      case PER_PARTITION:
        countPass(recordStore, excludedKey, Integer.MAX_VALUE, true);
        break;
      default:
        countPass(recordStore, excludedKey, batchSize, false);
    }
  }

  @Override
  public boolean checkEvictable(RecordStore recordStore) {
    if (heapPolicy) {
      watch(recordStore);
      return recordStore.size() > 0 && footprint.used() + nearCacheCost() > limit;
    }
    return checker.checkEvictable(recordStore);
  }

  @Override
  public void forceEvictByPercentage(RecordStore recordStore, double evictionPercentage) {
    // Like the built-in evictor: nothing.
  }

  /**
   * Admission of an owner write before it is stored; see {@link Admission}. A single-key write
   * is asked from inside the record store's put, which holds the key's current record: the
   * catch-up pass never evicts that key.
   */
  void beforeWrite(RecordStore<?> store, List<Data> keys, List<Data> values) {
    if (!heapPolicy) {
      admission.checkInFlight(values);
      return;
    }
    if (ownerMode) {
      stores.ownedWrite(); // admission runs on the owner only
    }
    Data written = keys.size() == 1 ? keys.get(0) : null;
    admission.admit(estimatorOf(store), key -> store.getRecord(key), keys, values, () -> {
      heapPass(store, written, true);
      if (ownerMode) {
        // Admission reads the owned share again: the ratio must not count what this pass evicted.
        stores.refreshOwnedRatio();
      }
    });
  }

  /**
   * How a member's own putAll of this map splits the partitions' batches it sends another
   * member; see {@link Admission#operationEnds}.
   */
  int[] putAllOperationEnds(MapEntries[] batches) {
    return admission.operationEnds(batches);
  }

  /**
   * One partition's batch of a split-brain merge: admitted as {@link #beforeWrite} admits any
   * write, except that a final refusal (an entry over the map's limit, values the heap cannot
   * take in flight) drops the batch with a WARNING instead of failing the merge operation. A
   * failed merge invocation makes the merging member's {@code AbstractMergeRunnable} stop, and
   * every batch, store and map it had not sent yet would go unmerged; a dropped batch loses only
   * itself (the patch runs it as an empty batch: nothing merged, nothing backed up, so owner and
   * backups agree). Back-pressure still throws its retryable exception: that batch is retried.
   *
   * @return whether to merge the batch
   */
  boolean beforeMerge(RecordStore<?> store, List<Data> keys, List<Data> values) {
    return admission.admitMerge(nodeEngine.getLogger(SizeProportionalEvictor.class),
        store.getPartitionId(), values, () -> beforeWrite(store, keys, values));
  }

  /**
   * The same with the entries that do not fit dropped one by one instead of the whole batch
   * (custom jars of revision 11 or later ask this in place of {@link #beforeMerge}): an entry over
   * the map's limit, values over the in-flight allowance together ({@link Admission#mergeDrops});
   * the batch's other entries merge, and are admitted as any write.
   *
   * @return the indexes of the entries to drop
   */
  BitSet mergeBatchDrops(RecordStore<?> store, List<Data> keys, List<Data> values) {
    return admission.mergeDrops(nodeEngine.getLogger(SizeProportionalEvictor.class),
        store.getPartitionId(), heapPolicy ? estimatorOf(store) : null, keys, values,
        (keptKeys, keptValues) -> beforeWrite(store, keptKeys, keptValues));
  }

  /** The size check of a value a single-key entry processor computed, before it is stored. */
  void beforeComputedWrite(RecordStore<?> store, Data key, Object value) {
    if (value == null) {
      return;
    }
    GcAwareEntryCostEstimator costs = heapPolicy ? estimatorOf(store) : null;
    // an object a map without a heap policy keeps as it is is not serialized only to be checked
    Data data = value instanceof Data ? (Data) value
        : costs != null ? nodeEngine.getSerializationService().toData(value) : null;
    if (data == null) {
      return;
    }
    if (costs != null) {
      admission.checkSize(costs, key, data);
    }
    admission.checkInFlight(data);
  }

  /**
   * The in-flight check of the values a multi-key entry processor computed for one partition's
   * batch, together: the steps hold them all until they are stored. Each was checked alone as it
   * was computed ({@link #beforeComputedWrite}); a value the map keeps as an object (not
   * serialized on its way in) is not counted, as there.
   */
  void beforeComputedWrites(List<Object> values) {
    admission.checkComputedInFlight(values);
  }

  /**
   * Refuses a transactional write whose entry alone exceeds the map's per-member limit, on the
   * member that runs the transaction, before the transaction locks the key or logs the write.
   * The commit is never refused (it replays every logged write, and refusing one would leave the
   * others committed), and a transaction gets no back-pressure: its writes reach the owners only
   * with the commit.
   */
  void beforeTransactionalWrite(Data key, Data value, GcFootprintModel model,
      int entryOverhead, ChunkSize chunking) {
    if (value == null) {
      return;
    }
    if (heapPolicy && binary) {
      admission.checkSize(new GcAwareEntryCostEstimator(model, entryOverhead, cachedValues, null,
          chunking),
          key, value);
    }
    admission.checkInFlight(value);
  }

  /**
   * Switches the footprint to measuring the record stores' sum when {@code store} has an
   * estimator that does not keep it current (see {@link MapFootprint}), and back once every
   * estimator does (note 9).
   */
  private void watch(RecordStore<?> store) {
    if (!heapPolicy) {
      return;
    }
    EntryCostEstimator<?, ?> estimator = store.getStorage().getEntryCostEstimator();
    if (estimator instanceof GcAwareEntryCostEstimator
        && ((GcAwareEntryCostEstimator) estimator).feeds(footprint)) {
      return;
    }
    if (footprint.isMeasured() || !footprint.measureBy(stores::sumOfCosts)) {
      return;
    }
    metrics.summedMaps.increment();
    if (estimator instanceof GcAwareEntryCostEstimator) {
      // Made while the map had no eviction: bound on its partition thread, then back.
      bindEstimators();
      return;
    }
    nodeEngine.getLogger(SizeProportionalEvictor.class).info("Map '" + mapName + "': a"
        + " record store's entry cost estimator (" + (estimator == null ? "none"
        : estimator.getClass().getName()) + ") does not keep the map's running total, so its"
        + " heap limit is checked from here on by summing every partition's estimate, as"
        + " stock Hazelcast does (O(partitions) per write). Metric summedMaps counts such maps.");
  }

  /**
   * Binds the module's estimators that feed no running total to the map's, each on its
   * partition thread, while the footprint sums the record stores; then switches back to the
   * running total, or binds again if a record store came meanwhile (note 9).
   */
  private void bindEstimators() {
    int count = Math.min(threads.count(), threads.partitionCount());
    java.util.concurrent.atomic.AtomicInteger left =
        new java.util.concurrent.atomic.AtomicInteger(count);
    for (int t = 0; t < count; t++) {
      final int thread = t;
      runOnPartitionThread(thread, () -> {
        stores.bindThread(thread, footprint, oversized);
        if (left.decrementAndGet() > 0) {
          return;
        }
        if (stores.anyForeignEstimator()) {
          nodeEngine.getLogger(SizeProportionalEvictor.class).info("Map '" + mapName + "': a"
              + " record store's entry cost estimator is not the module's, so its heap limit is"
              + " checked from here on by summing every partition's estimate, as stock"
              + " Hazelcast does (O(partitions) per write). Metric summedMaps counts such maps.");
        } else if (!stores.allFeed(footprint)) {
          bindEstimators();
        } else if (footprint.stopMeasuring()) {
          metrics.summedMaps.decrement();
        }
      });
    }
  }

  private static GcAwareEntryCostEstimator estimatorOf(RecordStore<?> store) {
    if (store.getInMemoryFormat() != InMemoryFormat.BINARY) {
      return null;
    }
    EntryCostEstimator<?, ?> estimator = store.getStorage().getEntryCostEstimator();
    return estimator instanceof GcAwareEntryCostEstimator
        ? (GcAwareEntryCostEstimator) estimator : null;
  }

  /**
   * One pass of a heap policy on the calling thread: frees the overshoot (or this member's owned
   * share of it) from the thread's domain, and hands what it cannot free to the other threads.
   */
  private void heapPass(RecordStore<?> store, Data excludedKey, boolean handOver) {
    if (ownerMode && store != null && partitions.isOwned(store.getPartitionId())) {
      stores.ownedWrite();
    }
    long recordLimit = recordLimit();
    if (footprint.used() <= recordLimit) {
      return;
    }
    int thread = threads.current();
    long now = System.nanoTime();
    if (thread >= 0) {
      evictOversized(thread, excludedKey, now);
    }
    // Read before the marks and the total: an oversized entry that comes during the pass stops it.
    int version = oversized.version();
    // Oversized entries of other threads go at those threads' passes (OversizedEntries, notes 4
    // and 5): a write's pass asks for one; while their cost is not known yet, every pass leaves
    // the overshoot to that thread.
    boolean unknownElsewhere = false;
    for (int t = 0; t < threads.count(); t++) {
      if (t == thread) {
        continue;
      }
      boolean unknown = oversized.hasUnknown(t);
      unknownElsewhere |= unknown;
      if (unknown || (handOver && (oversized.hasMarks(t) || oversized.heldDue(t, now)))) {
        continuations.ask(t);
      }
    }
    if (unknownElsewhere) {
      return;
    }
    long used = footprint.used();
    long toFree = overshootToFree(used, recordLimit);
    if (toFree <= 0) {
      return;
    }
    long target = used - toFree;
    EvictionPool<Candidate> pool;
    SampledDomain domain;
    if (thread >= 0) {
      HeapState state = heapStates.get();
      pool = state.pool;
      domain = state.domain;
    } else if (store != null && (!ownerMode || partitions.isOwned(store.getPartitionId()))) {
      // Not a partition thread: the write's own record store (with backups following their
      // owner, only an owned one).
      pool = new EvictionPool<>(config.poolSize);
      domain = SampledDomain.of(SampledDomain.of(store, partitionService), partitions);
    } else {
      return;
    }
    boolean shared = handOver && thread >= 0 && threads.count() > 1
        && used - target > limit / Admission.SLACK_DIVISOR;
    long passTarget = shared
        ? used - threadShare(thread, used - target, used - oversized.pendingCost(),
            excludedCost(store, excludedKey))
        : target;
    try {
      BackupEvictions backups = ownerMode
          ? new BackupEvictions(mapName, totalBackups, this::sendToBackup) : null;
      EvictionLoop.Outcome outcome;
      try {
        outcome = loop.run(pool, p -> refill(p, domain, excludedKey, passTarget),
            c -> eviction.evict(c, excludedKey, passTarget, backups),
            () -> oversized.version() == version && footprint.above(passTarget));
      } finally {
        if (backups != null) {
          metrics.backupBatches.add(backups.send());
        }
      }
      if (outcome == EvictionLoop.Outcome.CAPPED) {
        metrics.capped.increment();
      }
      if ((outcome == EvictionLoop.Outcome.EXHAUSTED || shared) && handOver && thread >= 0
          && threads.count() > 1 && footprint.above(target)) {
        metrics.continuations.add(continuations.handOver(thread));
      }
    } finally {
      // last: after every "not above" this pass answered, also when an eviction threw
      settleDoubt();
    }
  }

  /**
   * Takes the doubt a pass left that stopped on an eviction in flight (note 10): if the map is
   * still over on the exact total, asks every partition thread for a pass. A further round needs
   * another such stop, so evictions happened: the rounds end.
   */
  private void settleDoubt() {
    if (!ownerMode && footprint.settleDoubt()
        && overshootToFree(footprint.used(), recordLimit()) > 0) {
      metrics.continuations.add(continuations.handOver(-1));
    }
  }

  /**
   * The part of the records' overshoot of the limit that this member frees (note 6 above), for
   * back-pressure: the records only (note 8).
   */
  private long overshootToFree() {
    return overshootToFree(footprint.used(), limit);
  }

  /**
   * The part of {@code used}'s overshoot of {@code recordLimit} this member frees: that of the
   * entries besides the oversized ones waiting for their own thread's pass (note 7).
   */
  private long overshootToFree(long used, long recordLimit) {
    long others = used - oversized.pendingCost();
    if (others <= recordLimit) {
      return 0;
    }
    return ownerMode ? stores.ownedShare(others - recordLimit, others, partitions)
        : others - recordLimit;
  }

  /**
   * What the records may hold: the limit less the near cache's cost, and never less than half
   * the limit (note 8).
   */
  private long recordLimit() {
    return limit - Math.min(nearCacheCost(), limit / 2);
  }

  /**
   * What the map's near cache on this member holds, as stock {@code EvictionChecker} counts it
   * (Hazelcast's own estimate of its entries); 0 without one.
   */
  private long nearCacheCost() {
    if (!nearCache) {
      return 0;
    }
    NearCache<?, ?> cache = ((MapService) nodeEngine.getService(MapService.SERVICE_NAME))
        .getMapServiceContext().getMapNearCacheManager().getNearCache(mapName);
    return cache == null ? 0 : cache.getNearCacheStats().getOwnedEntryMemoryCost();
  }

  /**
   * Evicts the entries of partition thread {@code thread}'s marked partitions whose cost alone
   * exceeds the limit (note 7). One it may not evict now stays marked with its cost, so that no
   * pass frees more because of it: the key {@code excludedKey} the running operation writes
   * (this thread then gets a pass of its own once the operation ended); a locked entry or an
   * entry of a migrating partition, held and checked again later ({@link OversizedEntries}).
   */
  private void evictOversized(int thread, Data excludedKey, long now) {
    OversizedEntries.Taken taken = oversized.take(thread, now);
    if (taken == null) {
      return;
    }
    List<Integer> marked = taken.partitions;
    boolean later = false;
    int scanned = 0;
    BackupEvictions backups = ownerMode
        ? new BackupEvictions(mapName, totalBackups, this::sendToBackup) : null;
    try {
      for (; scanned < marked.size(); scanned++) {
        int pid = marked.get(scanned);
        RecordStore<?> store = stores.of(pid);
        GcAwareEntryCostEstimator costs = store == null ? null : estimatorOf(store);
        if (costs == null) {
          continue;
        }
        List<Candidate> heavy = new ArrayList<>(1);
        List<Long> heavyCosts = new ArrayList<>(1);
        for (java.util.Iterator<? extends java.util.Map.Entry<Data, ? extends Record<?>>> it =
            store.getStorage().mutationTolerantIterator(); it.hasNext(); ) {
          java.util.Map.Entry<Data, ? extends Record<?>> e = it.next();
          long cost = costs.entryCostQuietly(e.getKey(), e.getValue());
          if (oversized.exceeds(cost)) {
            heavy.add(new Candidate(store, pid, e.getKey(), e.getValue(), null, false));
            heavyCosts.add(cost);
          }
        }
        for (int i = 0; i < heavy.size(); i++) {
          Candidate c = heavy.get(i);
          // A backup copy is evicted without the owner-mode batch (see note 7).
          BackupEvictions owned = partitions.isOwned(c.partitionId) ? backups : null;
          if (eviction.evict(c, excludedKey, NO_TARGET, owned) >= 0) {
            metrics.oversizedEvictions.increment();
          } else if (c.liveRecord() == null) {
            // written or removed since the scan: a new value's adjustment marked it anew
            continue;
          } else if (excludedKey != null && c.key.equals(excludedKey)) {
            oversized.mark(pid, heavyCosts.get(i));
            later = true;
          } else {
            oversized.hold(pid, heavyCosts.get(i));
          }
        }
      }
    } catch (RuntimeException | Error e) {
      // the partitions not checked keep their marks
      for (int i = scanned; i < marked.size(); i++) {
        oversized.mark(marked.get(i), 0);
      }
      throw e;
    } finally {
      oversized.settle(thread, taken);
      if (backups != null) {
        metrics.backupBatches.add(backups.send());
      }
    }
    if (later) {
      continuations.ask(thread);
    }
  }

  /**
   * The part of {@code over} that partition thread {@code thread} frees (note 2 above): in
   * proportion to what its partitions hold that this pass may evict (with backups following
   * their owner, what it owns), all but the entry just written ({@code excluded}).
   */
  private long threadShare(int thread, long over, long used, long excluded) {
    long evictable = (ownerMode ? (long) (used * stores.ownedRatio(used, partitions)) : used)
        - excluded;
    long held = Math.max(0, stores.costOfThread(thread, ownerMode, partitions) - excluded);
    return evictable <= 0 ? over : (long) (over * Math.min(1.0, (double) held / evictable));
  }

  /** The modelled cost of the entry a write just stored, which its own pass never evicts. */
  private static long excludedCost(RecordStore<?> store, Data excludedKey) {
    if (store == null || excludedKey == null) {
      return 0;
    }
    Record<?> record = store.getRecord(excludedKey);
    GcAwareEntryCostEstimator costs = estimatorOf(store);
    return record == null || costs == null ? 0 : costs.entryCostQuietly(excludedKey, record);
  }

  /** One pass of a count or free-heap policy on the write's record store. */
  private void countPass(RecordStore<?> store, Data excludedKey, int max, boolean untilUnder) {
    CountSlot slot = countSlots.get(store.getPartitionId());
    if (slot.state == null || slot.state.store != store) {
      slot.state = new CountState(store, new EvictionPool<>(config.poolSize),
          SampledDomain.of(SampledDomain.of(store, partitionService), partitions));
    }
    CountState s = slot.state;
    int[] evicted = new int[1];
    EvictionLoop.Outcome outcome = loop.run(s.pool,
        p -> refill(p, s.domain, excludedKey, NO_TARGET),
        c -> {
          long freed = eviction.evict(c, excludedKey, NO_TARGET, null);
          if (freed >= 0) {
            evicted[0]++;
          }
          return freed;
        },
        () -> evicted[0] < max && (!untilUnder || checker.checkEvictable(store)));
    if (outcome == EvictionLoop.Outcome.CAPPED) {
      metrics.capped.increment();
    }
  }

  /** Samples the domain into the pool; false when the domain holds nothing to sample. */
  private boolean refill(EvictionPool<Candidate> pool, SampledDomain domain, Data excludedKey,
      long target) {
    List<Candidate> sample = new ArrayList<>(config.sampleCount + 8);
    if (!domain.sample(config.sampleCount, excludedKey, sample)) {
      return false;
    }
    if (sample.isEmpty()) {
      domain.relistNext();
    }
    metrics.refills.increment();
    metrics.sampled.add(sample.size());
    // A large overshoot (one big value after many small ones) keeps more of each sample, up to
    // half of it: fewer refills for the same freed bytes, at some cost in policy accuracy.
    int keep = pool.capacity();
    long wanted = target == NO_TARGET ? 0 : footprint.used() - target;
    if (wanted > 0 && domain.lastEntries() > 0 && domain.lastCost() > 0) {
      long perEntry = Math.max(1, domain.lastCost() / domain.lastEntries());
      keep = (int) Math.max(keep, Math.min(wanted / perEntry / 4 + 1, config.sampleCount / 2));
    }
    for (Candidate c : sample) {
      order.rank(c);
    }
    pool.refill(sample, order, keep);
    for (Candidate c : sample) {
      c.view = null; // the pool keeps keys, not records or values
    }
    return true;
  }

  private void runOnPartitionThread(int thread, Runnable pass) {
    ((OperationServiceImpl) nodeEngine.getOperationService()).execute(
        new PartitionSpecificRunnable() {
          @Override
          public int getPartitionId() {
            return thread;
          }

          @Override
          public void run() {
            pass.run();
          }
        });
  }

  private void sendToBackup(int partitionId, int replicaIndex,
      com.hazelcast.spi.impl.operationservice.Operation operation) {
    IPartition partition = partitionService.getPartition(partitionId, false);
    if (partition.getReplicaAddress(replicaIndex) != null) {
      OperationService operations = nodeEngine.getOperationService();
      operations.invokeOnPartitionAsync(MapService.SERVICE_NAME, operation, partitionId,
          replicaIndex);
    }
  }

  @Override
  public String toString() {
    return "SizeProportionalEvictor{map=" + mapName + ", policy=" + policy + ", " + config + '}';
  }
}
