package org.apache.hadoop.hbase.regionserver;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.MemoryCompactionPolicy;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionInfoBuilder;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.wal.WAL;
import org.apache.hadoop.hbase.wal.WALFactory;

/**
 * Runs in a class loader over one hbase-server 2.1.2 jar (stock or custom) and times
 * {@code MemStore.snapshot()} of a store filled with a given number of cells: the call a flush
 * makes under the region's update lock. The fill is not timed; a {@code System.gc()} and, for
 * CompactingMemStore, the end of any in-memory flush come before each timed call, which holds
 * the region's update lock as a flush does.
 */
public final class SnapshotTimeProbe {
  private static final byte[] FAMILY = Bytes.toBytes("f");
  private static final byte[] QUALIFIER = Bytes.toBytes("q");
  private static final byte[] VALUE = new byte[16];
  /** Cells written after the in-memory flushes settled. */
  private static final int LAST = 10;

  private SnapshotTimeProbe() {}

  /**
   * For each entry of {@code rounds}, fills the (emptied) memstore with that many cells and times
   * {@code snapshot()}; returns the nanoseconds of each call. One class loader, one region for
   * all rounds, so the sizes compare with equally warm code: interleave them.
   */
  public static List<Long> time(String policy, int[] rounds) throws Exception {
    java.nio.file.Path root = Files.createTempDirectory("snapshot-time");
    Configuration conf = HBaseConfiguration.create();
    conf.set(HConstants.HBASE_DIR, root.toUri().toString());
    conf.set("hbase.wal.provider", "filesystem");
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    // CompactingMemStore: flush in memory every ~200 KB, so both sizes snapshot a pipeline of
    // several segments (a composite snapshot), not the small size one segment and the large
    // size several.
    conf.setDouble(CompactingMemStore.IN_MEMORY_FLUSH_THRESHOLD_FACTOR_KEY, 0.0002);
    ChunkCreator.initialize(MemStoreLAB.CHUNK_SIZE_DEFAULT, false, 0, 0, 0, null);
    TableDescriptor td = TableDescriptorBuilder.newBuilder(TableName.valueOf("time"))
        // every round's cells stay in memory (no blocking)
        .setMemStoreFlushSize(1L << 30)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(FAMILY)
            .setInMemoryCompaction(MemoryCompactionPolicy.valueOf(policy)).build())
        .build();
    RegionInfo ri = RegionInfoBuilder.newBuilder(td.getTableName()).build();
    Path rootDir = new Path(root.toUri().toString());
    WAL wal = new WALFactory(conf, "time").getWAL(ri);
    HRegion region = HRegion.createHRegion(ri, rootDir, conf, td, wal, true);
    List<Long> nanos = new ArrayList<>();
    try {
      HStore store = region.getStore(FAMILY);
      for (int cells : rounds) {
        fill(region, 0, cells - LAST);
        awaitInMemoryFlushes(store);
        // A few cells after the last in-memory flush: every round snapshots a non-empty active
        // segment (the same code path at both sizes).
        fill(region, cells - LAST, cells);
        awaitInMemoryFlushes(store);
        System.gc();
        // As a flush does: under the update lock, so no in-memory flush pushes meanwhile.
        region.blockUpdates();
        MemStoreSnapshot snapshot;
        try {
          long start = System.nanoTime();
          snapshot = store.memstore.snapshot();
          nanos.add(System.nanoTime() - start);
        } finally {
          region.unblockUpdates();
        }
        if (snapshot.getCellsCount() != cells) {
          throw new IllegalStateException(snapshot.getCellsCount() + " cells, expected " + cells);
        }
        store.memstore.clearSnapshot(snapshot.getId());
        region.decrMemStoreSize(snapshot.getMemStoreSize());
      }
    } finally {
      region.close(true);
      wal.close();
    }
    return nanos;
  }

  private static void awaitInMemoryFlushes(HStore store) throws InterruptedException {
    if (store.memstore instanceof CompactingMemStore) {
      CompactingMemStore cms = (CompactingMemStore) store.memstore;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (cms.isMemStoreFlushingInMemory() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
    }
  }

  private static void fill(HRegion region, int from, int to) throws Exception {
    final int batch = 10_000;
    for (int i = from; i < to; i += batch) {
      int n = Math.min(batch, to - i);
      Put[] puts = new Put[n];
      for (int j = 0; j < n; j++) {
        puts[j] = new Put(Bytes.toBytes(String.format("row-%08d", i + j)))
            .addColumn(FAMILY, QUALIFIER, VALUE);
        puts[j].setDurability(Durability.SKIP_WAL);
      }
      region.batchMutate(puts);
    }
  }
}
