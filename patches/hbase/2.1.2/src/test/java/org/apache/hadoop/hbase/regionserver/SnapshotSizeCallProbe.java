package org.apache.hadoop.hbase.regionserver;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionInfoBuilder;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.wal.WAL;
import org.apache.hadoop.hbase.wal.WALFactory;

/**
 * Runs inside an isolated class loader over ONE hbase-server 2.1.2 jar (stock, or the fork jar plus
 * the hbase-memstore-fix module) and reports, as plain Java values, what a memstore snapshot did:
 * how many times {@code size()} was called on the store's skip list (through {@code CellSet.size()}
 * or directly), and what the snapshot and the flush produced. The same code runs against both jars
 * in one JVM; SnapshotSizeCallsTest compares the two.
 *
 * <p>The count does not depend on the JDK: the store's cell set gets a {@link CountingSkipListMap}
 * as its backing map before any cell is added, so every {@code size()} call is counted whether it
 * is O(n) (JDK 8) or O(1) (JDK 11+).
 */
public final class SnapshotSizeCallProbe {
  private static final byte[] FAMILY = Bytes.toBytes("f");
  private static final byte[] QUALIFIER = Bytes.toBytes("q");
  /** The O(1) memstore of the module; the stock jar ignores this key for the default memstore. */
  private static final String MEMSTORE = "org.apache.hadoop.hbase.regionserver.CellCountingMemStore";

  private SnapshotSizeCallProbe() {}

  /** A skip list that counts its {@code size()} calls. */
  static final class CountingSkipListMap extends ConcurrentSkipListMap<Cell, Cell> {
    private static final long serialVersionUID = 1L;
    final AtomicLong sizeCalls = new AtomicLong();

    CountingSkipListMap(Comparator<? super Cell> comparator) {
      super(comparator);
    }

    @Override
    public int size() {
      sizeCalls.incrementAndGet();
      return super.size();
    }
  }

  /**
   * Loads {@code cells} cells (plus {@code increments} rounds of increments on a VERSIONS=1 family,
   * which go through upsert), snapshots the memstore directly, then in a second region flushes
   * the same data and reads it back.
   */
  public static Map<String, Object> run(int cells, int increments) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    java.nio.file.Path root = Files.createTempDirectory("snapshot-probe");
    Configuration conf = HBaseConfiguration.create();
    conf.set(HConstants.HBASE_DIR, root.toUri().toString());
    conf.set(HStore.MEMSTORE_CLASS_NAME, MEMSTORE);
    conf.set("hbase.wal.provider", "filesystem");
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    ChunkCreator.initialize(MemStoreLAB.CHUNK_SIZE_DEFAULT, false, 0, 0, 0, null);

    // 1. snapshot() and the MemStoreSnapshot it returns, on a directly driven store.
    HRegion region = open(conf, root, "direct");
    try {
      HStore store = region.getStore(FAMILY);
      out.put("memstoreClass", store.memstore.getClass().getName());
      CountingSkipListMap map = countSizeCalls(store);
      load(region, cells, increments);
      long beforeSnapshot = map.sizeCalls.get();
      MemStoreSnapshot snapshot = store.memstore.snapshot();
      Map<String, Object> reported = new LinkedHashMap<>();
      reported.put("cellsCount", snapshot.getCellsCount());
      reported.put("dataSize", snapshot.getDataSize());
      reported.put("heapSize", snapshot.getMemStoreSize().getHeapSize());
      reported.put("offHeapSize", snapshot.getMemStoreSize().getOffHeapSize());
      reported.put("timeRangeMin", snapshot.getTimeRangeTracker().getMin());
      reported.put("tagsPresent", snapshot.isTagsPresent());
      List<KeyValueScanner> scanners = snapshot.getScanners();
      out.put("snapshotSizeCalls", map.sizeCalls.get() - beforeSnapshot);
      out.put("loadSizeCalls", beforeSnapshot);
      long iterated = 0;
      MessageDigest digest = sha256();
      for (KeyValueScanner scanner : scanners) {
        for (Cell c = scanner.next(); c != null; c = scanner.next()) {
          iterated++;
          update(digest, c);
        }
        scanner.close();
      }
      out.put("snapshot", reported);
      out.put("snapshotCellsIterated", iterated);
      out.put("snapshotDigest", Bytes.toHex(digest.digest()));
      store.memstore.clearSnapshot(snapshot.getId());
    } finally {
      region.close(true);
      region.getWAL().close();
    }

