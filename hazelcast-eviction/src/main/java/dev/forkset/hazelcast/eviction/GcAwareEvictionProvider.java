package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.EvictionConfig;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.internal.partition.IPartitionService;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.logging.ILogger;
import com.hazelcast.map.impl.EntryCostEstimator;
import com.hazelcast.map.impl.eviction.EvictionChecker;
import com.hazelcast.map.impl.eviction.Evictor;
import com.hazelcast.map.impl.eviction.MapEvictionProvider;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.eviction.EvictionPolicyComparator;
import com.hazelcast.spi.impl.NodeEngine;
import com.hazelcast.spi.impl.NodeEngineImpl;
import com.hazelcast.spi.properties.HazelcastProperty;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The module's {@link MapEvictionProvider} ({@value GcAwareEvictionConfig#PROVIDER_NAME}):
 * {@link GcAwareEntryCostEstimator} for BINARY maps, {@link SizeProportionalEvictor} for maps
 * with eviction, and rejection of entries larger than a map's per-member heap limit.
 * One instance per member, made by ServiceLoader and initialised at member start.
 */
public final class GcAwareEvictionProvider implements MapEvictionProvider {
  private NodeEngine nodeEngine;
  private GcAwareEvictionConfig config;
  private GcFootprintModel model;
  private EvictionMetrics metrics;
  private int entryOverhead;
  /**
   * This member's evictors by map name. The provider keeps them itself instead of asking the
   * record store's MapContainer: MapContainer is a class on Hazelcast 5.3 and an interface on
   * 5.5+, so no call on it links on both lines, and this jar runs on both.
   */
  private final Map<String, SizeProportionalEvictor> evictors = new ConcurrentHashMap<>();

  @Override
  public String name() {
    return GcAwareEvictionConfig.PROVIDER_NAME;
  }

  @Override
  public void init(NodeEngine nodeEngine) {
    this.nodeEngine = nodeEngine;
    ILogger logger = nodeEngine.getLogger(GcAwareEvictionProvider.class);
    this.config = GcAwareEvictionConfig.read(
        name -> nodeEngine.getProperties().getString(new HazelcastProperty(name)));
    GcModelSelector.Selection selection = GcModelSelector.select(config, VmGc.current());
    this.model = selection.model;
    this.entryOverhead = config.entryOverhead >= 0 ? config.entryOverhead
        : (model.referenceSize() == 4 ? 72 : 96);
    if (selection.warning != null) {
      logger.warning(selection.warning);
    }
    logger.info("GC footprint model: " + model.describe() + "; entry overhead " + entryOverhead
        + " B; " + config);
    this.metrics = new EvictionMetrics(model, config.toString(), this::mapView);
    try {
      // Through NodeEngineImpl: NodeEngine.getMetricsRegistry() is not on the 5.3 interface.
      if (nodeEngine instanceof NodeEngineImpl) {
        ((NodeEngineImpl) nodeEngine).getMetricsRegistry()
            .registerStaticMetrics(metrics, "map.eviction.gcaware");
      }
    } catch (RuntimeException e) {
      logger.fine("Metrics registration failed: " + e);
    }
    registerMBean(logger);
  }

  private void registerMBean(ILogger logger) {
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      String instance = nodeEngine.getHazelcastInstance().getName();
      ObjectName name = new ObjectName("dev.forkset.hazelcast:type=GcAwareEviction,instance="
          + ObjectName.quote(instance));
      if (server.isRegistered(name)) {
        server.unregisterMBean(name);
      }
      server.registerMBean(metrics, name);
    } catch (Exception | LinkageError e) {
      logger.fine("JMX registration failed: " + e);
    }
  }

  private long mapView(String mapName, boolean cost) {
    com.hazelcast.map.impl.MapService service =
        nodeEngine.getService(com.hazelcast.map.impl.MapService.SERVICE_NAME);
    com.hazelcast.map.impl.MapServiceContext context = service.getMapServiceContext();
    long sum = 0;
    int partitions = nodeEngine.getPartitionService().getPartitionCount();
    for (int pid = 0; pid < partitions; pid++) {
      RecordStore store = context.getExistingRecordStore(pid, mapName);
      if (store != null) {
        sum += cost ? store.getOwnedEntryCost() : store.size();
      }
    }
    return sum;
  }

  public GcFootprintModel model() {
    return model;
  }

  public EvictionMetrics metrics() {
    return metrics;
  }

  @Override
  public EntryCostEstimator<Data, Record> newEntryCostEstimator(RecordStore recordStore) {
    if (recordStore.getInMemoryFormat() != InMemoryFormat.BINARY) {
      return null;
    }
    return new GcAwareEntryCostEstimator(model, entryOverhead);
  }

  @Override
  public Evictor newEvictor(String mapName, MapConfig mapConfig, EvictionPolicyComparator policy,
      EvictionChecker evictionChecker, int batchSize, IPartitionService partitionService) {
    SizeProportionalEvictor evictor = new SizeProportionalEvictor(mapName, mapConfig, policy,
        evictionChecker, batchSize, partitionService, nodeEngine, config, metrics);
    // A destroyed and recreated map gets a new container, and so a new evictor: the last wins.
    evictors.put(mapName, evictor);
    return evictor;
  }

  @Override
  public void checkNewEntry(RecordStore recordStore, Data key, Object value) {
    SizeProportionalEvictor evictor = evictors.get(recordStore.getName());
    if (evictor == null) {
      return; // no eviction configured for this map: nothing to admit or reject against
    }
    evictor.admit(recordStore);
    if (!config.rejectOversized || !(value instanceof Data)) {
      return;
    }
    EvictionConfig eviction = evictor.evictionConfig();
    MaxSizePolicy policy = eviction.getMaxSizePolicy();
    if (policy != MaxSizePolicy.USED_HEAP_SIZE && policy != MaxSizePolicy.USED_HEAP_PERCENTAGE) {
      return;
    }
    if (eviction.getEvictionPolicy() == com.hazelcast.config.EvictionPolicy.NONE
        && eviction.getComparator() == null && eviction.getComparatorClassName() == null) {
      return;
    }
    if (!(recordStore.getStorage().getEntryCostEstimator() instanceof GcAwareEntryCostEstimator)) {
      return;
    }
    GcAwareEntryCostEstimator estimator =
        (GcAwareEntryCostEstimator) recordStore.getStorage().getEntryCostEstimator();
    long cost = entryOverhead + estimator.dataCost(key) + estimator.dataCost((Data) value);
    long limit = SizeProportionalEvictor.limitBytes(eviction);
    if (cost > limit) {
      metrics.rejected.increment();
      throw new IllegalArgumentException("Map '" + recordStore.getName() + "': the entry needs "
          + cost + " bytes of heap on this member (" + ((Data) value).totalSize()
          + " serialized bytes under the " + model.kind().value + " footprint model), more than"
          + " the map's whole per-member limit of " + limit + " bytes (" + policy + " "
          + eviction.getSize() + "). It is rejected rather than evicting every entry or running"
          + " out of memory. Raise the limit or store smaller values.");
    }
  }
}
