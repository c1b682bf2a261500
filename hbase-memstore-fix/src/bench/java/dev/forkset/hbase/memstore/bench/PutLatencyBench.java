package dev.forkset.hbase.memstore.bench;

import dev.forkset.hbase.memstore.MemstoreFixConfig;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.MemoryCompactionPolicy;
import org.apache.hadoop.hbase.StartMiniClusterOption;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.regionserver.FlushLockHoldListener;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Put latency on a real minicluster (custom 2.6.4 jar, WAL on HDFS) under a steady closed-loop put
 * load with a flush every few seconds: DefaultMemStore (IN_MEMORY_COMPACTION NONE) vs
 * CompactingMemStore BASIC, in the same run and JVM, alternating phases. Also collects every
 * flush's update-lock hold through the FlushLockHoldListener hook. Arguments: Markdown output,
 * PNG output, seconds per phase (default 40), writer threads (default 4).
 */
public final class PutLatencyBench {
  private static final byte[] CF = Bytes.toBytes("f");
  private static final byte[] Q = Bytes.toBytes("q");
  private static final int KEYSPACE = 2_000_000;
  private static final int VALUE_BYTES = 100;
  private static final long FLUSH_EVERY_MS = 4_000;

  private PutLatencyBench() {}

  /** Latencies and holds of one policy, over all its phases. */
  private static final class Result {
    final String name;
    final List<long[]> latencies = new ArrayList<>();
    final List<Long> holdsNanos = new ArrayList<>();
    long puts;
    double seconds;

    Result(String name) {
      this.name = name;
    }

    long[] sortedLatencies() {
      int n = 0;
      for (long[] l : latencies) {
        n += l.length;
      }
      long[] all = new long[n];
      int i = 0;
      for (long[] l : latencies) {
        System.arraycopy(l, 0, all, i, l.length);
        i += l.length;
      }
      Arrays.sort(all);
      return all;
    }
  }

  public static void main(String[] args) throws Exception {
    File md = new File(args[0]);
    File png = new File(args[1]);
    int phaseSeconds = args.length > 2 ? Integer.parseInt(args[2]) : 40;
    int writers = args.length > 3 ? Integer.parseInt(args[3]) : 4;

    Configuration conf = HBaseConfiguration.create();
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    conf.set(MemstoreFixConfig.RS_COPROCESSORS_KEY, MemstoreFixConfig.COPROCESSOR);
    conf.set(MemstoreFixConfig.REGION_COPROCESSORS_KEY, MemstoreFixConfig.COPROCESSOR);
    HBaseTestingUtility util = new HBaseTestingUtility(conf);
    util.startMiniCluster(StartMiniClusterOption.builder().numRegionServers(1).numDataNodes(1)
        .build());
    try {
      Result none = new Result("DefaultMemStore (NONE)");
      Result basic = new Result("CompactingMemStore BASIC");
      TableName tNone = create(util, "lat_none", MemoryCompactionPolicy.NONE, none);
      TableName tBasic = create(util, "lat_basic", MemoryCompactionPolicy.BASIC, basic);
      Connection conn = util.getConnection();
      run(conn, util.getAdmin(), tNone, 10, writers, null); // warm-up, not recorded
      run(conn, util.getAdmin(), tBasic, 10, writers, null);
      for (int round = 0; round < 2; round++) {
        run(conn, util.getAdmin(), tNone, phaseSeconds / 2, writers, none);
        run(conn, util.getAdmin(), tBasic, phaseSeconds / 2, writers, basic);
      }
      report(md, png, phaseSeconds, writers, none, basic);
    } finally {
      util.shutdownMiniCluster();
    }
  }

  private static TableName create(HBaseTestingUtility util, String name,
      MemoryCompactionPolicy policy, Result result) throws Exception {
    TableName t = TableName.valueOf(name);
    util.getAdmin().createTable(TableDescriptorBuilder.newBuilder(t).setColumnFamily(
        ColumnFamilyDescriptorBuilder.newBuilder(CF).setInMemoryCompaction(policy).build())
        .build());
    util.waitTableAvailable(t);
    for (HRegion r : util.getMiniHBaseCluster().getRegionServer(0).getRegions(t)) {
      FlushLockHoldListener l = (region, held, cells, size) -> {
        synchronized (result) {
          if (result.latencies.size() > 0) {
            result.holdsNanos.add(held);
          }
        }
      };
      r.addFlushLockHoldListener(l);
    }
    return t;
  }

