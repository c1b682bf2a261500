package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.test.TestHazelcastInstanceFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.After;
import org.junit.Test;

/** Which entries a pass picks, and what that costs, on one member in the test JVM. */
public class CandidateSelectionTest {
  private final TestHazelcastInstanceFactory factory = new TestHazelcastInstanceFactory(1);

  @After
  public void shutdown() {
    factory.terminateAll();
  }

  /**
   * RANDOM picks entries regardless of their size: ordering equal-ranked candidates by size is
   * for LRU and LFU, whose one-second timestamps tie.
   */
  @Test
  public void randomPolicy_mixedSizes_evictsSmallAndLargeEntriesAlike() throws Exception {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 4, EvictionPolicy.RANDOM, 0);
    HazelcastInstance member = factory.newHazelcastInstance(config);
    IMap<Integer, byte[]> map = member.getMap("m");
    for (int i = 0; i < 3000; i++) {
      map.put(i, new byte[i % 2 == 0 ? 200 : 4000]);
    }
    // the survivors are what the passes left: the last puts' passes end first
    TestMembers.drainPartitionThreads(member);
    int small = 0;
    int large = 0;
    for (byte[] v : map.values()) {
      if (v.length == 200) {
        small++;
      } else {
        large++;
      }
    }
    double smallShare = small / (double) (small + large);
    assertTrue("survivors: " + small + " small, " + large + " large", smallShare > 0.35
        && smallShare < 0.80);
  }

  /**
   * A pass that meets only locked entries stops instead of sampling the same locked entries
   * again until its time cap.
   */
  @Test
  public void lockedEntries_overTheLimit_doNotMakeAPutResample() throws Exception {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 2, EvictionPolicy.LRU, 0);
    HazelcastInstance member = factory.newHazelcastInstance(config);
    IMap<Integer, byte[]> map = member.getMap("m");
    EvictionMetrics metrics = TestMembers.metrics(member);
    int i = 0;
    while (metrics.getEvictionCount() == 0) {
      map.put(i++, new byte[1000]);
    }
    // the fill's passes end before the keys are read and locked
    TestMembers.drainPartitionThreads(member);
    for (Integer key : map.keySet()) {
      map.lock(key);
    }
    long refills = metrics.getPoolRefills();
    int puts = 20;
    for (int n = 0; n < puts; n++) {
      map.put(100_000 + n, new byte[1000]);
    }
    // the refills of the puts' passes and of the continuations they handed over, all of them
    TestMembers.drainPartitionThreads(member);
    long perPut = (metrics.getPoolRefills() - refills) / puts;
    assertTrue("pool refills per put with every older entry locked: " + perPut, perPut <= 8);
  }

  /**
   * Count policies evict from the put's own partition, each partition thread with its own pool:
   * many writers on 16 partition threads leave every full partition at exactly its limit, and
   * the pool of a partition serves several puts before it is refilled. Several rounds of 16
   * writers, so that a race between writers on one partition shows on 2 cores. The count is
   * read once the partition threads have finished the writes: a set returns before its
   * eviction pass runs
   * (see {@link #perPartitionPolicy_setAtTheLimit_returnsBeforeItsEvictionPass}).
   */
  @Test
  public void perPartitionPolicy_sixteenThreadsSixteenWriters_keepsEveryPartitionAtItsLimit()
      throws Exception {
    Config config = TestMembers.config(TestMembers.REGION_1M, 16);
    TestMembers.map(config, "m", MaxSizePolicy.PER_PARTITION, 20, EvictionPolicy.LRU, 0);
    HazelcastInstance member = factory.newHazelcastInstance(config);
    IMap<Integer, byte[]> map = member.getMap("m");
    EvictionMetrics metrics = TestMembers.metrics(member);
    int partitions = member.getPartitionService().getPartitions().size();
    ExecutorService writers = Executors.newFixedThreadPool(16);
    try {
      for (int round = 0; round < 10; round++) {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        for (int w = 0; w < 16; w++) {
          done.add(writers.submit(() -> {
            start.await();
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int n = 0; n < 2000; n++) {
              map.set(random.nextInt(200_000), new byte[64]);
            }
            return null;
          }));
        }
        start.countDown();
        for (Future<?> f : done) {
          f.get();
        }
        TestMembers.drainPartitionThreads(member);
        int[] sizes = new int[partitions];
        for (Integer key : map.keySet()) {
          sizes[member.getPartitionService().getPartition(key).getPartitionId()]++;
        }
        for (int pid = 0; pid < partitions; pid++) {
          assertEquals("round " + round + ": entries in partition " + pid, 20, sizes[pid]);
        }
      }
    } finally {
      writers.shutdown();
    }
    double refillsPerEviction = metrics.getPoolRefills() / (double) metrics.getEvictionCount();
    assertTrue("pool refills per eviction " + refillsPerEviction, refillsPerEviction < 0.6);
  }

  /**
   * Hazelcast sends a put's response before the operation's afterRun, where the write's eviction
   * pass runs ({@code OperationRunnerImpl.call}: {@code sendResponse}, then {@code afterRun};
   * {@code BasePutOperation.afterRunInternal}: after-put interceptors, events, then
   * {@code evict}), on 5.3.8 and 5.7.0 alike and with the stock evictor too. So a count read at
   * the instant a set returns may hold the written entry and not yet the eviction: the limit
   * holds once the partition thread has finished the write. The interceptor holds the partition
   * thread between the two steps.
   */
  @Test
  public void perPartitionPolicy_setAtTheLimit_returnsBeforeItsEvictionPass() throws Exception {
    Config config = TestMembers.config(TestMembers.REGION_1M, 2);
    TestMembers.map(config, "m", MaxSizePolicy.PER_PARTITION, 20, EvictionPolicy.LRU, 0);
    HazelcastInstance member = factory.newHazelcastInstance(config);
    IMap<Integer, byte[]> map = member.getMap("m");
    int pid = member.getPartitionService().getPartition(0).getPartitionId();
    List<Integer> keys = new ArrayList<>();
    for (int key = 0; keys.size() < 21; key++) {
      if (member.getPartitionService().getPartition(key).getPartitionId() == pid) {
        keys.add(key);
      }
    }
    for (int i = 0; i < 20; i++) {
      map.set(keys.get(i), new byte[64]);
    }
    // The last set's afterRun may still be to come: armed then, the interceptor would hold that
    // one, and the next set would queue behind it until the hold timed out.
    TestMembers.drainPartitionThreads(member);
    assertEquals(20, TestMembers.store(member, "m", pid).size());
    map.addInterceptor(new HoldAfterPut());
    HoldAfterPut.GATE.arm();
    try {
      map.set(keys.get(20), new byte[64]);
      assertTrue("the set's afterRun has started",
          HoldAfterPut.GATE.awaitHeld(10));
      assertEquals("entries in partition " + pid + " as the set returns", 21,
          TestMembers.store(member, "m", pid).size());
    } finally {
      HoldAfterPut.GATE.release();
    }
    map.get(keys.get(0)); // an operation on the partition, queued behind the set
    assertEquals("entries in partition " + pid + " once the set is done", 20,
        TestMembers.store(member, "m", pid).size());
  }

  /** Holds a partition thread in a put's afterRun, before its eviction pass, once armed. */
  static final class HoldAfterPut extends PassThroughInterceptor {
    static final HoldGate GATE = new HoldGate();

    @Override
    public void afterPut(Object value) {
      GATE.hold();
    }
  }
}
