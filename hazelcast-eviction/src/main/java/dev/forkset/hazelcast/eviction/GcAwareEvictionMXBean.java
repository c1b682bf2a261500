package dev.forkset.hazelcast.eviction;

/** JMX view of one member's gc-aware eviction: dev.forkset.hazelcast:type=GcAwareEviction,instance=NAME. */
public interface GcAwareEvictionMXBean {
  /** The footprint model in use, as logged at start. */
  String getModel();

  /** Entries evicted by the size-proportional evictor. */
  long getEvictionCount();

  /** Sum of the modelled cost of the evicted entries, in bytes. */
  long getBytesFreed();

  /** New entries rejected as larger than the map's per-member limit. */
  long getRejectedEntries();

  /** Eviction pool refills. */
  long getPoolRefills();

  /** Entries sampled for refills. */
  long getSampledEntries();

  /** Operations that stopped evicting at the per-operation cap. */
  long getCappedOperations();

  /** Eviction passes handed to another partition thread. */
  long getContinuations();

  /** New entries refused retryably while the map was far over its limit (back-pressure). */
  long getDeferredPuts();

  /** Batches of owner-evicted keys sent to backup replicas (one per partition and pass). */
  long getBackupEvictionBatches();

  /**
   * Entries evicted before any other because alone they exceed their map's per-member limit
   * (they got in without admission: a load, a transaction's commit, an entry processor on many
   * keys, an interceptor, a backup on a member that models them larger).
   */
  long getOversizedEvictions();

  /**
   * Maps whose heap limit is checked by summing every partition's estimate on each check, as
   * stock does, because a record store's estimator does not keep the map's running total (an
   * OBJECT-format map, an estimator set by hand).
   */
  long getSummedMaps();

  /**
   * Operations this member's own putAlls (and setAlls) sent another member in runs, one per run,
   * because the batches of all that member's partitions together exceeded the in-flight rule.
   */
  long getPutAllRuns();

  /** Sum of the cost estimates of the map's record stores (primary and backup) on this member. */
  long mapCost(String mapName);

  /** Entries of the map's record stores (primary and backup) on this member. */
  long mapEntries(String mapName);

  /** The settings in force. */
  String getSettings();
}
