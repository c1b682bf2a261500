package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.MapServiceContext;
import com.hazelcast.map.impl.eviction.MapEvictionProvider;
import com.hazelcast.map.impl.eviction.MapEvictionProviders;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.impl.NodeEngine;
import com.hazelcast.spi.impl.PartitionSpecificRunnable;
import com.hazelcast.spi.impl.operationservice.impl.OperationServiceImpl;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Configs and probes for members started in the test JVM. Links against the 5.3.8 and 5.7.0
 * custom jars alike (no test-kit type): ModuleOnJdk8Test runs tests that use it on 5.3.8.
 */
final class TestMembers {
  /** A G1 model with 1 MB regions on every member, whatever the test JVM runs. */
  static final String REGION_1M = "1m";

  private TestMembers() {
  }

  /** A member config: G1 model with the given region size, the given partition threads. */
  static Config config(String regionSize, int partitionThreads) {
    Config config = new Config();
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.partition.count", "71");
    config.setProperty("hazelcast.operation.thread.count", Integer.toString(partitionThreads));
    config.setProperty(GcAwareEvictionConfig.GC_MODEL.name, "g1");
    config.setProperty(GcAwareEvictionConfig.REGION_SIZE.name, regionSize);
    return config;
  }

  /**
   * Lifts the time cap of an eviction pass ({@link GcAwareEvictionConfig#MAX_MICROS}, 100 ms by
   * default) to its maximum, 60 s. A pass that hits the cap is not rescheduled: the rest of the
   * overshoot waits for the next write, and on a loaded machine a pass that is descheduled may
   * hit the cap after a few evictions. A test that asserts that the map is back under its limit
   * after one large write, with no further write, needs the cap out of the way; the cap's own
   * behaviour is EvictionLoopTest's.
   */
  static Config withoutTimeCap(Config config) {
    config.setProperty(GcAwareEvictionConfig.MAX_MICROS.name, "60000000");
    return config;
  }

