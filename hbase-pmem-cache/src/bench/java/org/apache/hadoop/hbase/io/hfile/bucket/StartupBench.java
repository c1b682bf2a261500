package org.apache.hadoop.hbase.io.hfile.bucket;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.hfile.HFileBlock;

import org.apache.hbase.thirdparty.com.google.protobuf.CodedOutputStream;

import org.apache.hadoop.hbase.shaded.protobuf.generated.BucketCacheProtos;

/**
 * Start-up of a terabyte cache: the RegionServer-side open of a persisted map of {@code entries}
 * blocks of {@code blockSize}, without a terabyte of data. The cache files are created (and, for
 * the module engine, preallocated and formatted) by a first BucketCache of the full capacity, whose
 * clean stop writes the map's details (capacity, classes, deserializers, the files' digest) in
 * the custom jar's own format; the bench then writes the entries after those details as
 * {@code BackingMap} chunks of {@code hbase.bucketcache.persistence.chunksize} entries (the
 * default, as the persister writes them: the bytes of {@code BackingMap.writeDelimitedTo}, written
 * entry by entry so that the generator does not hold a chunk), and times a second BucketCache's
 * constructor, and how long the cache takes to be enabled (serving) and to have its recovered blocks
 * checked: with {@code hbase.bucketcache.persistence.retrieve.async} (patch 0106, {@code async})
 * the constructor returns at once and the map is read in the background; without it (and with any
 * jar before 2.6.4-fork.6, which ignores the setting) the constructor returns with the cache
 * enabled.
 *
 * <p>Keys as in a real cache: {@code files} HFiles of 32-hex-digit names, each with
 * {@code entries / files} blocks at consecutive block offsets; the file lists the entries in a
 * scattered order (a ConcurrentHashMap's walk), each in its own slot of the allocator.
 *
 * <p>Engines: {@code pmem} is the module engine (two files, each preallocated with fallocate: a
 * filesystem with that much space, e.g. a loop-mounted sparse ext4 image, see
 * docs/hbase-pmem-cache.md "Start-up at 1 TiB"); its background pass then checks every block and
 * evicts those whose header is not there (the bench writes no block bytes), so only the open is
 * timed. {@code file} is the custom jar's FileIOEngine on one sparse file: its map passes the
 * files' digest and nothing runs after the open, so the heap the map holds is measured there (after
 * a full GC, and by class with {@code jcmd GC.class_histogram}).
 *
 * <p>Arguments: scratch dir, engine (pmem|file), capacity in GiB, entries, files, block size,
 * output file (a Markdown row is appended), and optionally {@code sync} (the default),
 * {@code async} or {@code default} (the setting left unset: the jar's own default), then optionally {@code nocheck} (the row's check time is then -1: the module
 * engine's pass is not waited for). The same compiled bench runs against either jar (it uses no API of 0106).
 */
