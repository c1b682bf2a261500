package org.apache.hadoop.hbase.regionserver;

import dev.forkset.memstore.agent.CslmSizeHook;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.MemoryCompactionPolicy;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Durability;
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
 * Runs inside an isolated class loader over ONE hbase-server 2.1.2 jar (stock or custom) and
 * reports, as plain Java values, what a memstore snapshot and a region flush did: how many
 * {@code ConcurrentSkipListMap.size()} calls ran (counted by the CslmSizeHook agent, so the count
 * does not depend on the JDK), how many of them while the region's update lock was held, and what
 * the snapshot and the flush produced. No memstore class key is set: the store gets what HBase
 * picks for the family's in-memory compaction (NONE: DefaultMemStore; BASIC, EAGER:
 * CompactingMemStore), as on a RegionServer with the custom jar dropped in.
 */
public final class SnapshotSizeCallProbe {
  private static final byte[] FAMILY = Bytes.toBytes("f");
  private static final byte[] QUALIFIER = Bytes.toBytes("q");
  /** Prefix of a policy set for every store in the configuration instead of the family. */
  public static final String GLOBAL = "site:";
  /** Region flush size of the probe's tables: small, so CompactingMemStore flushes in memory. */
  private static final long FLUSH_SIZE = 4L << 20;

  private SnapshotSizeCallProbe() {}

  /** Counts size() calls on one thread, and those made while a lock's write side is held. */
  static final class SizeCalls implements Runnable {
    final Thread thread = Thread.currentThread();
    final AtomicLong all = new AtomicLong();
    final AtomicLong underLock = new AtomicLong();
    final AtomicReference<Throwable> firstUnderLock = new AtomicReference<>();
    private final ReentrantReadWriteLock lock;

    SizeCalls(ReentrantReadWriteLock lock) {
      this.lock = lock;
    }

    @Override
    public void run() {
      if (Thread.currentThread() != thread) {
        return;
      }
      all.incrementAndGet();
      if (lock != null && lock.isWriteLockedByCurrentThread()) {
        underLock.incrementAndGet();
        firstUnderLock.compareAndSet(null, new Throwable("size() under the update lock"));
      }
    }
  }

