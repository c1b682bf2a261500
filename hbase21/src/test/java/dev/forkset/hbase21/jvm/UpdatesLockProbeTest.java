package dev.forkset.hbase21.jvm;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;
import org.junit.Test;

/** The timed update lock measures what the flush lock-hold figures claim. */
public class UpdatesLockProbeTest {
  private static final long MS = 1_000_000L;

  private static UpdatesLockProbe.TimedUpdatesLock lock(String table, long dataSize) {
    return new UpdatesLockProbe.TimedUpdatesLock(table, "r1", () -> dataSize, false);
  }

  @Test
  public void writeLock_recordsOneHoldPerOutermostAcquisition() throws Exception {
    UpdatesLockProbe.TimedUpdatesLock l = lock("t_reentrant", 123);
    l.writeLock().lock();
    l.writeLock().lock();
    Thread.sleep(20);
    l.writeLock().unlock();
    Thread.sleep(10);
    l.writeLock().unlock();
    List<UpdatesLockProbe.Hold> holds = UpdatesLockProbe.drain("t_reentrant");
    assertEquals(1, holds.size());
    assertTrue("hold " + holds.get(0).holdNanos, holds.get(0).holdNanos >= 30 * MS);
    assertEquals(123, holds.get(0).dataSize);
    assertEquals("r1", holds.get(0).region);
    assertTrue(UpdatesLockProbe.drain("t_reentrant").isEmpty());
  }

  @Test
  public void writeLock_recordsTheWaitBehindAReader() throws Exception {
    UpdatesLockProbe.TimedUpdatesLock l = lock("t_wait", 0);
    l.readLock().lock();
    CountDownLatch done = new CountDownLatch(1);
    Thread flusher = new Thread(() -> {
      l.writeLock().lock();
      l.writeLock().unlock();
      done.countDown();
    });
    flusher.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!l.hasQueuedThread(flusher) && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertTrue("the flusher never queued for the write lock", l.hasQueuedThread(flusher));
    Thread.sleep(500);
    l.readLock().unlock();
    assertTrue(done.await(60, TimeUnit.SECONDS));
    List<UpdatesLockProbe.Hold> holds = UpdatesLockProbe.drain("t_wait");
    assertEquals(1, holds.size());
    assertTrue("wait " + holds.get(0).waitNanos, holds.get(0).waitNanos >= 500 * MS);
    // The hold starts once the lock is taken: the 500 ms the flusher queued are not in it.
    assertTrue("hold " + holds.get(0).holdNanos + " not below the wait "
        + holds.get(0).waitNanos, holds.get(0).holdNanos < holds.get(0).waitNanos);
  }

  @Test
  public void dataSize_isReadWhileTheWriteLockIsHeld() {
    AtomicBoolean heldWhenRead = new AtomicBoolean();
    UpdatesLockProbe.TimedUpdatesLock[] ref = new UpdatesLockProbe.TimedUpdatesLock[1];
    ref[0] = new UpdatesLockProbe.TimedUpdatesLock("t_size", "r1", () -> {
      heldWhenRead.set(ref[0].isWriteLockedByCurrentThread());
      return 7;
    }, false);
    ref[0].writeLock().lock();
    ref[0].writeLock().unlock();
    assertTrue(heldWhenRead.get());
    assertEquals(7, UpdatesLockProbe.drain("t_size").get(0).dataSize);
  }

  @Test
  public void readLockAndFailedTryLock_recordNothing() throws Exception {
    UpdatesLockProbe.TimedUpdatesLock l = lock("t_read", 0);
    Lock read = l.readLock();
    read.lock();
    CountDownLatch tried = new CountDownLatch(1);
    boolean[] got = new boolean[2];
    Thread other = new Thread(() -> {
      got[0] = l.writeLock().tryLock();
      try {
        got[1] = l.writeLock().tryLock(10, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      tried.countDown();
    });
    other.start();
    assertTrue(tried.await(10, TimeUnit.SECONDS));
    read.unlock();
    assertTrue(!got[0] && !got[1]);
    assertTrue(UpdatesLockProbe.drain("t_read").isEmpty());
    assertTrue(l.writeLock().tryLock(1, TimeUnit.SECONDS));
    l.writeLock().unlock();
    assertEquals(1, UpdatesLockProbe.drain("t_read").size());
  }
}
