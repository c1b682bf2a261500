package dev.forkset.hazelcast.eviction;

import com.hazelcast.spi.impl.operationexecutor.impl.PartitionOperationThread;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;

/**
 * The member's partition threads as the evictor needs them: which one runs the caller, which
 * partitions it serves, and state that only that thread ever touches.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Hazelcast runs every operation of partition p on partition thread p mod T
 *       ({@code OperationExecutorImpl.toPartitionThreadIndex}); the thread's index is
 *       {@link PartitionOperationThread#getThreadId()}. A record store is therefore only ever
 *       touched by one thread, and so is everything kept here per thread or per partition.</li>
 *   <li>Confinement holds by construction: {@link #perThread} hands a thread its own slot and
 *       {@link #perPartition} the slot of a partition only to that partition's thread; any other
 *       caller (not a partition thread, or the wrong one) gets a fresh object that nobody else
 *       sees. Slots are created lazily by their own thread, so no slot is ever shared.</li>
 * </ol>
 */
final class PartitionThreads {
  private final int threadCount;
  private final int partitionCount;
  private final IntSupplier current;

  PartitionThreads(int threadCount, int partitionCount, IntSupplier current) {
    this.threadCount = Math.max(1, threadCount);
    this.partitionCount = partitionCount;
    this.current = current;
  }

  /** The partition threads of a running member. */
  static PartitionThreads ofMember(int threadCount, int partitionCount) {
    return new PartitionThreads(threadCount, partitionCount, PartitionThreads::runningThread);
  }

  /** The index of the partition thread running the caller, or -1. */
  static int runningThread() {
    Thread t = Thread.currentThread();
    return t instanceof PartitionOperationThread ? ((PartitionOperationThread) t).getThreadId() : -1;
  }

  int count() {
    return threadCount;
  }

  int partitionCount() {
    return partitionCount;
  }

  /** The partition thread running the caller, or -1 for any other thread. */
  int current() {
    int t = current.getAsInt();
    return t < threadCount ? t : -1;
  }

  /** The thread that serves {@code partitionId}. */
  int threadOf(int partitionId) {
    return partitionId % threadCount;
  }

  /** State per partition thread, made by {@code factory} from the thread's index. */
  <T> PerThread<T> perThread(IntFunction<T> factory) {
    return new PerThread<>(this, factory);
  }

  /** State per partition, reachable only from the partition's thread. */
  <T> PerPartition<T> perPartition(IntFunction<T> factory) {
    return new PerPartition<>(this, factory);
  }

  static final class PerThread<T> {
    private final PartitionThreads threads;
    private final IntFunction<T> factory;
    private final Object[] slots;

    PerThread(PartitionThreads threads, IntFunction<T> factory) {
      this.threads = threads;
      this.factory = factory;
      this.slots = new Object[threads.threadCount];
    }

    /**
     * The caller's own slot, or a fresh object (made for index -1) when the caller is not a
     * partition thread.
     */
    @SuppressWarnings("unchecked")
    T get() {
      int t = threads.current();
      if (t < 0) {
        return factory.apply(-1);
      }
      Object slot = slots[t];
      if (slot == null) {
        slot = factory.apply(t);
        slots[t] = slot;
      }
      return (T) slot;
    }
  }

  static final class PerPartition<T> {
    private final PartitionThreads threads;
    private final IntFunction<T> factory;
    private final Object[] slots;

    PerPartition(PartitionThreads threads, IntFunction<T> factory) {
      this.threads = threads;
      this.factory = factory;
      this.slots = new Object[threads.partitionCount];
    }

    /**
     * The slot of {@code partitionId} when the caller is that partition's thread, else a fresh
     * object.
     */
    @SuppressWarnings("unchecked")
    T get(int partitionId) {
      int t = threads.current();
      if (t < 0 || partitionId < 0 || partitionId >= slots.length
          || threads.threadOf(partitionId) != t) {
        return factory.apply(partitionId);
      }
      Object slot = slots[partitionId];
      if (slot == null) {
        slot = factory.apply(partitionId);
        slots[partitionId] = slot;
      }
      return (T) slot;
    }
  }
}
