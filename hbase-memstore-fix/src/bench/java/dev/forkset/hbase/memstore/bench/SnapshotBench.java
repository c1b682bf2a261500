package dev.forkset.hbase.memstore.bench;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Iterator;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * HBase 2.1.2 {@code memstore.snapshot()} time with N cells, stock DefaultMemStore (stock jar) vs
 * CellCountingMemStore (fork jar + module), in one run. Each iteration fills a fresh memstore
 * (not measured) and times one snapshot. On JDK 8 the stock snapshot walks the skip list
 * (O(N)); on JDK 11+ {@code ConcurrentSkipListMap.size()} is a counter, so both are flat.
 *
 * <p>With {@code sizeOf=jdk8-emulated} the store's skip list is replaced, before any cell is added,
 * by one whose {@code size()} walks the entries as JDK 8's does: an emulation of what a JDK 8
 * RegionServer pays, for machines without a JDK 8. Every other operation is the JDK's own.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 15)
@Fork(value = 1, jvmArgsAppend = {"-Xmx3g", "-XX:+UseG1GC"})
public class SnapshotBench {
  @Param({"10000", "100000", "1000000"})
  public int cells;

  @Param({"stock", "fixed"})
  public String jar;

  @Param({"jdk", "jdk8-emulated"})
  public String sizeOf;

  /** A skip list whose size() counts by walking the entries, as JDK 8's does. */
  static final class WalkingSizeMap extends ConcurrentSkipListMap<Object, Object> {
    private static final long serialVersionUID = 1L;

    WalkingSizeMap(java.util.Comparator<Object> comparator) {
      super(comparator);
    }

    @Override
    public int size() {
      long count = 0;
      for (Iterator<Object> it = keySet().iterator(); it.hasNext(); it.next()) {
        count++;
      }
      return count >= Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) count;
    }
  }

  private Constructor<?> keyValue;
  private Constructor<?> memstoreCtor;
  private Method add;
  private Method snapshot;
  private Method snapshotId;
  private Method clearSnapshot;
  private Method getActive;
  private Method getCellSet;
  private Field delegatee;
  private Object memstore;
  private Object lastSnapshot;
  private final byte[] family = "f".getBytes();
  private final byte[] qualifier = "q".getBytes();
  private final byte[] value = new byte[8];

  @Setup(Level.Trial)
  public void loadJar() throws Exception {
    ClassLoader cl = "stock".equals(jar) ? Hbase212Loaders.stock() : Hbase212Loaders.fixed();
    Thread.currentThread().setContextClassLoader(cl);
    Class<?> chunkCreator = cl.loadClass("org.apache.hadoop.hbase.regionserver.ChunkCreator");
    Class<?> hmm = cl.loadClass("org.apache.hadoop.hbase.regionserver.HeapMemoryManager");
    chunkCreator.getMethod("initialize", int.class, boolean.class, long.class, float.class,
        float.class, hmm).invoke(null, 2 * 1024 * 1024, false, 0L, 0f, 0f, null);
    String ms = "stock".equals(jar) ? "org.apache.hadoop.hbase.regionserver.DefaultMemStore"
        : "org.apache.hadoop.hbase.regionserver.CellCountingMemStore";
    memstoreCtor = cl.loadClass(ms).getConstructor();
    Class<?> cell = cl.loadClass("org.apache.hadoop.hbase.Cell");
    Class<?> sizing = cl.loadClass("org.apache.hadoop.hbase.regionserver.MemStoreSizing");
    keyValue = cl.loadClass("org.apache.hadoop.hbase.KeyValue").getConstructor(byte[].class,
        byte[].class, byte[].class, long.class, byte[].class);
    Class<?> memStore = cl.loadClass("org.apache.hadoop.hbase.regionserver.MemStore");
    add = memStore.getMethod("add", cell, sizing);
    snapshot = memStore.getMethod("snapshot");
    clearSnapshot = memStore.getMethod("clearSnapshot", long.class);
    snapshotId = cl.loadClass("org.apache.hadoop.hbase.regionserver.MemStoreSnapshot")
        .getMethod("getId");
    getActive = cl.loadClass("org.apache.hadoop.hbase.regionserver.AbstractMemStore")
        .getDeclaredMethod("getActive");
    getActive.setAccessible(true);
    getCellSet = cl.loadClass("org.apache.hadoop.hbase.regionserver.Segment")
        .getDeclaredMethod("getCellSet");
    getCellSet.setAccessible(true);
    delegatee = cl.loadClass("org.apache.hadoop.hbase.regionserver.CellSet")
        .getDeclaredField("delegatee");
    delegatee.setAccessible(true);
  }

  @Setup(Level.Iteration)
  public void fill() throws Exception {
    memstore = memstoreCtor.newInstance();
    if ("jdk8-emulated".equals(sizeOf)) {
      Object cellSet = getCellSet.invoke(getActive.invoke(memstore));
      @SuppressWarnings("unchecked")
      NavigableMap<Object, Object> empty = (NavigableMap<Object, Object>) delegatee.get(cellSet);
      @SuppressWarnings("unchecked")
      java.util.Comparator<Object> comparator = (java.util.Comparator<Object>) empty.comparator();
      delegatee.set(cellSet, new WalkingSizeMap(comparator));
    }
    for (int i = 0; i < cells; i++) {
      add.invoke(memstore, keyValue.newInstance(row(i), family, qualifier, 1L, value), null);
    }
    // Collect the fill's garbage now, so that a GC pause is less likely inside the timed snapshot.
    System.gc();
  }

  /** "row-" and 8 decimal digits. */
  private static byte[] row(int i) {
    byte[] r = {'r', 'o', 'w', '-', '0', '0', '0', '0', '0', '0', '0', '0'};
    for (int p = r.length - 1; i > 0; p--, i /= 10) {
      r[p] = (byte) ('0' + i % 10);
    }
    return r;
  }

  @Benchmark
  public Object snapshot() throws Exception {
    lastSnapshot = snapshot.invoke(memstore);
    return lastSnapshot;
  }

  @TearDown(Level.Iteration)
  public void clear() throws Exception {
    clearSnapshot.invoke(memstore, (Long) snapshotId.invoke(lastSnapshot));
    memstore = null;
    lastSnapshot = null;
  }
}
