package dev.forkset.hbase.memstore.bench;

import dev.forkset.hbase21.Hbase21ClassPath;
import dev.forkset.hbase21.ServerJar;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
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
 * HBase 2.1.2 {@code MemStore.snapshot()} time with N cells, DefaultMemStore on the stock jar vs
 * on the custom jar (+ module), in one run, on whatever JDK runs it (the bench profile runs it on
 * JDK 8, where the stock snapshot's {@code ConcurrentSkipListMap.size()} walks every cell). Each
 * iteration fills a fresh memstore in random key order (not measured) and times one snapshot.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3)
@Measurement(iterations = 15)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-XX:+UseG1GC"})
public class SnapshotBench {
  @Param({"10000", "100000", "1000000"})
  public int cells;

  @Param({"stock", "fixed"})
  public String jar;

  private Constructor<?> keyValue;
  private Constructor<?> memstoreCtor;
  private Method add;
  private Method snapshot;
  private Method snapshotId;
  private Method clearSnapshot;
  private Object memstore;
  private Object lastSnapshot;
  private byte[][] rows;
  private final byte[] family = "f".getBytes(StandardCharsets.UTF_8);
  private final byte[] qualifier = "q".getBytes(StandardCharsets.UTF_8);
  private final byte[] value = new byte[8];

  @Setup(Level.Trial)
  public void loadJar() throws Exception {
    ClassLoader cl = Hbase21ClassPath.load()
        .loader("stock".equals(jar) ? ServerJar.STOCK : ServerJar.CUSTOM);
    Thread.currentThread().setContextClassLoader(cl);
    Class<?> chunkCreator = cl.loadClass("org.apache.hadoop.hbase.regionserver.ChunkCreator");
    Class<?> hmm = cl.loadClass("org.apache.hadoop.hbase.regionserver.HeapMemoryManager");
    chunkCreator.getMethod("initialize", int.class, boolean.class, long.class, float.class,
        float.class, hmm).invoke(null, 2 * 1024 * 1024, false, 0L, 0f, 0f, null);
    // The same class on both jars: the custom jar's DefaultMemStore counts its cells.
    String ms = "org.apache.hadoop.hbase.regionserver.DefaultMemStore";
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
    rows = new byte[cells][];
    for (int i = 0; i < cells; i++) {
      rows[i] = row(i);
    }
  }

  /** Row of cell i: a bijective scramble of i, so cells arrive in random key order. */
  static byte[] row(long i) {
    long k = (i * 0x9E3779B97F4A7C15L) >>> 24;
    return String.format(Locale.ROOT, "row-%012x", k).getBytes(StandardCharsets.UTF_8);
  }

  @Setup(Level.Iteration)
  public void fill() throws Exception {
    memstore = memstoreCtor.newInstance();
    for (int i = 0; i < cells; i++) {
      add.invoke(memstore, keyValue.newInstance(rows[i], family, qualifier, 1L, value), null);
    }
    // Collect the fill's garbage now, so that a GC pause is less likely inside the timed snapshot.
    System.gc();
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
