package dev.forkset.hbase.pmem;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;

/**
 * Every setting of the hbase-pmem-cache engine, with its default, and the parsed values of one
 * RegionServer. Invalid values fail with an {@link IllegalArgumentException} that names the
 * setting and says how to fix it. docs/hbase-pmem-cache.md lists the same settings.
 */
public final class PmemCacheConfig {

  /** Prefix of the hbase.bucketcache.ioengine value this engine serves: pmem:/a/cache,/b/cache. */
  public static final String IOENGINE_PREFIX = "pmem:";

  /** Separator between the cache file paths of one pmem: value. */
  public static final String PATH_SEPARATOR = ",";

  /**
   * Which engine serves pmem: values: "module" (this engine, when its jar is on the class path)
   * or "stock" (HBase's own SharedMemoryMmapIOEngine, single path only).
   */
  public static final String ENGINE_KEY = "hbase.bucketcache.pmem.engine";

  /** Default of {@link #ENGINE_KEY}: this module's engine. */
  public static final String ENGINE_DEFAULT = "module";

  /**
   * Size of one memory mapping in bytes: a power of two from 2 MiB to 1 GiB. A cache of capacity
   * C uses ceil(C / size) mappings, each entirely inside one file.
   */
  public static final String MAPPING_SIZE_KEY = "hbase.bucketcache.pmem.mapping.size";

  /** Default of {@link #MAPPING_SIZE_KEY}: 1 GiB. */
  public static final long MAPPING_SIZE_DEFAULT = 1L << 30;

  /** Smallest accepted {@link #MAPPING_SIZE_KEY}: 2 MiB, the huge-page size of DAX mappings. */
  public static final long MAPPING_SIZE_MIN = 2L << 20;

  /**
   * MAP_SYNC use: "auto" (MAP_SYNC when the file is on a DAX filesystem and the JDK is 14+,
   * otherwise a page-cache mapping and one warning), "require" (fail at start without MAP_SYNC)
   * or "off" (never MAP_SYNC).
   */
  public static final String MAP_SYNC_KEY = "hbase.bucketcache.pmem.map.sync";

  /** Default of {@link #MAP_SYNC_KEY}. */
  public static final String MAP_SYNC_DEFAULT = "auto";

  /**
   * The engine's state file (clean-shutdown token and cache layout). Empty: the first cache path
   * with the suffix ".state".
   */
  public static final String STATE_FILE_KEY = "hbase.bucketcache.pmem.state.file";

  /** Suffix of the default state file name. */
  public static final String STATE_FILE_SUFFIX = ".state";

  /**
   * Whether start fails when a path's filesystem has less usable space than the part of the
   * capacity placed on that path (a full filesystem turns later writes into SIGBUS).
   */
  public static final String CHECK_FREE_SPACE_KEY = "hbase.bucketcache.pmem.check.free.space";

  /** Default of {@link #CHECK_FREE_SPACE_KEY}. */
  public static final boolean CHECK_FREE_SPACE_DEFAULT = true;

  /** MAP_SYNC modes of {@link #MAP_SYNC_KEY}. */
  public enum MapSync {
    AUTO, REQUIRE, OFF
  }

  private final List<File> paths;
  private final long capacity;
  private final long mappingSize;
  private final MapSync mapSync;
  private final File stateFile;
  private final boolean checkFreeSpace;

  private PmemCacheConfig(List<File> paths, long capacity, long mappingSize, MapSync mapSync,
      File stateFile, boolean checkFreeSpace) {
    this.paths = Collections.unmodifiableList(paths);
    this.capacity = capacity;
    this.mappingSize = mappingSize;
    this.mapSync = mapSync;
    this.stateFile = stateFile;
    this.checkFreeSpace = checkFreeSpace;
  }

  /** True when {@code conf} lets this module serve pmem: values (the default). */
  public static boolean moduleSelected(Configuration conf) {
    String v = conf.get(ENGINE_KEY, ENGINE_DEFAULT).trim().toLowerCase(Locale.ROOT);
    if (v.equals("module")) {
      return true;
    }
    if (v.equals("stock")) {
      return false;
    }
    throw new IllegalArgumentException(ENGINE_KEY + "=" + conf.get(ENGINE_KEY)
        + " is not valid: use \"module\" (hbase-pmem-cache engine) or \"stock\" (HBase's own"
        + " single-path pmem: engine)");
  }