  /** Closed-loop writers for {@code seconds}, a flush every FLUSH_EVERY_MS. */
  private static void run(Connection conn, Admin admin, TableName table, int seconds,
      int writers, Result result) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    long[][] lat = new long[writers][];
    int[] counts = new int[writers];
    Thread[] threads = new Thread[writers];
    Throwable[] failure = new Throwable[1];
    if (result != null) {
      synchronized (result) {
        result.latencies.add(new long[0]); // marks recording on for the hold listener
      }
    }
    for (int w = 0; w < writers; w++) {
      final int id = w;
      threads[w] = new Thread(() -> {
        long[] mine = new long[1 << 16];
        int n = 0;
        byte[] value = new byte[VALUE_BYTES];
        try (Table t = conn.getTable(table)) {
          while (System.nanoTime() < end) {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            rnd.nextBytes(value);
            Put p = new Put(Bytes.toBytes(String.format("k%08d", rnd.nextInt(KEYSPACE))))
                .addColumn(CF, Q, value);
            long t0 = System.nanoTime();
            t.put(p);
            long dt = System.nanoTime() - t0;
            if (n == mine.length) {
              mine = Arrays.copyOf(mine, n * 2);
            }
            mine[n++] = dt;
          }
        } catch (Throwable e) {
          failure[0] = e;
        }
        lat[id] = Arrays.copyOf(mine, n);
        counts[id] = n;
      }, "writer-" + w);
      threads[w].start();
    }
    long start = System.nanoTime();
    while (System.nanoTime() < end) {
      Thread.sleep(Math.min(FLUSH_EVERY_MS,
          Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
      if (System.nanoTime() < end) {
        admin.flush(table);
      }
    }
    for (Thread t : threads) {
      t.join();
    }
    if (failure[0] != null) {
      throw new IOException("writer failed", failure[0]);
    }
    if (result != null) {
      synchronized (result) {
        for (long[] l : lat) {
          result.latencies.add(l);
          result.puts += l.length;
        }
        result.seconds += (System.nanoTime() - start) / 1e9;
      }
    }
  }

  private static double pct(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int i = (int) Math.min(sorted.length - 1, Math.ceil(p / 100.0 * sorted.length) - 1);
    return sorted[Math.max(0, i)] / 1e6;
  }

  private static void report(File md, File png, int phaseSeconds, int writers, Result... results)
      throws IOException {
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "%d writer threads, closed loop, %d-byte values over %,d"
        + " keys, a flush every %d s, %d s per memstore (two alternating phases each), 1"
        + " RegionServer minicluster with HDFS WAL, JVM %s %s.%n%n", writers, VALUE_BYTES,
        KEYSPACE, FLUSH_EVERY_MS / 1000, phaseSeconds, System.getProperty("java.vm.name"),
        System.getProperty("java.version")));
    s.append("| memstore | puts | puts/s | P50 ms | P99 ms | P99.9 ms | max ms | flushes |"
        + " hold P50 ms | hold max ms |\n");
    s.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    String[] groups = {"P50", "P99", "P99.9"};
    double[][] chart = new double[results.length][groups.length];
    for (int r = 0; r < results.length; r++) {
      Result res = results[r];
      long[] l = res.sortedLatencies();
      long[] holds = res.holdsNanos.stream().mapToLong(Long::longValue).sorted().toArray();
      chart[r] = new double[] {pct(l, 50), pct(l, 99), pct(l, 99.9)};
      s.append(String.format(Locale.ROOT,
          "| %s | %,d | %,.0f | %.2f | %.2f | %.2f | %.1f | %d | %.3f | %.3f |%n", res.name,
          res.puts, res.puts / res.seconds, pct(l, 50), pct(l, 99), pct(l, 99.9),
          l.length == 0 ? 0 : l[l.length - 1] / 1e6, holds.length, pct(holds, 50),
          holds.length == 0 ? 0 : holds[holds.length - 1] / 1e6));
    }
    md.getParentFile().mkdirs();
    Files.write(md.toPath(), s.toString().getBytes(StandardCharsets.UTF_8));
    System.out.print(s);
    String[] names = new String[results.length];
    for (int r = 0; r < results.length; r++) {
      names[r] = results[r].name;
    }
    BarChart.write(png, "HBase 2.6.4 put latency under flushes, JDK "
        + System.getProperty("java.specification.version"), "milliseconds", groups, names, chart);
  }
}
