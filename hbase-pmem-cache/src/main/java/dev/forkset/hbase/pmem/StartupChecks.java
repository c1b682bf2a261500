package dev.forkset.hbase.pmem;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;

/**
 * The checks that run before the engine creates, locks, maps or writes anything: every cache
 * path is usable, no two names are the same file, BucketCache's persistence file cannot
 * overwrite a cache file, MAP_SYNC is granted where it is required, and every filesystem can
 * hold its files.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Names are compared canonically (symbolic links and {@code ..} resolved by
 *       {@link PmemCacheConfig}) and existing files also by their file key (device and inode),
 *       which catches hard links: BucketCache renames its map over the persistence path, so a
 *       persistence path that is a cache file or a link to one would replace the cache file.
 *   <li>With map.sync=require, MAP_SYNC is probed here ({@link Mappings#mapSyncRefusal}): an
 *       existing cache file read-only, a new one's directory with a temporary file deleted at
 *       once. So a refused start leaves the directory as it was: no cache file created,
 *       extended, locked or written (a valid cache starts warm again with map.sync=auto).
 *   <li>Nothing here changes a cache file; a failure names the setting, the path and the fix.
 *       What can still refuse the start later is the lock (the file must be open to be locked;
 *       another process holds an existing file, or a racing start created a new one) and an
 *       allocation or mapping that fails after these checks passed (the space taken meanwhile):
 *       the start then deletes only the files it created.
 * </ol>
 */
final class StartupChecks {

  /** Suffix of a persisted map that the engine moved aside instead of using. */
  static final String DISCARDED_SUFFIX = ".discarded";

  private StartupChecks() {}

  static void check(PmemCacheConfig config, Layout layout) throws IOException {
    List<File> paths = config.paths();
    long[] lengths = new long[paths.size()];
    for (int i = 0; i < paths.size(); i++) {
      checkPath(paths.get(i));
      lengths[i] = layout.fileLength(i);
    }
    for (int i = 0; i < paths.size(); i++) {
      for (int j = i + 1; j < paths.size(); j++) {
        if (sameFile(paths.get(i), paths.get(j))) {
          throw new IOException("hbase.bucketcache.ioengine lists " + paths.get(i) + " and "
              + paths.get(j) + ", which are the same file (hard links): give every cache file"
              + " once");
        }
      }
    }
    File map = config.persistencePath();
    if (map != null) {
      checkPersistencePath(map, paths);
    }
    if (config.mapSync() == PmemCacheConfig.MapSync.REQUIRE) {
      for (File f : paths) {
        String why = Mappings.mapSyncRefusal(f);
        if (why != null) {
          throw new IOException(Mappings.requiredMapSyncRefused(f, why));
        }
      }
    }
    Preallocation.checkFreeSpace(paths, lengths);
  }

  private static void checkPath(File f) throws IOException {
    File dir = f.getParentFile();
    if (dir == null || !dir.isDirectory()) {
      throw new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine): directory "
          + dir + " does not exist; create it on the pmem/DAX mount or fix the path");
    }
    if (f.exists() && !f.isFile()) {
      throw new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine) exists but"
          + " is not a regular file; give a file path (devdax: see docs/hbase-pmem-cache.md)");
    }
    if (f.exists() ? !f.canWrite() || !f.canRead() : !dir.canWrite()) {
      throw new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine) is not"
          + " writable by this user; fix the permissions of " + (f.exists() ? f : dir));
    }
  }

  private static void checkPersistencePath(File map, List<File> paths) throws IOException {
    File dir = map.getParentFile();
    if (dir == null || !dir.isDirectory()) {
      throw new IOException("hbase.bucketcache.persistent.path " + map + ": directory " + dir
          + " does not exist; create it or fix the path");
    }
    File aside = new File(map.getPath() + DISCARDED_SUFFIX);
    for (File cache : paths) {
      if (cache.equals(map) || sameFile(cache, map)) {
        throw new IOException("hbase.bucketcache.persistent.path " + map + " is the cache file "
            + cache + (cache.equals(map) ? "" : " (a hard link of it)") + " of"
            + " hbase.bucketcache.ioengine: BucketCache would overwrite the cache with its map."
            + " Give the persistence file its own path");
      }
      if (cache.equals(aside) || sameFile(cache, aside)) {
        throw new IOException("hbase.bucketcache.persistent.path " + map + ": the engine moves a"
            + " map it cannot use to " + aside + ", which is the cache file " + cache
            + ". Give the persistence file another path");
      }
    }
  }

  /** True when both exist and are the same file (same device and inode). */
  static boolean sameFile(File a, File b) throws IOException {
    if (!a.exists() || !b.exists()) {
      return false;
    }
    Object ka = Files.readAttributes(a.toPath(), BasicFileAttributes.class,
        LinkOption.NOFOLLOW_LINKS).fileKey();
    Object kb = Files.readAttributes(b.toPath(), BasicFileAttributes.class,
        LinkOption.NOFOLLOW_LINKS).fileKey();
    return ka != null ? ka.equals(kb) : Files.isSameFile(a.toPath(), b.toPath());
  }
}
