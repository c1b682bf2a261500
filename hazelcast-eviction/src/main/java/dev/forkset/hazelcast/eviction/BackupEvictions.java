package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.eviction.ExpiredKey;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.map.impl.operation.EvictBatchBackupOperation;
import com.hazelcast.spi.impl.operationservice.Operation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * With {@code backups.follow.owner}: the keys one pass evicted from partitions this member owns,
 * sent to those partitions' backup replicas when the pass ends, one
 * {@link EvictBatchBackupOperation} per partition and replica (the operation upstream sends for
 * expired keys). A backup drops each key whose value still has the same hash, so a newer write of
 * the key survives.
 *
 * <p>Implementation note: the operation can also trim the backup to the owner's entry count. That
 * count is stale as soon as the owner takes another write, and an operation that waits or is
 * retried would then remove live backup entries. It is sent as {@link Integer#MAX_VALUE}, which
 * turns the trim off: a backup removes the keys it is told and nothing else.
 */
final class BackupEvictions {
  /** Sends an operation to replica {@code replicaIndex} of {@code partitionId}. */
  interface Sender {
    void send(int partitionId, int replicaIndex, Operation operation);
  }

  private final String mapName;
  private final int totalBackups;
  private final Sender sender;
  private final Map<Integer, List<ExpiredKey>> keys = new HashMap<>();

  BackupEvictions(String mapName, int totalBackups, Sender sender) {
    this.mapName = mapName;
    this.totalBackups = totalBackups;
    this.sender = sender;
  }

  /** An owned entry {@code key} with {@code value} was evicted from {@code partitionId}. */
  void add(int partitionId, Data key, Object value) {
    keys.computeIfAbsent(partitionId, p -> new ArrayList<>())
        .add(new ExpiredKey(key, value.hashCode()));
  }

  /** Sends what was added since the last call; returns the number of partitions. */
  int send() {
    int partitions = keys.size();
    for (Map.Entry<Integer, List<ExpiredKey>> e : keys.entrySet()) {
      for (int replica = 1; replica <= totalBackups; replica++) {
        sender.send(e.getKey(), replica, operation(mapName, e.getValue()));
      }
    }
    keys.clear();
    return partitions;
  }

  /** The operation that removes {@code evicted} from a backup replica, and nothing else. */
  static Operation operation(String mapName, List<ExpiredKey> evicted) {
    return new EvictBatchBackupOperation(mapName, evicted, Integer.MAX_VALUE);
  }
}