    // 2. the same data through a real region flush, then read back from the store file.
    region = open(conf, root, "flush");
    try {
      HStore store = region.getStore(FAMILY);
      CountingSkipListMap map = countSizeCalls(store);
      load(region, cells, increments);
      long beforeFlush = map.sizeCalls.get();
      HRegion.FlushResult result = region.flush(true);
      out.put("flushSizeCalls", map.sizeCalls.get() - beforeFlush);
      out.put("flushResult", result.getResult().name());
      out.put("storeFiles", store.getStorefilesCount());
      long entries = 0;
      for (HStoreFile f : store.getStorefiles()) {
        entries += f.getReader().getEntries();
      }
      out.put("storeFileEntries", entries);
      out.put("memstoreAfterFlush", region.getMemStoreDataSize());
      MessageDigest digest = sha256();
      long read = 0;
      try (RegionScanner scanner = region.getScanner(new Scan().readAllVersions())) {
        List<Cell> row = new ArrayList<>();
        boolean more;
        do {
          more = scanner.next(row);
          for (Cell c : row) {
            read++;
            update(digest, c);
          }
          row.clear();
        } while (more);
      }
      out.put("flushedCellsRead", read);
      out.put("flushedDigest", Bytes.toHex(digest.digest()));
    } finally {
      region.close();
      region.getWAL().close();
    }
    return out;
  }

  private static HRegion open(Configuration conf, java.nio.file.Path root, String name)
      throws IOException {
    TableDescriptor td = TableDescriptorBuilder.newBuilder(TableName.valueOf(name))
        .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(FAMILY).setMaxVersions(1)
            .build())
        .build();
    RegionInfo ri = RegionInfoBuilder.newBuilder(td.getTableName()).build();
    Path rootDir = new Path(root.resolve(name).toUri().toString());
    Configuration walConf = new Configuration(conf);
    walConf.set(HConstants.HBASE_DIR, rootDir.toString());
    WAL wal = new WALFactory(walConf, "probe-" + name).getWAL(ri);
    return HRegion.createHRegion(ri, rootDir, conf, td, wal, true);
  }

  /** Gives the active segment's cell set a counting backing map (it is still empty). */
  private static CountingSkipListMap countSizeCalls(HStore store) throws ReflectiveOperationException {
    CellSet cellSet = ((AbstractMemStore) store.memstore).getActive().getCellSet();
    Field delegatee = CellSet.class.getDeclaredField("delegatee");
    delegatee.setAccessible(true);
    @SuppressWarnings("unchecked")
    NavigableMap<Cell, Cell> old = (NavigableMap<Cell, Cell>) delegatee.get(cellSet);
    if (!old.isEmpty()) {
      throw new IllegalStateException("active segment not empty");
    }
    CountingSkipListMap map = new CountingSkipListMap(old.comparator());
    delegatee.set(cellSet, map);
    return map;
  }

  /** Puts {@code cells} small cells in batches of 1000, then {@code increments} increment rounds. */
  private static void load(HRegion region, int cells, int increments) throws IOException {
    final int batch = 1000;
    for (int i = 0; i < cells; i += batch) {
      int n = Math.min(batch, cells - i);
      Put[] puts = new Put[n];
      for (int j = 0; j < n; j++) {
        puts[j] = new Put(Bytes.toBytes(String.format("row-%08d", i + j)), 1000L + i + j)
            .addColumn(FAMILY, QUALIFIER, Bytes.toBytes(i + j));
      }
      region.batchMutate(puts);
    }
    byte[] counter = Bytes.toBytes("n");
    for (int round = 0; round < increments; round++) {
      for (int r = 0; r < 50; r++) {
        region.increment(new Increment(Bytes.toBytes(String.format("ctr-%04d", r)))
            .addColumn(FAMILY, counter, 1));
      }
    }
  }

  private static MessageDigest sha256() throws NoSuchAlgorithmException {
    return MessageDigest.getInstance("SHA-256");
  }

  /** Digest of what a reader sees: key, type and value (sequence ids and increment times vary). */
  private static void update(MessageDigest d, Cell c) {
    d.update(CellUtil.cloneRow(c));
    d.update(CellUtil.cloneFamily(c));
    d.update(CellUtil.cloneQualifier(c));
    d.update(c.getTypeByte());
    d.update(CellUtil.cloneValue(c));
    if (!Bytes.equals(CellUtil.cloneQualifier(c), Bytes.toBytes("n"))) {
      d.update(Bytes.toBytes(c.getTimestamp()));
    }
  }
}
