package dev.forkset.hazelcast.eviction;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Stops the first thread that reaches {@link #hold} once armed, until {@link #release}: a
 * partition thread held at the point an interceptor sees. Interceptors keep theirs in a static
 * field, since a member may run a serialized copy of the interceptor it was given.
 */
final class HoldGate {
  private static final int HOLD_SECONDS = 30;
  private final AtomicBoolean armed = new AtomicBoolean();
  private volatile CountDownLatch entered = new CountDownLatch(0);
  private volatile CountDownLatch release = new CountDownLatch(0);

  /** The next {@link #hold} stops its thread. */
  void arm() {
    entered = new CountDownLatch(1);
    release = new CountDownLatch(1);
    armed.set(true);
  }

  /** Stops the caller if the gate is armed, and disarms it; at most 30 s, so a failed test ends. */
  void hold() {
    if (!armed.compareAndSet(true, false)) {
      return;
    }
    entered.countDown();
    try {
      release.await(HOLD_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether a thread reached {@link #hold} within {@code seconds}. */
  boolean awaitHeld(long seconds) throws InterruptedException {
    return entered.await(seconds, TimeUnit.SECONDS);
  }

  /** Lets the held thread, or the next one to arrive, go on, and disarms the gate. */
  void release() {
    armed.set(false);
    release.countDown();
  }
}
