package dev.forkset.it.hazelcast;

import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryEvictedListener;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The eviction events of one map, seen by a client or a lite member: every key an owner evicted
 * (Hazelcast publishes an EVICTED event for each eviction on a partition's owner, stock and
 * module alike). Events arrive asynchronously, after the eviction: a test that needs an
 * eviction's event waits for that event ({@link EvictionWaits}).
 */
final class EvictionEvents {
  private final IMap<Integer, ?> map;
  private final UUID registration;
  private final Set<Integer> keys = ConcurrentHashMap.newKeySet();
  private final AtomicLong count = new AtomicLong();

  @SuppressWarnings({"unchecked", "rawtypes"})
  EvictionEvents(IMap<Integer, ?> map) {
    this.map = map;
    EntryEvictedListener<Integer, Object> listener = e -> {
      keys.add(e.getKey());
      count.incrementAndGet();
    };
    this.registration = ((IMap) map).addEntryListener(listener, false);
  }

  long count() {
    return count.get();
  }

  Set<Integer> keys() {
    return keys;
  }

  void remove() {
    map.removeEntryListener(registration);
  }
}
