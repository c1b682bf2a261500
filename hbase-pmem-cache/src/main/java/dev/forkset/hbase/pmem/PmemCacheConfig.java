package dev.forkset.hbase.pmem;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;

/**
 * Every setting of the hbase-pmem-cache engine, with its default, the values it accepts and its
 * meaning, and the parsed, checked values of one RegionServer.
 *
 * <p>All settings are RegionServer (site) settings: the block cache belongs to the RegionServer,
 * so there is no table or family scope. A bad value stops the cache at start with an
 * {@link IllegalArgumentException} shaped {@code <key>='<value>' is not valid. Accepted:
 * <accepted>. <how to fix>.} The "Settings" table of docs/hbase-pmem-cache.md is rendered from
 * {@link #settings()} (checked by {@code SettingsDocTest}).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Settings are registered in declaration order; {@link #settings()} lists them in that
 *       order, HBase's own keys that the engine depends on included (marked as such), so the
 *       operator finds every key of a pmem: cache in one table.
 *   <li>Durations end in {@code .ms} and are read with Hadoop's
 *       {@code Configuration.getTimeDuration} (so {@code 500ms}, {@code 10s} work), sizes with
 *       {@code getLongBytes} ({@code 1g}, {@code 64m}), then range-checked.
 *   <li>Paths are resolved to canonical paths here; whether they exist, are writable, collide
 *       or fit their filesystems is checked by {@link StartupChecks} when the cache starts.
 * </ol>
 */
public final class PmemCacheConfig {

  /** One documented setting. */
  public static final class Setting {
    /** The configuration key. */
    public final String name;
    /** The default, as an operator would write it. */
    public final String defaultValue;
    /** The accepted values, in words. */
    public final String accepted;
    /** What the setting does. */
    public final String doc;
    /** True for HBase's own keys, listed here because the engine depends on them. */
    public final boolean hbaseKey;

