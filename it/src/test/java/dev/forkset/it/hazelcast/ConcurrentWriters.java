package dev.forkset.it.hazelcast;

import com.hazelcast.map.IMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Client threads that write one map at the same time with every write a client has: put, set,
 * putAll, putIfAbsent, replace, an entry processor on one key and on several keys, and updates
 * that grow an existing entry. Each thread writes keys of its own (no two threads race on a
 * key) and remembers every key it created; a failed operation is recorded, not retried, and the
 * thread goes on.
 */
final class ConcurrentWriters {
  /** Operations of the mix, for failure messages and counts. */
  enum Op { PUT, SET, PUT_ALL, PUT_IF_ABSENT, REPLACE, GROW, EXECUTE_ON_KEY, EXECUTE_ON_KEYS }

  private final IMap<Integer, byte[]> map;
  private final int threads;
  private final int minValue;
  private final int maxValue;
  private final List<Thread> workers = new ArrayList<>();
  private final Set<Integer> created = ConcurrentHashMap.newKeySet();
  private final ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();
  private final AtomicLong operations = new AtomicLong();
  private final AtomicLong entriesWritten = new AtomicLong();
  private volatile boolean running;

  /** Value sizes are uniform in [minValue, maxValue] bytes. */
  ConcurrentWriters(IMap<Integer, byte[]> map, int threads, int minValue, int maxValue) {
    this.map = map;
    this.threads = threads;
    this.minValue = minValue;
    this.maxValue = maxValue;
  }

  void start() {
    running = true;
    for (int t = 0; t < threads; t++) {
      final int base = (t + 1) * 10_000_000;
      Thread w = new Thread(() -> write(base), "writer-" + t);
      w.setDaemon(true);
      workers.add(w);
      w.start();
    }
  }

  /** Stops the writers and waits for their last operations. */
  void stop() throws InterruptedException {
    running = false;
    for (Thread w : workers) {
      w.join(60_000);
      if (w.isAlive()) {
        throw new AssertionError(w.getName() + " is still in an operation 60 s after the stop");
      }
    }
    workers.clear();
  }

  private void write(int base) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    List<Integer> mine = new ArrayList<>();
    int next = base;
    while (running) {
      Op op = Op.values()[pick(random.nextInt(100))];
      if ((op == Op.REPLACE || op == Op.GROW) && mine.isEmpty()) {
        op = Op.PUT;
      }
      List<Integer> fresh = new ArrayList<>();
      try {
        switch (op) {
          case PUT:
            fresh.add(next++);
            map.put(fresh.get(0), value(random));
            break;
          case SET:
            fresh.add(next++);
            map.set(fresh.get(0), value(random));
            break;
          case PUT_ALL: {
            Map<Integer, byte[]> batch = new HashMap<>();
            for (int i = 0; i < 10; i++) {
              fresh.add(next);
              batch.put(next++, value(random));
            }
            map.putAll(batch);
            break;
          }
          case PUT_IF_ABSENT:
            fresh.add(next++);
            map.putIfAbsent(fresh.get(0), value(random));
            break;
          case REPLACE:
            // An existing key (or one evicted meanwhile: then nothing is stored) with a new size.
            map.replace(mine.get(random.nextInt(mine.size())), value(random));
            break;
          case GROW:
            // set() on an existing key with a value at the top of the range: an update that
            // grows the entry (or re-creates it if it was evicted).
            map.set(mine.get(random.nextInt(mine.size())), new byte[maxValue]);
            break;
          case EXECUTE_ON_KEY:
            fresh.add(next++);
            map.executeOnKey(fresh.get(0), new SetValue(size(random)));
            break;
          case EXECUTE_ON_KEYS: {
            Set<Integer> keys = new HashSet<>();
            for (int i = 0; i < 5; i++) {
              fresh.add(next);
              keys.add(next++);
            }
            map.executeOnKeys(keys, new SetValue(size(random)));
            break;
          }
          default:
            throw new IllegalStateException(op.name());
        }
        operations.incrementAndGet();
        entriesWritten.addAndGet(Math.max(1, fresh.size()));
        created.addAll(fresh);
        mine.addAll(fresh);
        if (mine.size() > 2000) {
          mine.subList(0, 1000).clear();
        }
      } catch (RuntimeException e) {
        if (!running && e instanceof com.hazelcast.core.HazelcastInstanceNotActiveException) {
          return;
        }
        failures.add(new Failure(op, System.currentTimeMillis(), e));
      }
    }
  }

  /** put 25%, set 15%, putAll 10%, putIfAbsent 10%, replace 10%, grow 10%, EP 10%, EP x5 10%. */
  private static int pick(int p) {
    return p < 25 ? 0 : p < 40 ? 1 : p < 50 ? 2 : p < 60 ? 3 : p < 70 ? 4 : p < 80 ? 5 : p < 90 ? 6 : 7;
  }

  private int size(ThreadLocalRandom random) {
    return minValue + random.nextInt(maxValue - minValue + 1);
  }

  private byte[] value(ThreadLocalRandom random) {
    return new byte[size(random)];
  }

  long operations() {
    return operations.get();
  }

  /** Entries written (a putAll of 10 counts 10). */
  long entriesWritten() {
    return entriesWritten.get();
  }

  /** A failed operation: which, when (epoch millis), and what the client threw. */
  static final class Failure {
    final Op op;
    final long at;
    final RuntimeException error;

    Failure(Op op, long at, RuntimeException error) {
      this.op = op;
      this.at = at;
      this.error = error;
    }

    @Override
    public String toString() {
      return String.format("%s failed at %tT.%<tL: %s", op, at, error);
    }
  }

  long failureCount() {
    return failures.size();
  }

  /** Every failed operation, in the order they failed. */
  List<Failure> failures() {
    return new ArrayList<>(failures);
  }

  /** Every key a successful operation created (or may have created: putIfAbsent, replace). */
  Set<Integer> created() {
    return created;
  }
}
