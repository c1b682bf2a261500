package org.apache.hadoop.hbase.regionserver;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
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
import org.junit.After;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

/**
 * The cells count the custom 2.1.2 jar keeps instead of walking the skip list stays exact while
 * many writers (more threads than cores) put duplicate keys and increment counters (upserts,
 * which remove older versions) and a flusher snapshots the region again and again, for
 * DefaultMemStore and CompactingMemStore BASIC and EAGER (in-memory flushes and compactions run
 * meanwhile). Every snapshot, taken under the region's update lock as a flush takes it, reports
 * the number of cells its scanners return; so does every segment once the writers stop. The
 * snapshots are then flushed to files: no increment is lost.
 */
@RunWith(Parameterized.class)
public class TestCellsCountUnderConcurrentWrites {
  private static final byte[] PUTS = Bytes.toBytes("d");
  private static final byte[] COUNTERS = Bytes.toBytes("c");
  private static final byte[] Q = Bytes.toBytes("q");
  private static final int WRITERS = 8;
  /** Rows the writers share: every put of a row, qualifier and timestamp replaces a cell. */
  private static final int ROWS = 2_000;
  private static final int TIMESTAMPS = 3;
  private static final int COUNTER_ROWS = 64;
  private static final int SNAPSHOTS = 12;

  @Parameters(name = "{0}")
  public static Collection<Object[]> policies() {
    return Arrays.asList(new Object[][] {{"NONE"}, {"BASIC"}, {"EAGER"}});
  }

  private final MemoryCompactionPolicy policy;
  private HRegion region;
  private WAL wal;

  public TestCellsCountUnderConcurrentWrites(String policy) {
    this.policy = MemoryCompactionPolicy.valueOf(policy);
  }

  @BeforeClass
  public static void freshChunkCreator() {
    ChunkCreator.instance = null;
  }

