package dev.forkset.hazelcast.eviction;

import com.hazelcast.client.impl.protocol.DataFrameSink;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.internal.partition.IPartitionService;
import com.hazelcast.internal.serialization.Data;
import com.hazelcast.logging.ILogger;
import com.hazelcast.map.impl.EntryCostEstimator;
import com.hazelcast.map.impl.MapEntries;
import com.hazelcast.map.impl.MapService;
import com.hazelcast.map.impl.MapServiceContext;
import com.hazelcast.map.impl.eviction.EvictionChecker;
import com.hazelcast.map.impl.eviction.Evictor;
import com.hazelcast.map.impl.eviction.MapEvictionProvider;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.recordstore.RecordStore;
import com.hazelcast.spi.eviction.EvictionPolicyComparator;
import com.hazelcast.spi.impl.NodeEngine;
import com.hazelcast.spi.impl.NodeEngineImpl;
import com.hazelcast.spi.properties.HazelcastProperty;
import dev.forkset.hazelcast.chunked.ChunkSize;
import dev.forkset.hazelcast.chunked.ChunkedFrameSink;
import java.lang.management.ManagementFactory;
import java.util.BitSet;
import java.util.List;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The module's {@link MapEvictionProvider} ({@value GcAwareEvictionConfig#PROVIDER_NAME}):
 * {@link GcAwareEntryCostEstimator} for BINARY maps, {@link SizeProportionalEvictor} for maps
 * with eviction, {@link Admission} of owner writes ({@link MapsWithoutEviction} for maps without
 * an evictor: the in-flight rule only). One instance per member, made by
 * ServiceLoader, initialised when the member's map service starts and shut down with it.
 *
 * <p>Implementation note: it keeps no per-map state. A map's evictor lives in its map container
 * (so a destroyed map's evictor, pools and footprint go with its container), and the hook hands
 * it back with every call; the provider does not call the container itself, since
 * {@code MapContainer} is a class on Hazelcast 5.3 and an interface on 5.5+ and no call on it
 * links on both lines (the one read it needs, a map's backup count for {@link MapsWithoutEviction},
 * goes through a method handle).
 */
public final class GcAwareEvictionProvider implements MapEvictionProvider {
  private NodeEngine nodeEngine;
  private GcAwareEvictionConfig config;
  private GcFootprintModel model;
  private EvictionMetrics metrics;
  private int entryOverhead;
  private ChunkSize chunking = ChunkSize.never();
  private MapsWithoutEviction withoutEviction;
  private ObjectName mbeanName;

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
    this.chunking = chunking(config, model);
    logger.info("GC footprint model: " + model.describe() + "; entry overhead " + entryOverhead
        + " B; stored values: " + chunking + "; " + config);
    this.metrics = new EvictionMetrics(model, config.toString(), this::mapView);
    this.withoutEviction = new MapsWithoutEviction(nodeEngine, metrics, config.inFlightHeapPercent,
        Runtime.getRuntime().maxMemory());
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
      mbeanName = name;
    } catch (Exception | LinkageError e) {
      logger.fine("JMX registration failed: " + e);
    }
  }

  @Override
  public void shutdown() {
    ObjectName name = mbeanName;
    mbeanName = null;
    if (name == null) {
      return;
    }
    try {
      ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
    } catch (Exception | LinkageError e) {
      nodeEngine.getLogger(GcAwareEvictionProvider.class).fine("JMX unregistration failed: " + e);
    }
  }

  /** Sum of the cost estimates (or sizes) of a map's record stores on this member. */
  private long mapView(String mapName, boolean cost) {
    MapService service = nodeEngine.getService(MapService.SERVICE_NAME);
    MapServiceContext context = service.getMapServiceContext();
    long sum = 0;
    int partitions = nodeEngine.getPartitionService().getPartitionCount();
    for (int pid = 0; pid < partitions; pid++) {
      RecordStore<?> store = context.getExistingRecordStore(pid, mapName);
      if (store != null) {
        sum += cost ? store.getOwnedEntryCost() : store.size();
      }
    }
    return sum;
  }

  /**
   * How values are stored: chunked only where the custom jar asks for the stored copy
   * ({@code MapEvictionProvider#storedValue}, 5.7.0 revision 4 on); elsewhere a value stays one
   * array and is costed as one, whatever the setting says.
   */
  static ChunkSize chunking(GcAwareEvictionConfig config, GcFootprintModel model) {
    if (config.chunkedValues == 0 || !storedValueHookPresent()) {
      return ChunkSize.never();
    }
    return config.chunkedValues > 0 ? ChunkSize.fixed(model, config.chunkedValues)
        : ChunkSize.of(model);
  }

  private static boolean storedValueHookPresent() {
    try {
      MapEvictionProvider.class.getMethod("storedValue", Data.class);
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  public ChunkSize chunking() {
    return chunking;
  }

  /**
   * The copy of a BINARY value the record store keeps (called by the custom jar wherever a
   * record's value is set, and once before the MapStore on an owner's put): chunked when it is
   * larger than the collector takes as one array (custom jars of revision 4 on, both lines). No
   * {@code @Override}: an older hook has no such method, and this jar runs on it.
   */
  public Data storedValue(Data value) {
    return chunking.storedCopy(value);
  }

  /**
   * Where a client's value for a BINARY map is read as it arrives (called by the custom jar of
   * revision 9 on, both lines, on the member's I/O threads): straight into the chunks of its
   * stored copy when {@link #storedValue} would chunk it, so the member never holds it as one
   * array; {@code null} (one array, as stock) otherwise, and for other in-memory formats, which
   * deserialize the value rather than store it. From revision 10 on the values the map only
   * compares with its stored ones (replace(k, old, new)'s old, remove(k, v)'s, containsValue's)
   * and the values of a client's transactional writes come here too and are read into chunks
   * alike: a {@code ChunkedData} equals the stored value
   * of the same bytes in either layout. No {@code @Override}: an older hook has no such method,
   * and this jar runs on it.
   */
  public DataFrameSink valueFrameSink(String mapName, int size) {
    if (!chunking.chunks(size)
        || nodeEngine.getConfig().findMapConfig(mapName).getInMemoryFormat() != InMemoryFormat.BINARY) {
      return null;
    }
    return ChunkedFrameSink.of(size, chunking.chunkSize());
  }

  public GcFootprintModel model() {
    return model;
  }

  public EvictionMetrics metrics() {
    return metrics;
  }

  @Override
  public EntryCostEstimator<Data, Record> newEntryCostEstimator(RecordStore recordStore,
      MapConfig mapConfig, Evictor evictor) {
    if (mapConfig.getInMemoryFormat() != InMemoryFormat.BINARY) {
      return null;
    }
    if (evictor instanceof SizeProportionalEvictor) {
      return ((SizeProportionalEvictor) evictor).newEstimator(model, entryOverhead,
          recordStore.getPartitionId(), chunking);
    }
    // No eviction (yet): an evictor a config update makes binds it to the map's total.
    return new GcAwareEntryCostEstimator(model, entryOverhead,
        SizeProportionalEvictor.countsCachedValues(mapConfig), null, null,
        recordStore.getPartitionId(), chunking);
  }

  @Override
  public Evictor newEvictor(String mapName, MapConfig mapConfig, EvictionPolicyComparator policy,
      EvictionChecker evictionChecker, int batchSize, IPartitionService partitionService) {
    return new SizeProportionalEvictor(mapName, mapConfig, policy, evictionChecker, batchSize,
        partitionService, nodeEngine, config, metrics);
  }

  @Override
  public void beforeWrite(RecordStore recordStore, Evictor evictor, List<Data> keys,
      List<Data> values) {
    if (evictor instanceof SizeProportionalEvictor) {
      ((SizeProportionalEvictor) evictor).beforeWrite(recordStore, keys, values);
    } else if (evictor == Evictor.NULL_EVICTOR) {
      withoutEviction.beforeWrite(recordStore, values);
    }
  }

  @Override
  public boolean beforeMerge(RecordStore recordStore, Evictor evictor, List<Data> keys,
      List<Data> values) {
    if (evictor instanceof SizeProportionalEvictor) {
      return ((SizeProportionalEvictor) evictor).beforeMerge(recordStore, keys, values);
    }
    return evictor != Evictor.NULL_EVICTOR
        || withoutEviction.beforeMerge(recordStore, values);
  }

  @Override
  public BitSet mergeBatchDrops(RecordStore recordStore, Evictor evictor, List<Data> keys,
      List<Data> values) {
    if (evictor instanceof SizeProportionalEvictor) {
      return ((SizeProportionalEvictor) evictor).mergeBatchDrops(recordStore, keys, values);
    }
    return evictor == Evictor.NULL_EVICTOR
        ? withoutEviction.mergeBatchDrops(recordStore, keys, values) : new BitSet();
  }

  @Override
  public void beforeTransactionalWrite(String mapName, Evictor evictor, Data key, Data value) {
    if (evictor instanceof SizeProportionalEvictor) {
      ((SizeProportionalEvictor) evictor).beforeTransactionalWrite(key, value, model,
          entryOverhead, chunking);
    } else if (evictor == Evictor.NULL_EVICTOR && mapName != null) {
      withoutEviction.beforeTransactionalWrite(mapName, value);
    }
  }

  /**
   * The same through a hook before revision 8 (5.7.0-fork.8, 5.3.8-fork.8), which asked only
   * about maps with eviction and did not pass the map's name. No {@code @Override}: this jar runs
   * on it.
   */
  public void beforeTransactionalWrite(Evictor evictor, Data key, Data value) {
    beforeTransactionalWrite(null, evictor, key, value);
  }

  @Override
  public int[] putAllOperationEnds(String mapName, Evictor evictor, MapEntries[] batches) {
    if (evictor instanceof SizeProportionalEvictor) {
      return ((SizeProportionalEvictor) evictor).putAllOperationEnds(batches);
    }
    return evictor == Evictor.NULL_EVICTOR && mapName != null
        ? withoutEviction.putAllOperationEnds(mapName, batches) : null;
  }

  /** The same through a hook before revision 8; see {@link #beforeTransactionalWrite}. */
  public int[] putAllOperationEnds(Evictor evictor, MapEntries[] batches) {
    return putAllOperationEnds(null, evictor, batches);
  }

  @Override
  public void beforeComputedWrite(RecordStore recordStore, Evictor evictor, Data key,
      Object value) {
    if (evictor instanceof SizeProportionalEvictor) {
      ((SizeProportionalEvictor) evictor).beforeComputedWrite(recordStore, key, value);
    } else if (evictor == Evictor.NULL_EVICTOR) {
      withoutEviction.beforeComputedWrite(recordStore, value);
    }
  }

  /**
   * The values a multi-key entry processor computed for one partition's batch, together, before
   * any is stored (revision 7 on, both lines; offloaded MapStore steps only). No {@code @Override}: an
   * older hook has no such method, and this jar runs on it.
   */
  public void beforeComputedWrites(RecordStore recordStore, Evictor evictor, List<Data> keys,
      List<Object> values) {
    if (evictor instanceof SizeProportionalEvictor) {
      ((SizeProportionalEvictor) evictor).beforeComputedWrites(values);
    } else if (evictor == Evictor.NULL_EVICTOR) {
      withoutEviction.beforeComputedWrites(recordStore, values);
    }
  }
}
