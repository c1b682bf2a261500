package dev.forkset.hazelcast.eviction;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;

/**
 * Hands the part of an overshoot that one partition thread cannot free from its own partitions to
 * the other partition threads: one pass on each, at most one waiting per thread.
 *
 * <p>Implementation note: every pass, the handing one and the handed ones, reserves what it
 * evicts against the same {@link MapFootprint}, so however many threads take part they free the
 * overshoot once (plus at most one entry), not once each.
 */
final class Continuations {
  /** Runs {@code pass} on partition thread {@code thread}, asynchronously. */
  interface Executor {
    void execute(int thread, Runnable pass);
  }

  private final int threads;
  private final AtomicBoolean[] pending;
  private final Executor executor;
  private final IntConsumer pass;

  Continuations(int threads, int partitionCount, Executor executor, IntConsumer pass) {
    this.threads = Math.min(threads, partitionCount);
    this.pending = new AtomicBoolean[this.threads];
    for (int i = 0; i < this.threads; i++) {
      pending[i] = new AtomicBoolean();
    }
    this.executor = executor;
    this.pass = pass;
  }

  /**
   * Asks partition thread {@code thread} for a pass, unless one is waiting there already; true
   * if this call asked.
   */
  boolean ask(int thread) {
    if (thread < 0 || thread >= threads || !pending[thread].compareAndSet(false, true)) {
      return false;
    }
    executor.execute(thread, () -> {
      pending[thread].set(false);
      pass.accept(thread);
    });
    return true;
  }

  /**
   * Asks every partition thread but {@code from} (every one for -1) for a pass; returns how many
   * were asked.
   */
  int handOver(int from) {
    int asked = 0;
    for (int t = 0; t < threads; t++) {
      if (t != from && ask(t)) {
        asked++;
      }
    }
    return asked;
  }
}
