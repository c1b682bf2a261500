package dev.forkset.hazelcast.eviction;

import com.hazelcast.core.EntryView;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.recordstore.RecordStore;

/**
 * A sampled entry waiting in an eviction pool. It names the entry (store, key) and the record it
 * saw by identity and version, so that an entry written again since it was sampled is not taken
 * for the one sampled; it does not hold the record or its value, so a pool keeps no heap alive
 * beyond its keys, which the map holds anyway while the entries live.
 */
final class Candidate {
  final RecordStore<?> store;
  final int partitionId;
  final Data key;
  final boolean expired;
  private final int recordIdentity;
  private final long recordVersion;
  /** The policy's view of the entry, held only while a sample is ordered. */
  EntryView<?, ?> view;
  /** The record's own cost (Hazelcast's), to order entries that tie under the policy. */
  final long recordCost;
  /** The policy's keys, read once before a sample is sorted ({@link CandidateOrder#rank}). */
  long rank;
  long rank2;

  Candidate(RecordStore<?> store, int partitionId, Data key, Record<?> record, EntryView<?, ?> view,
      boolean expired) {
    this.store = store;
    this.partitionId = partitionId;
    this.key = key;
    this.recordIdentity = System.identityHashCode(record);
    this.recordVersion = record.getVersion();
    this.recordCost = record.getCost();
    this.view = view;
    this.expired = expired;
  }

  /** The record of the sampled entry if the store still holds that same record, else null. */
  Record<?> liveRecord() {
    Record<?> record = store.getRecord(key);
    return record != null && System.identityHashCode(record) == recordIdentity
        && record.getVersion() == recordVersion ? record : null;
  }

  @Override
  public String toString() {
    return "Candidate{partition=" + partitionId + ", key=" + key + ", expired=" + expired + '}';
  }
}