  /** Parses and checks a pmem: ioengine value and the settings in {@code conf}. */
  public static PmemCacheConfig parse(String ioEngine, long capacity, Configuration conf) {
    if (!ioEngine.startsWith(IOENGINE_PREFIX)) {
      throw new IllegalArgumentException("hbase.bucketcache.ioengine=" + ioEngine
          + " does not start with " + IOENGINE_PREFIX);
    }
    String list = ioEngine.substring(IOENGINE_PREFIX.length());
    List<File> paths = new ArrayList<>();
    List<String> canonical = new ArrayList<>();
    for (String raw : list.split(PATH_SEPARATOR, -1)) {
      String p = raw.trim();
      if (p.isEmpty()) {
        throw new IllegalArgumentException("hbase.bucketcache.ioengine=" + ioEngine
            + " has an empty path: give one or more absolute file paths separated by commas,"
            + " e.g. pmem:/mnt/pmem0/hbase/cache,/mnt/pmem1/hbase/cache");
      }
      File f = new File(p);
      if (!f.isAbsolute()) {
        throw new IllegalArgumentException("hbase.bucketcache.ioengine path " + p
            + " is not absolute: give the absolute path of the cache file");
      }
      String c;
      try {
        c = f.getCanonicalPath();
      } catch (java.io.IOException e) {
        throw new IllegalArgumentException("hbase.bucketcache.ioengine path " + p
            + " cannot be resolved: " + e.getMessage(), e);
      }
      if (canonical.contains(c)) {
        throw new IllegalArgumentException("hbase.bucketcache.ioengine lists " + p
            + " twice (as " + c + "): every path must be a different file");
      }
      canonical.add(c);
      paths.add(new File(c));
    }
    if (capacity <= 0) {
      throw new IllegalArgumentException("hbase.bucketcache.size gives a capacity of " + capacity
          + " bytes: set a positive size for the pmem: cache");
    }
    long mappingSize = conf.getLong(MAPPING_SIZE_KEY, MAPPING_SIZE_DEFAULT);
    if (mappingSize < MAPPING_SIZE_MIN || mappingSize > MAPPING_SIZE_DEFAULT
        || Long.bitCount(mappingSize) != 1) {
      throw new IllegalArgumentException(MAPPING_SIZE_KEY + "=" + mappingSize
          + " is not valid: use a power of two from " + MAPPING_SIZE_MIN + " (2 MiB) to "
          + MAPPING_SIZE_DEFAULT + " (1 GiB)");
    }
    MapSync mapSync;
    String ms = conf.get(MAP_SYNC_KEY, MAP_SYNC_DEFAULT).trim();
    try {
      mapSync = MapSync.valueOf(ms.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(MAP_SYNC_KEY + "=" + ms
          + " is not valid: use auto, require or off");
    }
    String sf = conf.get(STATE_FILE_KEY, "").trim();
    File stateFile = sf.isEmpty() ? new File(paths.get(0).getPath() + STATE_FILE_SUFFIX)
        : new File(sf);
    if (!stateFile.isAbsolute()) {
      throw new IllegalArgumentException(STATE_FILE_KEY + "=" + sf
          + " is not absolute: give an absolute file path or leave it empty");
    }
    boolean checkFree = conf.getBoolean(CHECK_FREE_SPACE_KEY, CHECK_FREE_SPACE_DEFAULT);
    return new PmemCacheConfig(paths, capacity, mappingSize, mapSync, stateFile, checkFree);
  }

  /** The cache files, canonical, in the order of the ioengine value. */
  public List<File> paths() {
    return paths;
  }

  /** Cache capacity in bytes. */
  public long capacity() {
    return capacity;
  }

  /** Size of one mapping in bytes. */
  public long mappingSize() {
    return mappingSize;
  }

  /** MAP_SYNC mode. */
  public MapSync mapSync() {
    return mapSync;
  }

  /** The engine's state file. */
  public File stateFile() {
    return stateFile;
  }

  /** Whether free space is checked at start. */
  public boolean checkFreeSpace() {
    return checkFreeSpace;
  }
}