  /**
   * Real TCP on 127.0.0.1 from {@code port} up (the next free port is taken), members joining
   * by TCP/IP only: clients connect over sockets, as a client's requests reach a member in
   * production, and clusters of tests that run at once stay apart by their cluster names.
   */
  static Config overTcp(Config config, int port) {
    config.getNetworkConfig().setPort(port).setPortAutoIncrement(true);
    JoinConfig join = config.getNetworkConfig().getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).addMember("127.0.0.1");
    return config;
  }

  /** Adds a BINARY map with the given eviction. */
  static MapConfig map(Config config, String name, MaxSizePolicy policy, int size,
      EvictionPolicy evictionPolicy, int backups) {
    MapConfig m = new MapConfig(name).setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(backups);
    m.getEvictionConfig().setEvictionPolicy(evictionPolicy).setMaxSizePolicy(policy).setSize(size);
    config.addMapConfig(m);
    return m;
  }

  /**
   * Sends the map-config update Management Center and REST send ({@code UpdateMapConfigOperation},
   * which gives the map a new evictor): LRU, USED_HEAP_SIZE, {@code mb}.
   */
  static void updateMapConfig(HazelcastInstance member, String map, int mb) throws Exception {
    com.hazelcast.internal.management.operation.UpdateMapConfigOperation op =
        new com.hazelcast.internal.management.operation.UpdateMapConfigOperation(map, 0, 0, mb,
            MaxSizePolicy.USED_HEAP_SIZE.getId(), false, EvictionPolicy.LRU.getId(), false, null);
    nodeEngine(member).getOperationService().invokeOnTarget(
        com.hazelcast.map.impl.MapService.SERVICE_NAME, op, nodeEngine(member).getThisAddress())
        .get();
  }

  /** The partition of {@code key} in {@code member}'s cluster. */
  static int partitionId(HazelcastInstance member, Object key) {
    return member.getPartitionService().getPartition(key).getPartitionId();
  }

  /** How many partition threads run {@code member}'s partitions. */
  static int partitionThreads(HazelcastInstance member) {
    OperationServiceImpl operations = (OperationServiceImpl) nodeEngine(member).getOperationService();
    return operations.getOperationExecutor().getPartitionThreadCount();
  }

  static NodeEngine nodeEngine(HazelcastInstance member) {
    return ((HazelcastInstanceProxy) member).getOriginal().node.getNodeEngine();
  }

  static GcAwareEvictionProvider provider(HazelcastInstance member) {
    return (GcAwareEvictionProvider) MapEvictionProviders.forNode(nodeEngine(member));
  }

  static EvictionMetrics metrics(HazelcastInstance member) {
    return provider(member).metrics();
  }

  static MapServiceContext mapServiceContext(HazelcastInstance member) {
    MapService service = nodeEngine(member).getService(MapService.SERVICE_NAME);
    return service.getMapServiceContext();
  }

  static RecordStore<?> store(HazelcastInstance member, String map, int partitionId) {
    return mapServiceContext(member).getExistingRecordStore(partitionId, map);
  }

  /** The value {@code member}'s record of {@code key} holds (its replica, owner or backup). */
  static Object storedValue(HazelcastInstance member, String map, Object key) {
    RecordStore<?> store = store(member, map, partitionId(member, key));
    return store.getRecord(nodeEngine(member).getSerializationService().toData(key)).getValue();
  }

  /** Sum of the record stores' cost estimates of a map on a member (primary and backup). */
  static long cost(HazelcastInstance member, String map) {
    return provider(member).metrics().mapCost(map);
  }

  /** Waits up to {@code seconds} for {@code condition}, failing with {@code what}. */
  static void await(String what, int seconds, BooleanSupplier condition,
      Supplier<String> state) throws InterruptedException {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + " within " + seconds + " s; now: " + state.get());
      }
      Thread.sleep(20);
    }
  }

  /**
   * Returns once every eviction pass that the members' partition threads had queued or were
   * running when the call began has ended, together with the continuations those passes handed
   * to other partition threads. Members are drained one after the other, in the order given.
   *
   * <p>Invariant: a partition thread runs its queue one task at a time, first in first out (an
   * operation, a {@link PartitionSpecificRunnable}). A write's eviction pass runs in the write
   * operation's afterRun, on the thread that ran the write, after the write's response was sent;
   * a pass queues its continuations on the other partition threads while it runs, and a
   * continuation hands over again only when it settles another pass's doubt
   * ({@code SizeProportionalEvictor}, note 10), which the metric {@code continuations} counts
   * after queueing. Round one queues one task per partition thread and waits for all of them:
   * each runs after what its thread had queued or was running, so every pass of a write whose
   * response the caller has seen has ended, and every continuation it queued is in a queue.
   * Round two runs behind those continuations; while the metric moved during the two rounds, two
   * more run behind what was queued meanwhile. Not covered: writes still under way, and
   * operations that passes send to other members (backup evictions), which the caller orders by
   * draining the sending member first.
   */
  static void drainPartitionThreads(HazelcastInstance... members) throws InterruptedException {
    for (HazelcastInstance member : members) {
      NodeEngine nodeEngine = nodeEngine(member);
      OperationServiceImpl operations = (OperationServiceImpl) nodeEngine.getOperationService();
      // a thread beyond the partition count serves no partition, so runs no pass
      int threads = Math.min(operations.getOperationExecutor().getPartitionThreadCount(),
          nodeEngine.getPartitionService().getPartitionCount());
      MapEvictionProvider provider = MapEvictionProviders.forNode(nodeEngine);
      EvictionMetrics metrics = provider instanceof GcAwareEvictionProvider
          ? ((GcAwareEvictionProvider) provider).metrics() : null;
      long asked;
      do {
        asked = metrics == null ? 0 : metrics.getContinuations();
        drainRounds(member, operations, threads);
      } while (metrics != null && metrics.getContinuations() != asked);
    }
  }

  private static void drainRounds(HazelcastInstance member, OperationServiceImpl operations,
      int threads) throws InterruptedException {
    for (int round = 1; round <= 2; round++) {
      CountDownLatch ran = new CountDownLatch(threads);
      for (int t = 0; t < threads; t++) {
        // partition t runs on partition thread t mod threads = t
        operations.execute(new CountDown(t, ran));
      }
      if (!ran.await(60, TimeUnit.SECONDS)) {
        throw new AssertionError("round " + round + " of draining the partition threads of "
            + member.getName() + ": " + ran.getCount() + " of " + threads
            + " threads did not reach the task within 60 s");
      }
    }
  }

  /**
   * Waits until the partition thread of {@code partitionId} has run what it had queued or was
   * running, as one round of {@link #drainPartitionThreads} does for every thread: for a test
   * that holds another partition thread on purpose.
   */
  static void drainPartitionThreadOf(HazelcastInstance member, int partitionId)
      throws InterruptedException {
    CountDownLatch ran = new CountDownLatch(1);
    ((OperationServiceImpl) nodeEngine(member).getOperationService())
        .execute(new CountDown(partitionId, ran));
    if (!ran.await(60, TimeUnit.SECONDS)) {
      throw new AssertionError("the partition thread of partition " + partitionId + " of "
          + member.getName() + " did not reach the task within 60 s");
    }
  }

  /** Counts a latch down on the partition thread of {@code partitionId}. */
  private static final class CountDown implements PartitionSpecificRunnable {
    private final int partitionId;
    private final CountDownLatch latch;

    CountDown(int partitionId, CountDownLatch latch) {
      this.partitionId = partitionId;
      this.latch = latch;
    }

    @Override
    public int getPartitionId() {
      return partitionId;
    }

    @Override
    public void run() {
      latch.countDown();
    }
  }
}