  @Before
  public void openRegion() throws Exception {
    java.nio.file.Path root = Files.createTempDirectory("cells-count");
    Configuration conf = HBaseConfiguration.create();
    conf.set(HConstants.HBASE_DIR, root.toUri().toString());
    conf.set("hbase.wal.provider", "filesystem");
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    ChunkCreator.initialize(MemStoreLAB.CHUNK_SIZE_DEFAULT, false, 0, 0, 0, null);
    TableDescriptor td = TableDescriptorBuilder.newBuilder(TableName.valueOf("count"))
        // small: CompactingMemStore flushes in memory (and compacts) often
        .setMemStoreFlushSize(8L << 20)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(PUTS).setMaxVersions(TIMESTAMPS)
            .setInMemoryCompaction(policy).build())
        // one version: increments go through upsert, which removes the older cells
        .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(COUNTERS).setMaxVersions(1)
            .setInMemoryCompaction(policy).build())
        .build();
    RegionInfo ri = RegionInfoBuilder.newBuilder(td.getTableName()).build();
    wal = new WALFactory(conf, "count").getWAL(ri);
    region = HRegion.createHRegion(ri, new Path(root.toUri().toString()), conf, td, wal, true);
  }

  @After
  public void closeRegion() throws Exception {
    if (region != null) {
      region.close(true);
      wal.close();
    }
  }

  /** Reported and iterated cells of one snapshot or segment. */
  private static String check(String what, int reported, List<KeyValueScanner> scanners)
      throws Exception {
    long iterated = 0;
    for (KeyValueScanner scanner : scanners) {
      for (Cell c = scanner.next(); c != null; c = scanner.next()) {
        iterated++;
      }
      scanner.close();
    }
    return reported == iterated ? null
        : what + " reports " + reported + " cells, its scanners return " + iterated;
  }

  @Test
  public void cellsCountStaysExactUnderConcurrentPutsUpsertsAndFlushes() throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicLongArray increments = new AtomicLongArray(COUNTER_ROWS);
    AtomicLong puts = new AtomicLong();
    CountDownLatch started = new CountDownLatch(WRITERS);
    List<Thread> writers = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      final int id = w;
      Thread t = new Thread(() -> {
        started.countDown();
        long n = id;
        try {
          while (!stop.get()) {
            n = n * 6364136223846793005L + 1442695040888963407L;
            int row = (int) ((n >>> 33) % ROWS);
            long ts = 1 + (n >>> 20) % TIMESTAMPS;
            // No WAL: the memstore, not the disk, is what the writers race on.
            region.put(new Put(Bytes.toBytes(String.format("r%05d", row)))
                .addColumn(PUTS, Q, ts, Bytes.toBytes(n)).setDurability(Durability.SKIP_WAL));
            puts.incrementAndGet();
            int counter = (int) ((n >>> 40) % COUNTER_ROWS);
            region.increment(new Increment(Bytes.toBytes(String.format("c%03d", counter)))
                .addColumn(COUNTERS, Q, 1).setDurability(Durability.SKIP_WAL));
            increments.incrementAndGet(counter);
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "writer-" + w);
      writers.add(t);
      t.start();
    }
    started.await();
    // The first flush must find something to flush.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (puts.get() == 0 && failure.get() == null && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }

    ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
    int checked = 0;
    try {
      for (int i = 0; i < SNAPSHOTS && failure.get() == null; i++) {
        Thread.sleep(50);
        // As a flush does: snapshot every store under the update lock ...
        List<MemStoreSnapshot> snapshots = new ArrayList<>();
        region.blockUpdates();
        try {
          for (HStore store : region.getStores()) {
            snapshots.add(store.memstore.snapshot());
          }
        } finally {
          region.unblockUpdates();
        }
        // ... then, with the writers going on, compare the counts with the cells; the flush
        // below writes these snapshots (snapshot() returns the pending one).
        for (MemStoreSnapshot s : snapshots) {
          String problem = check("snapshot " + i, s.getCellsCount(), s.getScanners());
          if (problem != null) {
            wrong.add(problem);
          }
          checked++;
        }
        HRegion.FlushResult flushed = region.flush(true);
        assertTrue(flushed.toString(), flushed.isFlushSucceeded());
      }
    } finally {
      stop.set(true);
      for (Thread t : writers) {
        t.join(TimeUnit.SECONDS.toMillis(60));
      }
    }
    if (failure.get() != null) {
      throw new AssertionError("writer failed", failure.get());
    }
    for (HStore store : region.getStores()) {
      for (Segment segment : ((AbstractMemStore) store.memstore).getSegments()) {
        String problem = check(store.getColumnFamilyName() + " segment " + segment,
            segment.getCellsCount(), segment.getScanners(Long.MAX_VALUE));
        if (problem != null) {
          wrong.add(problem);
        }
      }
    }
    System.out.println(policy + ": " + puts.get() + " puts and " + sum(increments)
        + " increments by " + WRITERS + " writers, " + checked + " snapshots checked");
    assertTrue(String.valueOf(wrong), wrong.isEmpty());
    assertTrue("too few writes to mean anything: " + puts.get(), puts.get() > 10 * SNAPSHOTS);

    // Every increment is in the counters once everything is flushed.
    assertTrue(region.flush(true).isFlushSucceeded());
    long[] found = new long[COUNTER_ROWS];
    try (RegionScanner scanner = region.getScanner(new Scan().addFamily(COUNTERS))) {
      List<Cell> row = new ArrayList<>();
      boolean more;
      do {
        more = scanner.next(row);
        for (Cell c : row) {
          int counter = Integer.parseInt(Bytes.toString(CellUtil.cloneRow(c)).substring(1));
          found[counter] = Bytes.toLong(CellUtil.cloneValue(c));
        }
        row.clear();
      } while (more);
    }
    for (int c = 0; c < COUNTER_ROWS; c++) {
      assertEquals("counter " + c, increments.get(c), found[c]);
    }
  }

  private static long sum(AtomicLongArray a) {
    long s = 0;
    for (int i = 0; i < a.length(); i++) {
      s += a.get(i);
    }
    return s;
  }
}
