package dev.forkset.hbase.pmem;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory of a pmem: cache: one or more files, mapped in deterministic segments, plus a small
 * state file that says whether the cache was shut down cleanly.
 *
 * <p>Placement: logical offset x lies in segment s = x / M (M = mapping size). Segment s is in
 * file s mod n (n = number of paths) at file offset (s div n) * M, so consecutive segments
 * alternate between devices and each file holds about 1/n of the capacity. One segment is one
 * mapping; the last segment is shortened to the capacity (rounded up to 4 KiB).
 *
 * <p>Restart correctness: at start the state file is read, then rewritten as OPEN with a fresh
 * random token before any cache write. The persisted backing map is accepted only when the
 * previous run ended CLEAN, with the same layout, and the map carries that run's token. A CLEAN
 * state is written only by {@link #cleanToken}, which BucketCache calls while persisting its map
 * after {@link #close} (writers stopped, all written ranges forced). Any later write turns the
 * state back to OPEN first. After a kill the state is OPEN, so the whole map is discarded.
 */
public final class PmemStore {
  private static final Logger LOG = LoggerFactory.getLogger(PmemStore.class);

  /** Page size that file lengths and forced ranges are aligned to. */
  static final int PAGE = 4096;

  /** First 8 bytes of a state file: "FKPMEM01". */
  static final long STATE_MAGIC = 0x464B504D454D3031L;

  /** Version of the state file format. */
  static final int STATE_VERSION = 1;

  /** State value of a running (or killed) cache. */
  static final byte STATE_OPEN = 0;

  /** State value of a cache whose map was persisted after its writes were forced. */
  static final byte STATE_CLEAN = 1;

  /** JDK 14+ MAP_SYNC map mode, or null. */
  private static final FileChannel.MapMode READ_WRITE_SYNC = findSyncMode();

  /** JDK 13+ MappedByteBuffer.force(int, int), or null. */
  private static final Method FORCE_RANGE = findForceRange();

  private final PmemCacheConfig config;
  private final int pathCount;
  private final long mappingSize;
  private final int shift;
  private final MappedByteBuffer[] segments;
  private final long[] dirtyLow;
  private final long[] dirtyHigh;
  private final RandomAccessFile[] files;
  private final boolean[] mapSync;
  private final String layout;
  private final SecureRandom random = new SecureRandom();
  /** Token of the clean shutdown this run started from, or 0 when it must start cold. */
  private final long previousCleanToken;
  /** Why the previous cache cannot be used, or null. */
  private final String coldReason;
  private volatile boolean closed;
  private volatile long cleanToken;

  /** Validates the paths, maps the files and marks the state OPEN. */
  public PmemStore(PmemCacheConfig config) throws IOException {
    this.config = config;
    List<File> paths = config.paths();
    this.pathCount = paths.size();
    this.mappingSize = config.mappingSize();
    this.shift = Long.numberOfTrailingZeros(mappingSize);
    long capacity = config.capacity();
    int segmentCount = (int) ((capacity + mappingSize - 1) / mappingSize);
    long[] fileLength = new long[pathCount];
    for (int s = 0; s < segmentCount; s++) {
      fileLength[s % pathCount] = fileOffset(s) + segmentLength(s, segmentCount, capacity);
    }
    StringBuilder lay = new StringBuilder("capacity=").append(capacity).append(";mapping=")
        .append(mappingSize).append(";paths=");
    for (int i = 0; i < pathCount; i++) {
      lay.append(i == 0 ? "" : ",").append(paths.get(i).getPath()).append(':')
          .append(fileLength[i]);
    }
    this.layout = lay.toString();
    checkPaths(paths, fileLength);

    String[] reason = new String[1];
    this.previousCleanToken = readPreviousState(reason);
    this.coldReason = reason[0];
    writeState(STATE_OPEN, random.nextLong());

    this.files = new RandomAccessFile[pathCount];
    this.mapSync = new boolean[pathCount];
    this.segments = new MappedByteBuffer[segmentCount];
    this.dirtyLow = new long[segmentCount];
    this.dirtyHigh = new long[segmentCount];
    boolean ok = false;
    try {
      for (int i = 0; i < pathCount; i++) {
        File f = paths.get(i);
        files[i] = new RandomAccessFile(f, "rw");
        if (files[i].length() != fileLength[i]) {
          files[i].setLength(fileLength[i]);
        }
      }
      // Deterministic: segment s always maps the same file region, one thread, in order.
      for (int s = 0; s < segmentCount; s++) {
        segments[s] = map(s, segmentLength(s, segmentCount, capacity));
        dirtyLow[s] = Long.MAX_VALUE;
        dirtyHigh[s] = -1;
      }
      ok = true;
    } finally {
      if (!ok) {
        closeFiles();
      }
    }
    LOG.info("pmem cache: {} mappings of up to {} bytes over {} path(s) {}, MAP_SYNC {}, state"
        + " file {}", segmentCount, mappingSize, pathCount, paths, mapSyncSummary(),
        config.stateFile());
  }

  private long fileOffset(int segment) {
    return (long) (segment / pathCount) * mappingSize;
  }

  private long segmentLength(int s, int segmentCount, long capacity) {
    if (s < segmentCount - 1) {
      return mappingSize;
    }
    long rest = capacity - (long) s * mappingSize;
    return (rest + PAGE - 1) / PAGE * PAGE;
  }

  private void checkPaths(List<File> paths, long[] fileLength) throws IOException {
    for (int i = 0; i < paths.size(); i++) {
      File f = paths.get(i);
      File dir = f.getParentFile();
      if (dir == null || !dir.isDirectory()) {
        throw new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine): directory "
            + dir + " does not exist; create it on the pmem/DAX mount or fix the path");
      }
      if (f.exists() && !f.isFile()) {
        throw new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine) exists but"
            + " is not a regular file; give a file path (devdax: see docs/hbase-pmem-cache.md)");
      }
      if (f.exists() ? !f.canWrite() : !dir.canWrite()) {
        throw new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine) is not"
            + " writable by this user; fix the permissions of " + (f.exists() ? f : dir));
      }
      if (config.checkFreeSpace()) {
        long existing = f.exists() ? f.length() : 0;
        long usable = dir.getUsableSpace();
        if (usable + existing < fileLength[i]) {
          throw new IOException("pmem cache path " + f + " (hbase.bucketcache.ioengine) needs "
              + fileLength[i] + " bytes for its share of hbase.bucketcache.size but its"
              + " filesystem has only " + (usable + existing) + " usable; lower"
              + " hbase.bucketcache.size, add paths or free space (" + PmemCacheConfig
                  .CHECK_FREE_SPACE_KEY + "=false skips this check)");
        }
      }
    }
  }

  private MappedByteBuffer map(int s, long length) throws IOException {
    int path = s % pathCount;
    FileChannel ch = files[path].getChannel();
    long off = fileOffset(s);
    File f = config.paths().get(path);
    boolean firstOnPath = s < pathCount;
    if (firstOnPath && config.mapSync() != PmemCacheConfig.MapSync.OFF) {
      String why;
      if (READ_WRITE_SYNC == null) {
        why = "this JDK has no MAP_SYNC (needs JDK 14+)";
      } else {
        try {
          MappedByteBuffer b = ch.map(READ_WRITE_SYNC, off, length);
          mapSync[path] = true;
          return b;
        } catch (IOException | UnsupportedOperationException e) {
          why = "MAP_SYNC refused: " + e.getMessage();
        }
      }
      if (config.mapSync() == PmemCacheConfig.MapSync.REQUIRE) {
        throw new IOException("pmem cache path " + f + " cannot be mapped with MAP_SYNC (" + why
            + ") but " + PmemCacheConfig.MAP_SYNC_KEY + "=require; mount the filesystem with"
            + " -o dax on a pmem/CXL device or set " + PmemCacheConfig.MAP_SYNC_KEY + "=auto");
      }
      LOG.warn("pmem cache path {} is not on a DAX filesystem ({}): the file is backed by the"
          + " page cache, so it takes DRAM and its contents survive a restart but not a power"
          + " loss. Mount the pmem/CXL device with -o dax to map it directly.", f, why);
    }
    if (mapSync[path]) {
      return ch.map(READ_WRITE_SYNC, off, length);
    }
    return ch.map(FileChannel.MapMode.READ_WRITE, off, length);
  }

  private String mapSyncSummary() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < pathCount; i++) {
      sb.append(i == 0 ? "" : ",").append(mapSync[i] ? "on" : "off");
    }
    return sb.toString();
  }

  /** Number of mappings. */
  public int mappingCount() {
    return segments.length;
  }

  /** Whether path i is mapped with MAP_SYNC. */
  public boolean mapSync(int path) {
    return mapSync[path];
  }

  /** The layout description stored in the state file. */
  public String layout() {
    return layout;
  }

  /** Copies the remaining bytes of {@code src} to logical offset {@code offset}. */
  public void write(ByteBuff src, long offset) throws IOException {
    if (cleanToken != 0) {
      reopen();
    }
    int len = src.remaining();
    checkRange(offset, len);
    long pos = offset;
    int left = len;
    while (left > 0) {
      int s = (int) (pos >>> shift);
      int in = (int) (pos & (mappingSize - 1));
      MappedByteBuffer seg = segments[s];
      int n = Math.min(left, seg.capacity() - in);
      ByteBuffer dst = seg.duplicate();
      dst.limit(in + n);
      dst.position(in);
      int from = src.position();
      src.get(dst, from, n);
      src.position(from + n);
      markDirty(s, in, in + n);
      pos += n;
      left -= n;
    }
  }

  /** Views of {@code len} bytes at {@code offset}: shared memory, nothing copied. */
  public ByteBuffer[] slices(long offset, int len) {
    checkRange(offset, len);
    int first = (int) (offset >>> shift);
    int last = len == 0 ? first : (int) ((offset + len - 1) >>> shift);
    ByteBuffer[] out = new ByteBuffer[last - first + 1];
    long pos = offset;
    int left = len;
    for (int i = 0; i < out.length; i++) {
      int in = (int) (pos & (mappingSize - 1));
      MappedByteBuffer seg = segments[first + i];
      int n = Math.min(left, seg.capacity() - in);
      ByteBuffer b = seg.duplicate();
      b.limit(in + n);
      b.position(in);
      out[i] = b.slice();
      pos += n;
      left -= n;
    }
    return out;
  }

  private void checkRange(long offset, int len) {
    if (offset < 0 || len < 0 || offset + len > config.capacity()) {
      throw new IllegalArgumentException("pmem cache access [" + offset + ", " + (offset + len)
          + ") outside the capacity " + config.capacity());
    }
  }

  private void markDirty(int s, long from, long to) {
    synchronized (segments[s]) {
      if (from < dirtyLow[s]) {
        dirtyLow[s] = from;
      }
      if (to > dirtyHigh[s]) {
        dirtyHigh[s] = to;
      }
    }
  }

  /** Forces every range written since the last call to the device (msync / cache flush). */
  public void sync() throws IOException {
    for (int s = 0; s < segments.length; s++) {
      long low;
      long high;
      synchronized (segments[s]) {
        low = dirtyLow[s];
        high = dirtyHigh[s];
        dirtyLow[s] = Long.MAX_VALUE;
        dirtyHigh[s] = -1;
      }
      if (high < 0) {
        continue;
      }
      MappedByteBuffer seg = segments[s];
      int from = (int) (low / PAGE * PAGE);
      int to = (int) Math.min(seg.capacity(), (high + PAGE - 1) / PAGE * PAGE);
      force(seg, from, to - from);
    }
  }

  private static void force(MappedByteBuffer seg, int index, int length) throws IOException {
    if (FORCE_RANGE != null) {
      try {
        FORCE_RANGE.invoke(seg, index, length);
        return;
      } catch (ReflectiveOperationException e) {
        Throwable c = e.getCause() != null ? e.getCause() : e;
        if (c instanceof RuntimeException) {
          throw (RuntimeException) c;
        }
        throw new IOException("force of a pmem cache mapping failed", c);
      }
    }
    seg.force();
  }

  /** Forces all writes and stops accepting the CLEAN token only after this point. */
  public void close() throws IOException {
    sync();
    closed = true;
  }

  /**
   * The digest BucketCache stores with its persisted map. After {@link #close} it forces all
   * writes, records a CLEAN state with a fresh token and returns the digest of that token; while
   * the cache runs it returns a digest that no later start accepts (the map may still change).
   */
  public synchronized byte[] cleanToken(String algorithm) throws IOException {
    if (!closed) {
      return digest(algorithm, random.nextLong() | 1, "running");
    }
    if (cleanToken == 0) {
      sync();
      long token = random.nextLong() | 1;
      writeState(STATE_CLEAN, token);
      cleanToken = token;
    }
    return digest(algorithm, cleanToken, "clean");
  }

  private synchronized void reopen() throws IOException {
    if (cleanToken != 0) {
      writeState(STATE_OPEN, random.nextLong());
      cleanToken = 0;
    }
  }

  /**
   * Checks the digest of a persisted map against the previous clean shutdown.
   * @throws IOException naming why the persisted map must be discarded
   */
  public void verify(byte[] persisted, String algorithm) throws IOException {
    if (previousCleanToken == 0) {
      throw new IOException(coldReason);
    }
    byte[] expected = digest(algorithm, previousCleanToken, "clean");
    if (!MessageDigest.isEqual(expected, persisted)) {
      throw new IOException("the persisted bucket cache map was not written at the last clean"
          + " shutdown of " + config.stateFile() + " (stale or foreign persistence file)");
    }
  }

  /** Why the cache starts cold, or null when a clean persisted map can be used. */
  public String coldReason() {
    return coldReason;
  }

  private byte[] digest(String algorithm, long token, String kind) throws IOException {
    try {
      MessageDigest md = MessageDigest.getInstance(algorithm);
      md.update(layout.getBytes(StandardCharsets.UTF_8));
      md.update(kind.getBytes(StandardCharsets.UTF_8));
      for (int i = 0; i < 8; i++) {
        md.update((byte) (token >>> (56 - 8 * i)));
      }
      return md.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IOException("hbase.bucketcache.persistent.file.integrity.check.algorithm="
          + algorithm + " is not a MessageDigest algorithm of this JDK", e);
    }
  }

  private long readPreviousState(String[] reason) {
    File sf = config.stateFile();
    if (!sf.exists()) {
      reason[0] = "no pmem cache state file " + sf + ": first start, cold cache";
      return 0;
    }
    try (DataInputStream in = new DataInputStream(Files.newInputStream(sf.toPath()))) {
      byte[] all = new byte[(int) Math.min(sf.length(), 1 << 20)];
      in.readFully(all);
      if (all.length < 8 + 4 + 1 + 8 + 2 + 8) {
        reason[0] = "pmem cache state file " + sf + " is truncated: cold cache";
        return 0;
      }
      CRC32 crc = new CRC32();
      crc.update(all, 0, all.length - 8);
      DataInputStream d = new DataInputStream(new java.io.ByteArrayInputStream(all));
      long magic = d.readLong();
      int version = d.readInt();
      byte state = d.readByte();
      long token = d.readLong();
      String oldLayout = d.readUTF();
      long storedCrc = d.readLong();
      if (magic != STATE_MAGIC || version != STATE_VERSION || storedCrc != crc.getValue()) {
        reason[0] = "pmem cache state file " + sf + " is corrupt: cold cache";
        return 0;
      }
      if (!oldLayout.equals(layout)) {
        reason[0] = "pmem cache layout changed since the last run (was " + oldLayout + ", now "
            + layout + "): cold cache";
        return 0;
      }
      if (state != STATE_CLEAN) {
        reason[0] = "the pmem cache in " + config.paths() + " was not shut down cleanly (killed"
            + " or crashed while running): its blocks cannot be proven intact, cold cache";
        return 0;
      }
      return token;
    } catch (IOException | RuntimeException e) {
      reason[0] = "pmem cache state file " + sf + " cannot be read (" + e + "): cold cache";
      return 0;
    }
  }

  private void writeState(byte state, long token) throws IOException {
    File sf = config.stateFile();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream d = new DataOutputStream(bytes);
    d.writeLong(STATE_MAGIC);
    d.writeInt(STATE_VERSION);
    d.writeByte(state);
    d.writeLong(token);
    d.writeUTF(layout);
    d.flush();
    CRC32 crc = new CRC32();
    crc.update(bytes.toByteArray());
    d.writeLong(crc.getValue());
    d.flush();
    File tmp = new File(sf.getPath() + ".tmp");
    try (FileOutputStream out = new FileOutputStream(tmp)) {
      out.write(bytes.toByteArray());
      out.getFD().sync();
    } catch (IOException e) {
      throw new IOException("cannot write the pmem cache state file " + tmp + " ("
          + PmemCacheConfig.STATE_FILE_KEY + "): " + e.getMessage(), e);
    }
    Files.move(tmp.toPath(), sf.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  private void closeFiles() {
    if (files == null) {
      return;
    }
    for (RandomAccessFile f : files) {
      if (f != null) {
        try {
          f.close();
        } catch (IOException e) {
          LOG.warn("closing a pmem cache file failed", e);
        }
      }
    }
  }

  /** Closes the file handles; the mappings stay valid until they are garbage collected. */
  public void release() {
    closeFiles();
  }

  private static FileChannel.MapMode findSyncMode() {
    try {
      Class<?> c = Class.forName("jdk.nio.mapmode.ExtendedMapMode");
      return (FileChannel.MapMode) c.getField("READ_WRITE_SYNC").get(null);
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return null;
    }
  }

  private static Method findForceRange() {
    try {
      return MappedByteBuffer.class.getMethod("force", int.class, int.class);
    } catch (NoSuchMethodException | RuntimeException e) {
      return null;
    }
  }

  /** For tests: the paths of the files. */
  List<File> paths() {
    return new ArrayList<>(config.paths());
  }
}