  /**
   * Loads {@code cells} cells and {@code increments} increment rounds on 50 counters (the family
   * keeps one version, so increments go through upsert and remove cells) into a region whose
   * family uses {@code policy} (NONE, BASIC, EAGER; or "site:BASIC": the family says nothing and
   * hbase.hregion.compacting.memstore.type=BASIC is in the configuration); snapshots its memstore directly; then loads the same into a second
   * region, flushes it and reads it back.
   */
  public static Map<String, Object> run(String policy, int cells, int increments)
      throws Exception {
    if (!CslmSizeHook.installed()) {
      throw new IllegalStateException("The CslmSizeAgent is not loaded (-javaagent)");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    java.nio.file.Path root = Files.createTempDirectory("snapshot-probe");
    Configuration conf = HBaseConfiguration.create();
    MemoryCompactionPolicy compaction = null;
    if (policy.startsWith(GLOBAL)) {
      // The seed's advice: the type in hbase-site.xml, the family says nothing.
      conf.set(CompactingMemStore.COMPACTING_MEMSTORE_TYPE_KEY, policy.substring(GLOBAL.length()));
    } else {
      compaction = MemoryCompactionPolicy.valueOf(policy);
    }
    conf.set(HConstants.HBASE_DIR, root.toUri().toString());
    conf.set("hbase.wal.provider", "filesystem");
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    ChunkCreator.initialize(MemStoreLAB.CHUNK_SIZE_DEFAULT, false, 0, 0, 0, null);

    // 1. snapshot() and the MemStoreSnapshot it returns, on a directly driven store.
    HRegion region = open(conf, root, "direct", compaction);
    try {
      HStore store = region.getStore(FAMILY);
      out.put("memstoreClass", store.memstore.getClass().getName());
      load(region, cells, increments);
      SizeCalls calls = new SizeCalls(null);
      Runnable previous = CslmSizeHook.listen(calls);
      MemStoreSnapshot snapshot;
      try {
        snapshot = store.memstore.snapshot();
        snapshot.getCellsCount();
      } finally {
        CslmSizeHook.listen(previous);
      }
      out.put("snapshotSizeCalls", calls.all.get());
      Map<String, Object> reported = new LinkedHashMap<>();
      reported.put("cellsCount", snapshot.getCellsCount());
      reported.put("dataSize", snapshot.getDataSize());
      reported.put("heapSize", snapshot.getMemStoreSize().getHeapSize());
      reported.put("offHeapSize", snapshot.getMemStoreSize().getOffHeapSize());
      reported.put("timeRangeMin", snapshot.getTimeRangeTracker().getMin());
      reported.put("tagsPresent", snapshot.isTagsPresent());
      long iterated = 0;
      MessageDigest digest = sha256();
      for (KeyValueScanner scanner : snapshot.getScanners()) {
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
    region = open(conf, root, "flush", compaction);
    try {
      HStore store = region.getStore(FAMILY);
      load(region, cells, increments);
      SizeCalls calls = new SizeCalls(updatesLock(region));
      Runnable previous = CslmSizeHook.listen(calls);
      HRegion.FlushResult result;
      try {
        result = region.flush(true);
      } finally {
        CslmSizeHook.listen(previous);
      }
      out.put("flushSizeCalls", calls.all.get());
      out.put("flushSizeCallsUnderLock", calls.underLock.get());
      Throwable first = calls.firstUnderLock.get();
      if (first != null) {
        java.io.StringWriter trace = new java.io.StringWriter();
        first.printStackTrace(new java.io.PrintWriter(trace));
        out.put("firstSizeCallUnderLock", trace.toString());
      }
      out.put("flushResult", result.getResult().name());
      out.put("memstoreAfterFlush", region.getMemStoreDataSize());
      MessageDigest digest = sha256();
      long read = 0;
      try (RegionScanner scanner = region.getScanner(new Scan())) {
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
      out.put("storeFiles", store.getStorefilesCount());
    } finally {
      region.close();
      region.getWAL().close();
    }
    return out;
  }

  static ReentrantReadWriteLock updatesLock(HRegion region) throws ReflectiveOperationException {
    Field f = HRegion.class.getDeclaredField("updatesLock");
    f.setAccessible(true);
    return (ReentrantReadWriteLock) f.get(region);
  }

  static HRegion open(Configuration conf, java.nio.file.Path root, String name,
      MemoryCompactionPolicy compaction) throws IOException {
    TableDescriptor td = TableDescriptorBuilder.newBuilder(TableName.valueOf(name))
        .setMemStoreFlushSize(FLUSH_SIZE)
        .setColumnFamily(compaction == null
            ? ColumnFamilyDescriptorBuilder.newBuilder(FAMILY).setMaxVersions(1).build()
            : ColumnFamilyDescriptorBuilder.newBuilder(FAMILY).setMaxVersions(1)
                .setInMemoryCompaction(compaction).build())
        .build();
    RegionInfo ri = RegionInfoBuilder.newBuilder(td.getTableName()).build();
    Path rootDir = new Path(root.resolve(name).toUri().toString());
    Configuration walConf = new Configuration(conf);
    walConf.set(HConstants.HBASE_DIR, rootDir.toString());
    WAL wal = new WALFactory(walConf, "probe-" + name).getWAL(ri);
    return HRegion.createHRegion(ri, rootDir, conf, td, wal, true);
  }

  /** Puts {@code cells} small cells in batches of 1000, then {@code increments} increment rounds. */
  static void load(HRegion region, int cells, int increments) throws IOException {
    final int batch = 1000;
    for (int i = 0; i < cells; i += batch) {
      int n = Math.min(batch, cells - i);
      Put[] puts = new Put[n];
      for (int j = 0; j < n; j++) {
        puts[j] = new Put(Bytes.toBytes(String.format("row-%08d", i + j)), 1000L + i + j)
            .addColumn(FAMILY, QUALIFIER, Bytes.toBytes(i + j));
        puts[j].setDurability(Durability.SKIP_WAL);
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