public final class StartupBench {
  private StartupBench() {}

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1);
    }
    System.exit(0); // BucketCache's threads are not daemons; no final checkpoint of 16M blocks
  }

  private static void run(String[] args) throws Exception {
    File dir = new File(args[0], "forkset-startup-bench");
    String engine = args[1];
    long capacity = Long.parseLong(args[2]) << 30;
    int entries = Integer.parseInt(args[3]);
    int files = Integer.parseInt(args[4]);
    int blockSize = Integer.parseInt(args[5]);
    PrintStream out = new PrintStream(new FileOutputStream(args[6], true), true, "UTF-8");
    // sync or async set hbase.bucketcache.persistence.retrieve.async; default leaves it unset, so
    // each jar runs its own default (sync before 2.6.4-fork.7, async from it on).
    String mode = args.length > 7 ? args[7] : "sync";
    if (!mode.equals("sync") && !mode.equals("async") && !mode.equals("default")) {
      throw new IllegalArgumentException("mode is " + mode + ": use sync, async or default");
    }
    // The module engine's pass evicts every block here, at about 0.1 ms each: 16M take too long.
    boolean awaitCheck = args.length <= 8 || !"nocheck".equals(args[8]);
    int itemSize = blockSize + 1024;
    if ((long) entries * itemSize > capacity) {
      throw new IllegalArgumentException(entries + " blocks of " + itemSize + " bytes do not fit in "
          + (capacity >> 30) + " GiB");
    }
    BenchFiles.delete(dir);
    dir.mkdirs();
    Configuration conf = HBaseConfiguration.create();
    conf.setLong("hbase.bucketcache.persist.intervalinmillis", 3_600_000);
    if (!mode.equals("default")) {
      conf.setBoolean("hbase.bucketcache.persistence.retrieve.async", mode.equals("async"));
    }
    String io;
    if ("pmem".equals(engine)) {
      new File(dir, "p0").mkdirs();
      new File(dir, "p1").mkdirs();
      io = "pmem:" + dir + "/p0/cache," + dir + "/p1/cache";
    } else if ("file".equals(engine)) {
      io = "file:" + dir + "/cache";
    } else {
      throw new IllegalArgumentException("engine is " + engine + ": use pmem or file");
    }
    String map = dir + "/map";
    int[] sizes = {itemSize};
    // The deserializer HBase registers when HFileBlock loads: a real map names it.
    int deserializer = HFileBlock.BLOCK_DESERIALIZER.getDeserializerIdentifier();
    try {
      long t0 = System.nanoTime();
      BucketCache first =
          new BucketCache(io, capacity, blockSize, sizes, 3, 64, map, 60_000, conf);
      long formatMs = (System.nanoTime() - t0) / 1_000_000;
      long chunkSize = first.getPersistenceChunkSize();
      // Its clean stop persists the map's details: not before the (empty) map is read.
      while (!first.isCacheEnabled()) {
        Thread.sleep(10);
      }
      first.shutdown();

      t0 = System.nanoTime();
      long mapBytes = writeMap(new File(map), entries, files, blockSize, itemSize, chunkSize,
          deserializer);
      long writeMs = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf("format %d ms, map of %,d bytes written in %d ms%n", formatMs, mapBytes,
          writeMs);

      MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
      System.gc();
      System.gc();
      long heapBefore = memory.getHeapMemoryUsage().getUsed();
      t0 = System.nanoTime();
      BucketCache second =
          new BucketCache(io, capacity, blockSize, sizes, 3, 64, map, 60_000, conf);
      long openMs = (System.nanoTime() - t0) / 1_000_000;
      // Polled: the bench reads the state the RegionServer's reads see.
      while (!second.isCacheEnabled()) {
        Thread.sleep(10);
      }
      long enabledMs = (System.nanoTime() - t0) / 1_000_000;
      int recovered = second.backingMap.size();
      System.out.printf("constructor %d ms, enabled after %d ms with %,d entries%n", openMs,
          enabledMs, recovered);
      if (recovered == 0) {
        throw new IllegalStateException("nothing recovered: see the log for why");
      }
      // The recovered blocks' check (the module engine's pass, which here evicts every block: the
      // bench writes no block headers) ends with the map validated.
      while (awaitCheck && !second.getBackingMapValidated().get()) {
        Thread.sleep(100);
      }
      long checkedMs = awaitCheck ? (System.nanoTime() - t0) / 1_000_000 : -1;
      String heap = "-";
      String histogram = "";
      if ("file".equals(engine)) {
        System.gc();
        System.gc();
        long held = memory.getHeapMemoryUsage().getUsed() - heapBefore;
        heap = String.format(Locale.ROOT, "%,d MiB (%d B/entry)", held >> 20, held / recovered);
        histogram = histogram(recovered);
      }
      out.printf(Locale.ROOT,
          "| %s | %s | %,d GiB | %,d | %,d | %,d MiB | %,d | %,d ms | %,d ms | %,d ms | %,d | %s |%n",
          engine, mode, capacity >> 30, entries, files, mapBytes >> 20,
          chunkSize, openMs, enabledMs, checkedMs, recovered, heap);
      if (!histogram.isEmpty()) {
        out.print(histogram);
      }
      // Enabled and serving: a lookup of a key of the map answers (a miss once the pass evicted it;
      // on the module engine it evicts every block, the map is then empty).
      for (org.apache.hadoop.hbase.io.hfile.BlockCacheKey key : second.backingMap.keySet()) {
        second.getBlock(key, false, false, false);
        break;
      }
    } finally {
      BenchFiles.delete(dir);
    }
  }

  /**
   * Writes what {@code BucketProtoUtils.serializeAsPB} writes for such a map: the magic and the
   * details the first cache persisted, then the entries in chunks. A chunk is the bytes of
   * {@code BackingMap.writeDelimitedTo}: its length, then each entry as field 1.
   */
  static long writeMap(File map, int entries, int files, int blockSize, int itemSize,
      long chunkSize, int deserializer) throws IOException {
    BucketCacheProtos.BucketCacheEntry details;
    try (InputStream in = new FileInputStream(map)) {
      byte[] magic = new byte[BucketProtoUtils.PB_MAGIC_V2.length];
      if (in.read(magic) != magic.length) {
        throw new IOException(map + " has no magic");
      }
      details = BucketCacheProtos.BucketCacheEntry.parseDelimitedFrom(in);
    }
    Integer index = null;
    for (Map.Entry<Integer, String> d : details.getDeserializersMap().entrySet()) {
      if (d.getValue().equals(HFileBlock.BlockDeserializer.class.getName())) {
        index = d.getKey();
      }
    }
    if (index == null) {
      throw new IOException("the persisted deserializers do not name HFileBlock's: "
          + details.getDeserializersMap());
    }
    Random random = new Random(42);
    List<String> names = new ArrayList<>(files);
    for (int f = 0; f < files; f++) {
      names.add(String.format(Locale.ROOT, "%016x%016x", random.nextLong(), random.nextLong()));
    }
    int perFile = (entries + files - 1) / files;
    // A stride coprime to the entry count walks every entry once in a scattered order.
    long stride = 1_000_003L;
    while (gcd(stride, entries) != 1) {
      stride += 2;
    }
    long now = System.currentTimeMillis();
    File tmp = new File(map.getPath() + ".bench");
    long written;
    try (OutputStream os = new BufferedOutputStream(new FileOutputStream(tmp), 1 << 20)) {
      CodedOutputStream cos = CodedOutputStream.newInstance(os, 1 << 16);
      cos.writeRawBytes(BucketProtoUtils.PB_MAGIC_V2);
      cos.writeUInt32NoTag(details.getSerializedSize());
      details.writeTo(cos);
      for (long from = 0; from < entries; from += chunkSize) {
        int to = (int) Math.min(entries, from + chunkSize);
        long length = 0;
        for (int slot = (int) from; slot < to; slot++) {
          length += CodedOutputStream.computeMessageSize(1,
              entry(slot, names, perFile, stride, entries, blockSize, itemSize, index, now));
        }
        cos.writeUInt32NoTag((int) length);
        for (int slot = (int) from; slot < to; slot++) {
          cos.writeMessage(1,
              entry(slot, names, perFile, stride, entries, blockSize, itemSize, index, now));
        }
      }
      cos.flush();
      written = cos.getTotalBytesWritten();
    }
    Files.move(tmp.toPath(), map.toPath(), StandardCopyOption.REPLACE_EXISTING);
    return written;
  }

  private static BucketCacheProtos.BackingMapEntry entry(int slot, List<String> names,
      int perFile, long stride, int entries, int blockSize, int itemSize, int deserializer,
      long now) {
    int block = (int) ((slot * stride) % entries);
    String name = names.get(block / perFile);
    long fileOffset = (long) (block % perFile) * (blockSize + 33);
    return BucketCacheProtos.BackingMapEntry.newBuilder()
        .setKey(BucketCacheProtos.BlockCacheKey.newBuilder().setHfilename(name)
            .setOffset(fileOffset).setPrimaryReplicaBlock(true)
            .setBlockType(BucketCacheProtos.BlockType.data))
        .setValue(BucketCacheProtos.BucketEntry.newBuilder().setOffset((long) slot * itemSize)
            .setLength(blockSize + 33 + 32).setDiskSizeWithHeader(blockSize + 33)
            .setDeserialiserIndex(deserializer).setAccessCounter(slot)
            .setPriority(slot % 4 == 0 ? BucketCacheProtos.BlockPriority.multi
                : BucketCacheProtos.BlockPriority.single)
            .setCachedTime(now - (entries - slot)))
        .build();
  }

  private static long gcd(long a, long b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  /** The live classes of the map's objects, from this JVM's own class histogram (a full GC). */
  private static String histogram(int entries) throws Exception {
    String pid = ManagementFactory.getRuntimeMXBean().getName().split("@")[0];
    Process p = new ProcessBuilder(System.getProperty("java.home") + "/bin/jcmd", pid,
        "GC.class_histogram").redirectErrorStream(true).start();
    byte[] text = readAll(p.getInputStream());
    p.waitFor();
    StringBuilder sb = new StringBuilder();
    long total = 0;
    for (String line : new String(text, StandardCharsets.UTF_8).split("\n")) {
      String[] f = line.trim().split("\\s+");
      if (f.length < 4 || !f[0].endsWith(":")) {
        continue;
      }
      long count = Long.parseLong(f[1]);
      long bytes = Long.parseLong(f[2]);
      // Classes with at least one instance per 16 entries, and the map's tables.
      if (count >= entries / 16 || bytes >= 64L << 20) {
        total += bytes;
        sb.append(String.format(Locale.ROOT, "|   | %s | %,d instances | %,d MiB | %.1f B/entry |%n",
            f[3], count, bytes >> 20, bytes / (double) entries));
      }
    }
    sb.append(String.format(Locale.ROOT, "|   | those classes | | %,d MiB | %.1f B/entry |%n",
        total >> 20, total / (double) entries));
    return sb.toString();
  }

  private static byte[] readAll(InputStream in) throws IOException {
    java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) > 0;) {
      b.write(buf, 0, n);
    }
    return b.toByteArray();
  }
}