    Setting(String name, String defaultValue, String accepted, String doc, boolean hbaseKey) {
      this.name = name;
      this.defaultValue = defaultValue;
      this.accepted = accepted;
      this.doc = doc;
      this.hbaseKey = hbaseKey;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  private static final List<Setting> ALL = new ArrayList<>();

  /** Prefix of the hbase.bucketcache.ioengine value this engine serves: pmem:/a/cache,/b/cache. */
  public static final String IOENGINE_PREFIX = "pmem:";

  /** Separator between the cache file paths of one pmem: value. */
  public static final String PATH_SEPARATOR = ",";

  public static final Setting IOENGINE = hbase("hbase.bucketcache.ioengine", "(none)",
      "pmem: followed by one or more absolute file paths separated by commas",
      "The cache files, one per device, e.g. pmem:/mnt/pmem0/hbase/cache,/mnt/pmem1/hbase/cache."
          + " Each file gets a 2 MiB header and about capacity / number of paths of data.");

  public static final Setting SIZE = hbase("hbase.bucketcache.size", "(none)",
      "a size in MB (a number above 1.0)",
      "The cache capacity, split over the paths. Start-up fails when a filesystem cannot hold"
          + " the files placed on it; the files are preallocated.");

  public static final Setting PERSISTENT_PATH = hbase("hbase.bucketcache.persistent.path",
      "(none)", "an absolute file path, not a cache path nor a hard link of one",
      "Where BucketCache checkpoints its backing map. Without it nothing survives a restart.");

  public static final Setting PERSIST_INTERVAL = hbase(
      "hbase.bucketcache.persist.intervalinmillis", "1000", "milliseconds",
      "How often the backing map is checkpointed while the cache runs (only when it changed)."
          + " After a kill -9 or a crash the blocks of the last checkpoint come back, each"
          + " verified; raise it for very large caches (see Checkpoint cost).");

  public static final Setting MAP_DIGEST = hbase(
      "hbase.bucketcache.persistent.file.integrity.check.algorithm", "MD5",
      "a MessageDigest algorithm of the JDK",
      "Digest of the cache files' identity stored in the persisted map; a map whose digest does"
          + " not match the files is moved aside unread.");

  public static final Setting SHUTDOWN_RELEASE_WAIT = hbase(
      "hbase.bucketcache.shutdown.release.wait.ms", "5000", "milliseconds (patch 0060)",
      "How long BucketCache's shutdown waits, after its final checkpoint, for readers (open"
          + " scanners) to release the blocks they hold; then the files are unmapped at once. If"
          + " blocks are still held, one warning says how many and the mappings are left to the"
          + " garbage collector, so those blocks stay readable. Read by BucketCache at start and"
          + " on a configuration reload; a malformed or negative value fails the start (the"
          + " reload keeps the old value) with a message naming the key.");

  public static final Setting RETRIEVE_ASYNC = hbase(
      "hbase.bucketcache.persistence.retrieve.async", "true", "true, false (patch 0106)",
      "true (the default since 2.6.4-fork.7; false in fork.6): BucketCache reads its persisted"
          + " map on a thread of its own (HBASE-28804, as HBase 2.6.5 always does) and the"
          + " RegionServer starts at once; until the map is in, the cache serves and caches"
          + " nothing (reads go to HDFS) and prefetch waits, then the recovered blocks are checked"
          + " in the background as before. A map of 16M blocks (1 TiB of 64 KiB blocks) takes"
          + " minutes to read (see Start-up at 1 TiB). false: the RegionServer's constructor"
          + " reads the map, as in HBase 2.6.4 (its start waits for the read; for code that uses"
          + " a BucketCache right after constructing it without waiting, such as 2.6.4's own"
          + " tests). Another value is logged and taken as the default.");

  public static final Setting SHUTDOWN_RETRIEVAL_WAIT = hbase(
      "hbase.bucketcache.shutdown.retrieval.wait.ms", "10000", "milliseconds (patch 0106)",
      "How long BucketCache's shutdown waits for a thread it stops: the background read of the"
          + " persisted map (it stops at its next entry), and since 2.6.4-fork.9 the writer"
          + " threads and the persister (a checkpoint in flight; for these 0 means 10000, so 0"
          + " skips only the wait for the read, and a wait shorter than a writer's batch or a"
          + " checkpoint takes skips the final checkpoint), each wait bounding a thread stuck on"
          + " the device. Then the thread is interrupted, waited for as long again, and"
          + " the shutdown goes on without it, with one warning; the engine is told that no block"
          + " is released, so its mappings are left to the garbage collector, and when a writer"
          + " or the persister did not stop no final checkpoint is taken (the next start finds the"
          + " last one, as after a crash). Read at start; a malformed or negative value fails the"
          + " start with a message naming the key.");

  public static final Setting ENGINE = add("hbase.bucketcache.pmem.engine", "module",
      "module, stock",
      "module: this engine serves pmem: values; stock: HBase's own SharedMemoryMmapIOEngine"
          + " (one path, no verification).");

  public static final Setting MAPPING_SIZE = add("hbase.bucketcache.pmem.mapping.size", "1g",
      "a power of two from 2m to 1g (bytes, or with a k, m or g suffix)",
      "Size of one memory mapping; the cache uses about capacity / size mappings.");

  public static final Setting MAP_SYNC = add("hbase.bucketcache.pmem.map.sync", "auto",
      "auto, require, off",
      "auto: MAP_SYNC where the filesystem is DAX and the JDK 14+, else one warning per path;"
          + " require: fail at start without MAP_SYNC; off: never.");

  public static final Setting LOCK_WAIT = add("hbase.bucketcache.pmem.lock.wait.ms", "10s",
      "a duration from 0 to 10m (ms, s or m suffix; a bare number is milliseconds)",
      "How long start-up waits for another process to release the cache files (a RegionServer"
          + " still exiting) before it fails naming that process.");

  public static final Setting READ = add("hbase.bucketcache.pmem.read", "copy",
      "copy, mapped",
      "copy: a read takes its block from the cache file with one positional read (pread) into"
          + " a buffer of BucketCache's allocator and checks it (header and checksum) before it"
          + " is served; a page that is gone under the running cache (a file truncated by"
          + " another process, a media error, a punched hole) costs that block (evicted, read"
          + " from HDFS), never the JVM. mapped: zero copy, a read hands out a view of the"
          + " mapped file, checked only while recovered blocks are verified. RISK: with mapped,"
          + " a page that goes away under a running cache crashes the JVM (SIGBUS in the copy,"
          + " JDK 8) or kills the reading thread with an asynchronous InternalError (JDK 9+),"
          + " and a page turned to zeros is served; use it only where nothing but this"
          + " RegionServer can touch the files and the device reports no media errors.");

  public static final Setting WRITE = add("hbase.bucketcache.pmem.write", "copy",
      "copy, mapped",
      "copy: a block is written to its cache file with positional writes (pwrite) and a sync"
          + " forces the files (fdatasync), so the kernel copies it to the page cache or, on a"
          + " DAX mount, to the device; a page gone under the running cache (a file cut by"
          + " another process, a media error, a full filesystem under a punched hole) costs at"
          + " most that block (a write past the end of a cut file grows it back), never the"
          + " JVM. mapped: the writer copies"
          + " the block into the mapped file (with MAP_SYNC on a DAX mount, no system call)"
          + " and a sync forces the pages written. RISK: with mapped, a page that goes away"
          + " under a running cache during a write crashes the JVM (SIGBUS in the copy, JDK 8)"
          + " or kills the writer thread with an asynchronous InternalError (JDK 9+); use it"
          + " only where nothing but this RegionServer can touch the files and the device"
          + " reports no media errors.");

  /** MAP_SYNC modes of {@link #MAP_SYNC}. */
  public enum MapSync {
    AUTO, REQUIRE, OFF
  }

  static final long MIB = 1L << 20;
  static final long MAPPING_SIZE_MIN = 2 * MIB;
  static final long MAPPING_SIZE_MAX = 1L << 30;
  static final long LOCK_WAIT_MAX_MS = TimeUnit.MINUTES.toMillis(10);

  private final List<File> paths;
  private final long capacity;
  private final File persistencePath;
  private final long mappingSize;
  private final MapSync mapSync;
  private final long lockWaitMillis;
  private final String mapDigestAlgorithm;
  private final boolean readMapped;
  private final boolean writeMapped;

  private PmemCacheConfig(List<File> paths, long capacity, File persistencePath,
      long mappingSize, MapSync mapSync, long lockWaitMillis, String mapDigestAlgorithm,
      boolean readMapped, boolean writeMapped) {
    this.readMapped = readMapped;
    this.writeMapped = writeMapped;
    this.paths = Collections.unmodifiableList(paths);
    this.capacity = capacity;
    this.persistencePath = persistencePath;
    this.mappingSize = mappingSize;
    this.mapSync = mapSync;
    this.lockWaitMillis = lockWaitMillis;
    this.mapDigestAlgorithm = mapDigestAlgorithm;
  }

  /** Where every setting may come from: the block cache belongs to the RegionServer. */
  static final String SCOPE = " Scope: site (hbase-site.xml of the RegionServer) only.";

  private static Setting add(String name, String dflt, String accepted, String doc) {
    Setting s = new Setting(name, dflt, accepted, doc + SCOPE, false);
    ALL.add(s);
    return s;
  }

  private static Setting hbase(String name, String dflt, String accepted, String doc) {
    Setting s = new Setting(name, dflt, accepted, doc + SCOPE, true);
    ALL.add(s);
    return s;
  }

  /** Every setting, in documentation order (HBase's keys first). */
  public static List<Setting> settings() {
    return Collections.unmodifiableList(ALL);
  }

  /** The message shape of every bad value. */
  static IllegalArgumentException bad(Setting s, String value, String fix) {
    return new IllegalArgumentException(s.name + "='" + value + "' is not valid. Accepted: "
        + s.accepted + ". " + fix + ".");
  }

  /** True when {@code conf} lets this module serve pmem: values (the default). */
  public static boolean moduleSelected(Configuration conf) {
    String raw = conf.get(ENGINE.name, ENGINE.defaultValue);
    String v = raw.trim().toLowerCase(Locale.ROOT);
    if (v.equals("module")) {
      return true;
    }
    if (v.equals("stock")) {
      return false;
    }
    throw bad(ENGINE, raw, "Remove it for the default " + ENGINE.defaultValue);
  }

  /** Parses a pmem: value and the settings in {@code conf}, for a cache without persistence. */
  public static PmemCacheConfig parse(String ioEngine, long capacity, Configuration conf) {
    return parse(ioEngine, capacity, null, conf);
  }

  /**
   * Parses and checks a pmem: ioengine value, the capacity, BucketCache's persistence path (or
   * null) and the settings in {@code conf}.
   */
  public static PmemCacheConfig parse(String ioEngine, long capacity, String persistencePath,
      Configuration conf) {
    if (ioEngine == null || !ioEngine.startsWith(IOENGINE_PREFIX)) {
      throw bad(IOENGINE, ioEngine, "Start the value with " + IOENGINE_PREFIX);
    }
    List<File> paths = new ArrayList<>();
    for (String raw : ioEngine.substring(IOENGINE_PREFIX.length()).split(PATH_SEPARATOR, -1)) {
      String p = raw.trim();
      if (p.isEmpty()) {
        throw bad(IOENGINE, ioEngine, "It has an empty path: give absolute file paths separated"
            + " by commas, e.g. pmem:/mnt/pmem0/hbase/cache,/mnt/pmem1/hbase/cache");
      }
      File f = canonical(IOENGINE, ioEngine, p);
      if (paths.contains(f)) {
        throw bad(IOENGINE, ioEngine, "It lists " + p + " twice (as " + f + "): give every"
            + " path once, one file per device");
      }
      paths.add(f);
    }
    if (capacity <= 0) {
      throw bad(SIZE, String.valueOf(capacity), "Set a positive size for the pmem: cache");
    }
    File persistence = null;
    if (persistencePath != null && !persistencePath.trim().isEmpty()) {
      persistence = canonical(PERSISTENT_PATH, persistencePath, persistencePath.trim());
    }
    long mappingSize = bytes(conf, MAPPING_SIZE);
    if (mappingSize < MAPPING_SIZE_MIN || mappingSize > MAPPING_SIZE_MAX
        || Long.bitCount(mappingSize) != 1) {
      throw bad(MAPPING_SIZE, conf.get(MAPPING_SIZE.name),
          "Use a power of two such as 64m or 1g, or remove it for the default "
              + MAPPING_SIZE.defaultValue);
    }
    String ms = conf.get(MAP_SYNC.name, MAP_SYNC.defaultValue);
    MapSync mapSync;
    try {
      mapSync = MapSync.valueOf(ms.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw bad(MAP_SYNC, ms, "Remove it for the default " + MAP_SYNC.defaultValue);
    }
    long lockWait = millis(conf, LOCK_WAIT, 0, LOCK_WAIT_MAX_MS);
    String digest = conf.get(MAP_DIGEST.name, MAP_DIGEST.defaultValue).trim();
    try {
      java.security.MessageDigest.getInstance(digest);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw bad(MAP_DIGEST, digest, "Remove it for the default " + MAP_DIGEST.defaultValue);
    }
    return new PmemCacheConfig(paths, capacity, persistence, mappingSize, mapSync, lockWait,
        digest, mapped(conf, READ), mapped(conf, WRITE));
  }

  /** Whether {@code s} (one of copy, mapped) is mapped. */
  private static boolean mapped(Configuration conf, Setting s) {
    String v = conf.get(s.name, s.defaultValue);
    switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "copy":
        return false;
      case "mapped":
        return true;
      default:
        throw bad(s, v, "Remove it for the default " + s.defaultValue);
    }
  }

  private static File canonical(Setting s, String value, String path) {
    File f = new File(path);
    if (!f.isAbsolute()) {
      throw bad(s, value, "Give the absolute path instead of " + path);
    }
    try {
      return f.getCanonicalFile();
    } catch (IOException e) {
      throw bad(s, value, "The path " + path + " cannot be resolved (" + e.getMessage()
          + "); fix it");
    }
  }

  private static long bytes(Configuration conf, Setting s) {
    String raw = conf.get(s.name);
    if (raw == null || raw.trim().isEmpty()) {
      raw = s.defaultValue;
    }
    Configuration one = new Configuration(false);
    one.set(s.name, raw.trim());
    try {
      return one.getLongBytes(s.name, 0);
    } catch (NumberFormatException e) {
      throw bad(s, raw, "Remove it for the default " + s.defaultValue);
    }
  }

  private static long millis(Configuration conf, Setting s, long min, long max) {
    String raw = conf.get(s.name);
    if (raw == null || raw.trim().isEmpty()) {
      raw = s.defaultValue;
    }
    Configuration one = new Configuration(false);
    one.set(s.name, raw.trim());
    long v;
    try {
      v = one.getTimeDuration(s.name, 0, TimeUnit.MILLISECONDS);
    } catch (NumberFormatException e) {
      throw bad(s, raw, "Remove it for the default " + s.defaultValue);
    }
    if (v < min || v > max) {
      throw bad(s, raw, "Remove it for the default " + s.defaultValue);
    }
    return v;
  }

  /** The cache files, canonical, in the order of the ioengine value. */
  public List<File> paths() {
    return paths;
  }

  /** Cache capacity in bytes. */
  public long capacity() {
    return capacity;
  }

  /** BucketCache's persistence file (canonical), or null when the cache is not persistent. */
  public File persistencePath() {
    return persistencePath;
  }

  /** Size of one mapping in bytes. */
  public long mappingSize() {
    return mappingSize;
  }

  /** MAP_SYNC mode. */
  public MapSync mapSync() {
    return mapSync;
  }

  /** How long start-up waits for the cache files' lock. */
  public long lockWaitMillis() {
    return lockWaitMillis;
  }

  /** Whether reads hand out views of the mappings (opt-in, see {@link #READ}). */
  public boolean readMapped() {
    return readMapped;
  }

  /** Whether blocks are written by copies into the mappings (opt-in, see {@link #WRITE}). */
  public boolean writeMapped() {
    return writeMapped;
  }

  /** The digest algorithm of the persisted map's checksum. */
  public String mapDigestAlgorithm() {
    return mapDigestAlgorithm;
  }

  @Override
  public String toString() {
    return "paths=" + paths + ", capacity=" + capacity + ", persistent.path=" + persistencePath
        + ", mapping.size=" + mappingSize + ", map.sync=" + mapSync.name().toLowerCase(Locale.ROOT)
        + ", lock.wait.ms=" + lockWaitMillis + ", read=" + (readMapped ? "mapped" : "copy")
        + ", write=" + (writeMapped ? "mapped" : "copy");
  }
}
