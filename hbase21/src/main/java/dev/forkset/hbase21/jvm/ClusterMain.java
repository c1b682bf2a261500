package dev.forkset.hbase21.jvm;

import dev.forkset.childjvm.ChildMain;
import java.io.FileInputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.MemoryCompactionPolicy;
import org.apache.hadoop.hbase.PerformanceEvaluation;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.HStore;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Entry point of the JVM that runs an HBase 2.1.2 minicluster for {@code Hbase21Cluster}: HDFS
 * (one DataNode), ZooKeeper, a master and one RegionServer, all in this JVM, on whichever
 * hbase-server jar the class path holds. It takes one command per line on stdin (through
 * {@link ChildMain}, which halts this JVM when the test JVM is gone) and answers each
 * with one line on stdout, {@code @@ <n> ok key=value<TAB>key=value...} or {@code @@ <n> error
 * message}, n counting the commands read (0 answers the start: {@code Hbase21Cluster}'s
 * CommandChannel);
 * everything else this JVM prints goes to stderr.
 *
 * <p>Commands: {@code info}; {@code create <table> <NONE|BASIC|EAGER|default> [family]} (one family,
 * {@code f} unless named, one region, the update-lock probe installed; {@code default} leaves
 * the family's in-memory compaction unset, so the server's setting applies); {@code probe <table>} (installs the
 * probe on the table's regions, for tables created by someone else, idle ones only);
 * {@code load <table> <cells> <first>} (cells straight into the region, batches of 10,000,
 * SKIP_WAL); {@code fill <table> <fraction of flush size> <value size> <keys>} (PE-shaped
 * cells until the memstore is that full); {@code gc}; {@code flush <table>}; {@code holds <table>}; {@code store <table>} (store files and entries of its first family, memstore class, region, whether the probe is on);
 * {@code jmx <object name pattern>}; {@code stop}.
 */
public final class ClusterMain {
  static final byte[] FAMILY = Bytes.toBytes("f");
  private static final byte[] QUALIFIER = Bytes.toBytes("q");
  private static final int BATCH = 10_000;

  private final HBaseTestingUtility util;
  private final PrintStream out;
  private long command; // the number of the command being answered; 0 is the start

  private ClusterMain(HBaseTestingUtility util, PrintStream out) {
    this.util = util;
    this.out = out;
  }

  /** args[0]: a properties file of configuration keys layered over HBase's defaults. */
  public static void main(String[] args) throws Exception {
    PrintStream protocol = System.out;
    System.setOut(System.err);
    Configuration conf = HBaseConfiguration.create();
    Properties site = new Properties();
    try (FileInputStream f = new FileInputStream(args[0])) {
      site.load(f);
    }
    for (String key : site.stringPropertyNames()) {
      conf.set(key, site.getProperty(key));
    }
    HBaseTestingUtility util = new HBaseTestingUtility(conf);
    ClusterMain main = new ClusterMain(util, protocol);
    try {
      util.startMiniCluster(1, 1);
    } catch (Throwable e) {
      main.error(e);
      protocol.flush();
      Runtime.getRuntime().halt(1);
    }
    main.reply(main.info());
    while (true) {
      String line = ChildMain.nextLine(1, TimeUnit.HOURS);
      if (line == null) {
        continue;
      }
      main.command++;
      String[] words = line.trim().split("\\s+");
      try {
        if (words[0].equals("stop")) {
          util.shutdownMiniCluster();
          main.reply(new TreeMap<String, Object>());
          protocol.flush();
          System.exit(0);
        }
        main.reply(main.execute(words));
      } catch (Throwable e) {
        main.error(e);
      }
    }
  }

  private Map<String, Object> execute(String[] w) throws Exception {
    switch (w[0]) {
      case "info":
        return info();
      case "create":
        return create(w[1], w[2], w.length > 3 ? w[3] : "f");
      case "probe":
        return probe(w[1]);
      case "load":
        return load(w[1], Integer.parseInt(w[2]), Long.parseLong(w[3]));
      case "fill":
        return fill(w[1], Double.parseDouble(w[2]), Integer.parseInt(w[3]),
            Integer.parseInt(w[4]));
      case "gc":
        System.gc();
        return new TreeMap<>();
      case "flush":
        return flush(w[1]);
      case "holds":
        return holds(w[1]);
      case "store":
        return store(w[1]);
      case "jmx":
        return jmx(w[1]);
      default:
        throw new IllegalArgumentException("unknown command " + w[0]);
    }
  }

  private Map<String, Object> info() throws Exception {
    Map<String, Object> r = new TreeMap<>();
    r.put("java.version", System.getProperty("java.version"));
    r.put("java.home", System.getProperty("java.home"));
    r.put("zk.port", util.getZkCluster().getClientPort());
    java.net.URL hregion = HRegion.class.getProtectionDomain().getCodeSource().getLocation();
    r.put("hregion.jar", hregion.getPath());
    r.put("patches", ForksetManifest.patches(hregion));
    r.put("pid", ManagementFactory.getRuntimeMXBean().getName().split("@")[0]);
    return r;
  }

  private HRegion region(String table) {
    List<HRegion> regions = util.getMiniHBaseCluster().getRegions(TableName.valueOf(table));
    if (regions.size() != 1) {
      throw new IllegalStateException(table + " has " + regions.size() + " regions, not 1");
    }
    return regions.get(0);
  }

  private Map<String, Object> create(String table, String policy, String family)
      throws Exception {
    ColumnFamilyDescriptorBuilder cf = ColumnFamilyDescriptorBuilder.newBuilder(
        Bytes.toBytes(family));
    if (!policy.equals("default")) {
      cf.setInMemoryCompaction(MemoryCompactionPolicy.valueOf(policy));
    }
    TableName name = TableName.valueOf(table);
    util.getAdmin().createTable(TableDescriptorBuilder.newBuilder(name)
        .setColumnFamily(cf.build()).build());
    util.waitTableAvailable(name);
    return probe(table);
  }

  private Map<String, Object> probe(String table) throws Exception {
    HRegion r = region(table);
    UpdatesLockProbe.install(r);
    Map<String, Object> out = new TreeMap<>();
    out.put("region", r.getRegionInfo().getEncodedName());
    List<String> memstores = new ArrayList<>();
    for (HStore s : r.getStores()) {
      memstores.add(memstore(s).getClass().getName());
    }
    out.put("memstore", String.join(",", memstores));
    return out;
  }

  private static Object memstore(HStore store) throws ReflectiveOperationException {
    Field f = HStore.class.getDeclaredField("memstore");
    f.setAccessible(true);
    return f.get(store);
  }

  /** Row of cell {@code i}: a bijective scramble of i, so cells arrive in random key order. */
  static byte[] row(long i) {
    long k = (i * 0x9E3779B97F4A7C15L) >>> 24;
    return Bytes.toBytes(String.format(Locale.ROOT, "row-%012x", k));
  }

  private Map<String, Object> load(String table, int cells, long first) throws Exception {
    HRegion r = region(table);
    long t0 = System.nanoTime();
    byte[] value = new byte[8];
    for (int i = 0; i < cells; i += BATCH) {
      int n = Math.min(BATCH, cells - i);
      Mutation[] batch = new Mutation[n];
      for (int j = 0; j < n; j++) {
        long c = first + i + j;
        batch[j] = new Put(row(c)).addColumn(FAMILY, QUALIFIER, Bytes.toBytes(c))
            .setDurability(Durability.SKIP_WAL);
      }
      r.batchMutate(batch);
    }
    Map<String, Object> out = new TreeMap<>();
    out.put("ms", (System.nanoTime() - t0) / 1_000_000);
    out.put("dataSize", r.getMemStoreDataSize());
    return out;
  }

  /**
   * Fills the region's memstore with cells shaped as PerformanceEvaluation writes them (row
   * {@code PerformanceEvaluation.format} of a random int below {@code keys}, family info0,
   * qualifier 0, {@code valueSize} random bytes) until its heap size reaches {@code fraction} of
   * the flush size. Straight into the region, SKIP_WAL: a fast way to a nearly full memstore.
   */
  private Map<String, Object> fill(String table, double fraction, int valueSize, int keys)
      throws Exception {
    HRegion r = region(table);
    long target = (long) (fraction * r.getMemStoreFlushSize());
    byte[] family = Bytes.toBytes(PerformanceEvaluation.FAMILY_NAME_BASE + 0);
    java.util.Random rnd = new java.util.Random(42);
    long t0 = System.nanoTime();
    long cells = 0;
    while (r.getMemStoreHeapSize() + r.getMemStoreOffHeapSize() < target) {
      Mutation[] batch = new Mutation[1000];
      for (int j = 0; j < batch.length; j++) {
        byte[] value = new byte[valueSize];
        rnd.nextBytes(value);
        batch[j] = new Put(PerformanceEvaluation.format(rnd.nextInt(keys)))
            .addColumn(family, PerformanceEvaluation.COLUMN_ZERO, value)
            .setDurability(Durability.SKIP_WAL);
      }
      r.batchMutate(batch);
      cells += batch.length;
    }
    Map<String, Object> out = new TreeMap<>();
    out.put("cells", cells);
    out.put("ms", (System.nanoTime() - t0) / 1_000_000);
    out.put("heapSize", r.getMemStoreHeapSize());
    out.put("dataSize", r.getMemStoreDataSize());
    return out;
  }

  private Map<String, Object> flush(String table) throws Exception {
    HRegion r = region(table);
    if (!UpdatesLockProbe.installed(r)) {
      throw new IllegalStateException("no probe on " + table);
    }
    UpdatesLockProbe.drain(table);
    HRegion.FlushResult result = r.flush(true);
    List<UpdatesLockProbe.Hold> holds = UpdatesLockProbe.drain(table);
    if (holds.size() != 1) {
      throw new IllegalStateException("flush of " + table + " took the update lock "
          + holds.size() + " times");
    }
    Map<String, Object> out = store(table);
    out.put("result", result.getResult().name());
    out.put("holdNanos", holds.get(0).holdNanos);
    out.put("waitNanos", holds.get(0).waitNanos);
    out.put("dataSize", holds.get(0).dataSize);
    return out;
  }

  private Map<String, Object> store(String table) throws Exception {
    HRegion r = region(table);
    HStore s = r.getStores().get(0);
    long entries = 0;
    for (HStoreFile f : s.getStorefiles()) {
      entries += f.getReader().getEntries();
    }
    Map<String, Object> out = new TreeMap<>();
    out.put("storeFiles", s.getStorefilesCount());
    out.put("storeFileEntries", entries);
    out.put("memstore", memstore(s).getClass().getName());
    out.put("region", r.getRegionInfo().getEncodedName());
    out.put("probed", UpdatesLockProbe.installed(r));
    return out;
  }

  private Map<String, Object> holds(String table) {
    List<UpdatesLockProbe.Hold> holds = UpdatesLockProbe.drain(table);
    StringBuilder hold = new StringBuilder();
    StringBuilder wait = new StringBuilder();
    StringBuilder size = new StringBuilder();
    StringBuilder end = new StringBuilder();
    for (UpdatesLockProbe.Hold h : holds) {
      String sep = hold.length() == 0 ? "" : ",";
      hold.append(sep).append(h.holdNanos);
      wait.append(sep).append(h.waitNanos);
      size.append(sep).append(h.dataSize);
      end.append(sep).append(h.endMillis);
    }
    Map<String, Object> out = new TreeMap<>();
    out.put("n", holds.size());
    out.put("holdNanos", hold);
    out.put("waitNanos", wait);
    out.put("dataSize", size);
    out.put("endMillis", end);
    return out;
  }

  /** Numeric attributes of the platform MBeans matching the pattern, "bean:attribute=value". */
  private static Map<String, Object> jmx(String pattern) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    Map<String, Object> out = new TreeMap<>();
    Set<ObjectName> names = server.queryNames(new ObjectName(pattern), null);
    for (ObjectName name : names) {
      for (MBeanAttributeInfo a : server.getMBeanInfo(name).getAttributes()) {
        try {
          Object v = server.getAttribute(name, a.getName());
          if (v instanceof Number) {
            out.put(name.getKeyProperty("sub") + ":" + a.getName(), v);
          }
        } catch (Exception | LinkageError e) {
          // attributes that cannot be read are left out
        }
      }
    }
    return out;
  }

  private void reply(Map<String, Object> values) {
    StringBuilder line = new StringBuilder("@@ " + command + " ok");
    String sep = " ";
    for (Map.Entry<String, Object> e : values.entrySet()) {
      line.append(sep).append(e.getKey()).append('=').append(clean(String.valueOf(e.getValue())));
      sep = "\t";
    }
    out.println(line);
    out.flush();
  }

  private void error(Throwable e) {
    e.printStackTrace();
    out.println("@@ " + command + " error " + clean(e.toString()));
    out.flush();
  }

  private static String clean(String s) {
    return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
  }
}
