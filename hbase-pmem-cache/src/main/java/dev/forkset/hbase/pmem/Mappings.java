package dev.forkset.hbase.pmem;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cache's memory: one mapping per {@link Layout} segment; writes of blocks to the files
 * (positional writes, the default) or into the mappings (opt-in); reads of blocks from the files
 * (one positional read into the reader's buffer); zero-copy views (opt-in reads, tests); and
 * forcing what was written to the device.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Segments are mapped from one thread in segment order, so logical offset x is always the
 *       same byte of the same file whatever the processor count (the fault patch 0051 fixes in
 *       HBase's own engine). Mapping writes nothing.
 *   <li>MAP_SYNC ({@code jdk.nio.mapmode.ExtendedMapMode.READ_WRITE_SYNC}, JDK 14+) is looked up
 *       by reflection, so the class stays Java 8 bytecode. It is tried on the first segment of
 *       each path; a DAX filesystem grants it (stores then reach the device and a force is a
 *       cache-line flush), anything else refuses it and the path is mapped through the page
 *       cache with one warning (or start fails with map.sync=require).
 *   <li>Blocks are written to the files with positional writes by default ({@link #writeFiles}):
 *       a write cannot fault, where a store through a mapping into a page that is gone raises
 *       SIGBUS. A sync forces each file written since its last force (fdatasync). With
 *       hbase.bucketcache.pmem.write=mapped blocks are copied into the mappings instead, and the
 *       next note applies.
 *   <li>Each segment keeps the page runs written since its last force ({@link DirtyRuns}), so a
 *       sync costs what was written, not the distance between writes. A sync takes the runs and
 *       forces each; if a force fails, that run and the ones not yet forced are added back
 *       before the IOException is thrown, so a later sync forces them again.
 *   <li>Nothing reports written data as durable when it is not: each file and each segment has
 *       a {@link ForceLedger}, and each writing thread remembers the numbers of its writes not
 *       yet confirmed; its sync fails when a force failed that covered one of them, even if a
 *       later force (by it or another thread) succeeded, because a retried fsync or msync does
 *       not bring back pages whose write-back failed. BucketCache's writer drops a batch whose
 *       sync failed, so the backing map never names such a block.
 *   <li>A force that fails inside the JDK may surface as an unchecked exception (JDK 13+
 *       {@code UncheckedIOException}) or as an undeclared IOException (JDK 8); both become an
 *       IOException here, the type BucketCache's I/O-error handling expects.
 *   <li>{@link #release()} drops the mappings (later calls fail with an IOException) and leaves
 *       the unmapping to the garbage collector, as HBase's own mmap engines do: blocks are served
 *       zero-copy, and a RegionServer shuts its block cache down before it closes its regions, so
 *       a scanner may still hold (and read) a block after shutdown; an explicit unmap would make
 *       that read crash the JVM. Closing the files releases the locks, so a new engine on the
 *       same paths starts at once. {@link #unmap()} unmaps at once: for a start that failed
 *       before it served anything, and at shutdown when BucketCache saw every block released by
 *       its readers and no read can start any more (patch 0060).
 *   <li>{@link #mapSyncRefusal} probes MAP_SYNC before the cache creates or opens anything for
 *       writing, so map.sync=require on a page-cache filesystem fails with nothing changed.
 * </ol>
 */
final class Mappings {
  private static final Logger LOG = LoggerFactory.getLogger(Mappings.class);

  /** Forces a range of a mapping; replaced in tests to inject device errors. */
  interface Forcer {
    void force(MappedByteBuffer segment, int index, int length) throws IOException;

    /** False when every force writes back the whole mapping, whatever the range. */
    default boolean byRange() {
      return true;
    }
  }

  /** How the files are written: a positional write; replaced by tests to inject device errors. */
  interface Writer {
    int write(int path, FileChannel ch, ByteBuffer src, long position) throws IOException;
  }

  /** Forces a file written with positional writes; replaced by tests to inject device errors. */
  interface FileForcer {
    void force(int path, FileChannel ch) throws IOException;
  }

  /** JDK 14+ MAP_SYNC map mode, or null. */
  private static final FileChannel.MapMode READ_WRITE_SYNC = findSyncMode("READ_WRITE_SYNC");

  /** JDK 13+ MappedByteBuffer.force(int, int), or null. */
  private static final Method FORCE_RANGE = findForceRange();

  static final Forcer JDK_FORCE = new Forcer() {
    @Override
    public void force(MappedByteBuffer segment, int index, int length) throws IOException {
      jdkForce(segment, index, length);
    }

    /** JDK 8-12 have only force() of the whole mapping. */
    @Override
    public boolean byRange() {
      return FORCE_RANGE != null;
    }
  };

  private final Layout layout;
  private final FileChannel[] channels;
  private final List<File> paths;
  private final boolean[] mapSync;
  private volatile MappedByteBuffer[] segments;
  /** Per segment; guarded by itself (the array). */
  private final DirtyRuns[] dirty;
  private final Object[] forceLocks;
  private volatile Forcer forcer = JDK_FORCE;
  /** Per path, then per segment: what forces made durable or may have lost. */
  private final ForceLedger[] ledgers;
  /**
   * Per writing thread: for each ledger, the first and last number of its writes not yet
   * confirmed by a sync of that thread (0, 0 when none).
   */
  private final ThreadLocal<long[]> unconfirmed;
  /**
   * Whether blocks are copied into the mappings (hbase.bucketcache.pmem.write=mapped) rather
   * than written to the files with positional writes (the default).
   */
  private final boolean writeMapped;
  private volatile Writer writer = (path, ch, src, position) -> ch.write(src, position);
  private volatile FileForcer fileForcer = (path, ch) -> ch.force(false);
  /** Never interrupted (shutdown(), not shutdownNow()): see {@link #readFully}. */
  private final ExecutorService checkers = newCheckers();
  /**
   * Whether every channel is immune to interrupts ({@link Uninterruptible}): then reads run on
   * the caller's thread; else on the checker threads.
   */
  private final boolean uninterruptible;

  /**
   * Maps every segment.
   * @param uninterruptible whether every channel was made immune to interrupts
   * @param writeMapped     whether writes copy into the mappings rather than write the files
   * @throws IOException naming the path when a mapping fails or MAP_SYNC is required and refused
   */
  Mappings(Layout layout, FileChannel[] channels, List<File> paths,
      PmemCacheConfig.MapSync mode, boolean uninterruptible, boolean writeMapped)
      throws IOException {
    this.layout = layout;
    this.channels = channels;
    this.paths = paths;
    this.uninterruptible = uninterruptible;
    this.writeMapped = writeMapped;
    this.ledgers = new ForceLedger[layout.pathCount() + layout.segmentCount()];
    for (int i = 0; i < ledgers.length; i++) {
      ledgers[i] = new ForceLedger();
    }
    this.unconfirmed = ThreadLocal.withInitial(() -> new long[2 * ledgers.length]);
    int n = layout.segmentCount();
    this.mapSync = new boolean[layout.pathCount()];
    MappedByteBuffer[] segs = new MappedByteBuffer[n];
    this.dirty = new DirtyRuns[n];
    this.forceLocks = new Object[n];
    for (int s = 0; s < n; s++) {
      int path = layout.fileOf(s);
      segs[s] = map(channels[path], paths.get(path), s < layout.pathCount(), path, mode,
          layout.fileOffset(s), layout.segmentLength(s));
      dirty[s] = new DirtyRuns(segs[s].capacity());
      forceLocks[s] = new Object();
    }
    this.segments = segs;
  }

  private MappedByteBuffer map(FileChannel ch, File f, boolean firstOnPath, int path,
      PmemCacheConfig.MapSync mode, long offset, long length) throws IOException {
    if (firstOnPath && mode != PmemCacheConfig.MapSync.OFF) {
      String why;
      if (READ_WRITE_SYNC == null) {
        why = "this JDK has no MAP_SYNC (needs JDK 14+)";
      } else {
        try {
          MappedByteBuffer b = ch.map(READ_WRITE_SYNC, offset, length);
          mapSync[path] = true;
          return b;
        } catch (IOException | UnsupportedOperationException e) {
          why = "MAP_SYNC refused: " + e.getMessage();
        }
      }
      if (mode == PmemCacheConfig.MapSync.REQUIRE) {
        throw new IOException(requiredMapSyncRefused(f, why));
      }
      LOG.warn("pmem cache path {} is not on a DAX filesystem ({}): the file is backed by the"
          + " page cache, so it takes DRAM and its contents survive a process crash but not a"
          + " power loss. Mount the pmem/CXL device with -o dax to map it directly.", f, why);
    }
    try {
      return ch.map(mapSync[path] ? READ_WRITE_SYNC : FileChannel.MapMode.READ_WRITE, offset,
          length);
    } catch (IOException e) {
      throw new IOException("pmem cache path " + f + ": mapping " + length + " bytes at "
          + offset + " failed: " + e.getMessage(), e);
    }
  }

  int count() {
    return layout.segmentCount();
  }

  boolean mapSync(int path) {
    return mapSync[path];
  }

  String mapSyncSummary() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < mapSync.length; i++) {
      sb.append(i == 0 ? "" : ",").append(mapSync[i] ? "on" : "off");
    }
    return sb.toString();
  }

  void forcer(Forcer f) {
    this.forcer = f;
  }

  void writer(Writer w) {
    this.writer = w;
  }

  void fileForcer(FileForcer f) {
    this.fileForcer = f;
  }

  /** Whether writes copy into the mappings (opt-in) rather than write the files. */
  boolean writesMapped() {
    return writeMapped;
  }

  /** How the files are read: a positional read; replaced by tests to inject device errors. */
  interface Reader {
    int read(int path, FileChannel ch, ByteBuffer dst, long position) throws IOException;
  }

  private volatile Reader reader = (path, ch, dst, position) -> ch.read(dst, position);

  void reader(Reader r) {
    this.reader = r;
  }

  /** The cache file holding logical offset {@code offset}, and the offset in it. */
  String whereIs(long offset) {
    int s = layout.segmentOf(offset);
    return paths.get(layout.fileOf(s)) + " at byte " + (layout.fileOffset(s)
        + layout.offsetInSegment(offset));
  }

  boolean isLive() {
    return segments != null;
  }

  private MappedByteBuffer[] live() throws IOException {
    MappedByteBuffer[] segs = segments;
    if (segs == null) {
      throw new IOException("the pmem cache is shut down");
    }
    return segs;
  }

  /**
   * Copies the remaining bytes of {@code src} to logical offset {@code offset}.
   * @throws CacheFileCutException when a file ends before the bytes' place (see
   *         {@link #requireStored})
   */
  void write(long offset, ByteBuff src) throws IOException {
    requireStored(offset, src.remaining());
    writeUnchecked(offset, src);
  }

  /** {@link #write(long, ByteBuff)} after the caller ran {@link #requireStored} for the range. */
  void writeUnchecked(long offset, ByteBuff src) throws IOException {
    if (!writeMapped) {
      int len = src.remaining();
      writeFiles(offset, contiguous(src));
      src.position(src.position() + len);
      return;
    }
    MappedByteBuffer[] segs = live();
    int len = src.remaining();
    checkRange(offset, len);
    long pos = offset;
    int left = len;
    while (left > 0) {
      int s = layout.segmentOf(pos);
      int in = layout.offsetInSegment(pos);
      MappedByteBuffer seg = segs[s];
      int n = Math.min(left, seg.capacity() - in);
      ByteBuffer dst = seg.duplicate();
      dst.limit(in + n);
      dst.position(in);
      int from = src.position();
      src.get(dst, from, n);
      src.position(from + n);
      markDirty(s, in, in + n); // before the number: a force covering it takes this run
      note(unconfirmed.get(), layout.pathCount() + s);
      pos += n;
      left -= n;
    }
  }

  /** Copies the remaining bytes of {@code src} to logical offset {@code offset}. */
  void write(long offset, ByteBuffer src) throws IOException {
    write(offset, ByteBuff.wrap(src.slice()));
    src.position(src.limit());
  }

  /** {@link #write(long, ByteBuffer)} after the caller ran {@link #requireStored}. */
  void writeUnchecked(long offset, ByteBuffer src) throws IOException {
    writeUnchecked(offset, ByteBuff.wrap(src.slice()));
    src.position(src.limit());
  }

  /**
   * The remaining bytes of {@code src} as one buffer: a view of it when it is one buffer (the
   * usual case), else a copy into this thread's scratch buffer (valid until the thread's next
   * call). Views and copies are direct or heap as the source is.
   */
  static ByteBuffer contiguous(ByteBuff src) {
    if (src instanceof org.apache.hadoop.hbase.nio.SingleByteBuff) {
      ByteBuffer b = src.nioByteBuffers()[0].duplicate();
      b.limit(src.limit()).position(src.position());
      return b.slice();
    }
    int len = src.remaining();
    ByteBuffer out = WRITE_SCRATCH.get();
    if (out.capacity() < len) {
      out = ByteBuffer.allocateDirect(Math.max(len, out.capacity() * 2));
      WRITE_SCRATCH.set(out);
    }
    ByteBuffer dst = out.duplicate();
    dst.clear();
    src.get(dst, src.position(), len);
    ByteBuffer view = out.duplicate();
    view.clear().limit(len);
    return view.slice();
  }

  /** Per writing thread; grows to the largest block written from several buffers. */
  private static final ThreadLocal<ByteBuffer> WRITE_SCRATCH =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(64 * 1024));

  /**
   * Writes the remaining bytes of {@code src} at logical offset {@code offset} with positional
   * writes of the files (one per segment the range touches), never through the mappings: a page
   * that is gone under the cache (a file cut by another process, a media error, a punched hole
   * on a full filesystem) fails the write with an IOException, where a store through a mapping
   * raises SIGBUS (a crash in the copy on JDK 8, an asynchronous InternalError on JDK 9+). A
   * write past the end of a cut file extends it again (the cut pages between read as zeros,
   * which their blocks' checks refuse). On the caller's thread when the channels are immune to
   * interrupts, else on a checker thread: an interrupted thread's write would close the channel
   * and drop the lock (see {@link #check}). {@code src}'s position is not moved.
   * @throws IOException when a write fails (device error, no space, shut down)
   */
  void writeFiles(long offset, ByteBuffer src) throws IOException {
    live();
    checkRange(offset, src.remaining());
    long[] mine = unconfirmed.get(); // the caller's, also when a checker thread writes
    if (uninterruptible) {
      writeFilesHere(offset, src.duplicate(), mine);
    } else {
      onChecker(offset, () -> {
        writeFilesHere(offset, src.duplicate(), mine);
        return null;
      });
    }
  }

  private void writeFilesHere(long offset, ByteBuffer src, long[] mine) throws IOException {
    long pos = offset;
    while (src.hasRemaining()) {
      int s = layout.segmentOf(pos);
      int in = layout.offsetInSegment(pos);
      int n = (int) Math.min(src.remaining(), layout.segmentLength(s) - in);
      int path = layout.fileOf(s);
      long fileAt = layout.fileOffset(s) + in;
      int limit = src.limit();
      src.limit(src.position() + n);
      try {
        while (src.hasRemaining()) {
          writer.write(path, channels[path], src, fileAt + n - src.remaining());
        }
      } finally {
        src.limit(limit);
      }
      note(mine, path); // after the write: a force covering its number began after it ended
      pos += n;
    }
  }

  /**
   * Refuses a write into a page past the end of its file: a store into such a page of a mapping
   * raises SIGBUS (an asynchronous InternalError on JDK 9+, a crash in the copy stub on JDK 8).
   * A file is only ever that short when another process cut it under the running cache (one
   * that ignores the lock). The file could still be cut between this look and the copy; the
   * window is the copy's (microseconds), not the cache's lifetime. The length is an fstat of
   * the locked descriptor (or, when the channels are interruptible, a stat of the path, which
   * is the locked file unless it was renamed away meanwhile).
   * Positional writes (the default) need no such look: they fail or extend the file.
   * @throws CacheFileCutException when a file ends before the range does
   */
  void requireStored(long offset, int len) throws IOException {
    live();
    checkRange(offset, len);
    if (!writeMapped) {
      return;
    }
    long pos = offset;
    int left = len;
    while (left > 0) {
      int s = layout.segmentOf(pos);
      int in = layout.offsetInSegment(pos);
      int n = (int) Math.min(left, layout.segmentLength(s) - in);
      int path = layout.fileOf(s);
      long end = layout.fileOffset(s) + in + n;
      long now = uninterruptible ? channels[path].size() : paths.get(path).length();
      if (now < end) {
        throw new CacheFileCutException("pmem cache file " + paths.get(path) + " was cut to "
            + now + " bytes under the running cache (by a process that ignores its lock): a"
            + " block ending at byte " + end + " of it cannot be stored");
      }
      pos += n;
      left -= n;
    }
  }

  /** Views of {@code len} bytes at {@code offset}: shared memory, nothing copied. */
  ByteBuffer[] slices(long offset, int len) throws IOException {
    MappedByteBuffer[] segs = live();
    checkRange(offset, len);
    int first = layout.segmentOf(offset);
    int last = len == 0 ? first : layout.segmentOf(offset + len - 1);
    ByteBuffer[] out = new ByteBuffer[last - first + 1];
    long pos = offset;
    int left = len;
    for (int i = 0; i < out.length; i++) {
      int in = layout.offsetInSegment(pos);
      MappedByteBuffer seg = segs[first + i];
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

  /** Copies {@code len} bytes at {@code offset} into a new heap buffer. */
  ByteBuffer copy(long offset, int len) throws IOException {
    ByteBuffer out = ByteBuffer.allocate(len);
    for (ByteBuffer b : slices(offset, len)) {
      out.put(b);
    }
    out.flip();
    return out;
  }

  /** What a check computes from a block's bytes. */
  interface BytesCheck<T> {
    T apply(ByteBuffer bytes);
  }

  /**
   * Reads {@code len} bytes at {@code offset} from the files with positional reads, not through
   * the mappings, and applies {@code check} to them.
   *
   * <p>A page with nothing behind it (a truncated file, a media error) makes such a read fail with
   * an IOException at once; touched through a mapping it raises SIGBUS, which the JVM reports as
   * an asynchronous InternalError some time later, or, in an intrinsic such as CRC32C, by
   * crashing. A FileChannel read by an interrupted thread closes the channel
   * (ClosedByInterruptException), and closing a descriptor of a file releases this process's
   * lock on it, so a caller's interrupt (a cancelled prefetch, a region closing) would end every
   * later read and free the files to another process. So the reads run on the caller's thread
   * only when every channel is immune to interrupts ({@link Uninterruptible}); otherwise on the
   * checker threads, which nothing interrupts, and an interrupted caller waits for the read to
   * end (it has its interrupt set again after). The bytes are in a reused buffer of the reading
   * thread: valid during {@code check} only.
   */
  <T> T check(long offset, int len, BytesCheck<T> check) throws IOException {
    live();
    checkRange(offset, len);
    if (uninterruptible) {
      return check.apply(read(offset, len));
    }
    return onChecker(offset, () -> check.apply(read(offset, len)));
  }

  /**
   * Reads {@code dst.remaining()} bytes at logical offset {@code offset} into {@code dst} with
   * positional reads of the files (one per segment the range touches; one for any block that
   * does not cross a 1 GiB segment boundary), never through the mappings: a page that is gone
   * (a truncated file, a media error) is an IOException here, where touched through a mapping it
   * is an asynchronous InternalError or a crash. On the caller's thread when the channels are
   * immune to interrupts, else on a checker thread (see {@link #check}).
   * @throws IOException when the bytes cannot be read (truncated file, device error, shut down)
   */
  void readFully(long offset, ByteBuffer dst) throws IOException {
    live();
    checkRange(offset, dst.remaining());
    if (uninterruptible) {
      readInto(offset, dst);
    } else {
      onChecker(offset, () -> {
        readInto(offset, dst);
        return null;
      });
    }
  }

  /** Runs {@code task} on a checker thread, which nothing interrupts, and waits for it. */
  private <T> T onChecker(long offset, java.util.concurrent.Callable<T> task)
      throws IOException {
    Future<T> result;
    try {
      result = checkers.submit(task);
    } catch (RejectedExecutionException e) {
      throw new IOException("the pmem cache is shut down");
    }
    // Waits out an interrupt (and sets it again after): a read fills the caller's buffer, which
    // the caller releases (to a pool) when this returns, so the task must be over by then.
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return result.get();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof IOException) {
        throw (IOException) c;
      }
      if (c instanceof RuntimeException) {
        throw (RuntimeException) c;
      }
      if (c instanceof Error) {
        throw (Error) c;
      }
      throw new IOException("pmem cache block at " + offset + ": " + c, c);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The thread's reused buffer, holding {@code len} bytes read at {@code offset}. */
  private ByteBuffer read(long offset, int len) throws IOException {
    ByteBuffer out = SCRATCH.get();
    if (out.capacity() < len) {
      out = ByteBuffer.allocate(Math.max(len, out.capacity() * 2));
      SCRATCH.set(out);
    }
    out.clear();
    out.limit(len);
    readInto(offset, out);
    out.flip();
    return out;
  }

  /** Fills {@code out} from logical offset {@code offset}, on this thread. */
  private void readInto(long offset, ByteBuffer out) throws IOException {
    long pos = offset;
    while (out.hasRemaining()) {
      int s = layout.segmentOf(pos);
      int in = layout.offsetInSegment(pos);
      int n = (int) Math.min(out.remaining(), layout.segmentLength(s) - in);
      int path = layout.fileOf(s);
      long at = layout.fileOffset(s) + in;
      int limit = out.limit();
      out.limit(out.position() + n);
      try {
        while (out.hasRemaining()) {
          long now = at + n - out.remaining();
          if (reader.read(path, channels[path], out, now) < 0) {
            throw new java.io.EOFException("pmem cache file " + paths.get(path) + " ends before byte "
                + (at + n) + ": it was truncated (by a process that ignores its lock?)");
          }
        }
      } finally {
        out.limit(limit);
      }
      pos += n;
    }
  }

  /** Per checking thread; grows to the largest block checked. */
  private static final ThreadLocal<ByteBuffer> SCRATCH =
      ThreadLocal.withInitial(() -> ByteBuffer.allocate(64 * 1024));

  private static ExecutorService newCheckers() {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(CHECKERS, CHECKERS, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "pmem-cache-check-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** Checks run by the recovery pass (one thread) and by reads during it (handlers). */
  private static final int CHECKERS = 4;

  private void checkRange(long offset, int len) {
    if (offset < 0 || len < 0 || offset + len > layout.capacity()) {
      throw new IllegalArgumentException("pmem cache access [" + offset + ", " + (offset + len)
          + ") outside the capacity " + layout.capacity());
    }
  }

  private void markDirty(int s, int from, int to) {
    synchronized (dirty) {
      dirty[s].add(from, to);
    }
  }

  /** Numbers a completed write of ledger {@code i} and keeps it in {@code mine}. */
  private void note(long[] mine, int i) {
    long n = ledgers[i].written();
    if (mine[2 * i + 1] == 0) {
      mine[2 * i] = n;
    }
    mine[2 * i + 1] = n;
  }

  /**
   * Forces every file and page written before this call to the device.
   * @throws IOException when a force fails, or when a force that covered a write of this thread
   *         not yet confirmed failed before (see the class notes); what was not forced stays
   *         dirty for the next call
   */
  void sync() throws IOException {
    MappedByteBuffer[] segs = live();
    long[] mine = unconfirmed.get();
    IOException failure = null;
    for (int p = 0; p < channels.length; p++) {
      int path = p;
      failure = settle(p, () -> fileForcer.force(path, channels[path]), mine, failure);
    }
    for (int s = 0; s < segs.length; s++) {
      int seg = s;
      failure = settle(channels.length + s, () -> forceRuns(segs, seg), mine, failure);
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Syncs ledger {@code i} and settles this thread's writes of it; the first failure. */
  private IOException settle(int i, ForceLedger.Force force, long[] mine, IOException failure) {
    IOException f = failure;
    try {
      ledgers[i].sync(force);
    } catch (IOException e) {
      if (f == null) {
        f = e;
      }
    }
    long from = mine[2 * i];
    long to = mine[2 * i + 1];
    if (to != 0) {
      mine[2 * i] = 0;
      mine[2 * i + 1] = 0;
      if (f == null && ledgers[i].mayHaveLost(from, to)) {
        f = new IOException("an earlier force of " + ledgerName(i) + " failed, and some of the"
            + " writes this sync confirms were made before it: they may not be on the device"
            + " (a failed write-back is reported once), so they are not confirmed");
      }
    }
    return f;
  }

  private String ledgerName(int i) {
    if (i < channels.length) {
      return "the pmem cache file " + paths.get(i);
    }
    int s = i - channels.length;
    return "the pmem cache mapping " + s + " of " + paths.get(layout.fileOf(s));
  }

  /** Forces the page runs written into segment {@code s}; see the class notes. */
  private void forceRuns(MappedByteBuffer[] segs, int s) throws IOException {
    synchronized (forceLocks[s]) {
      List<int[]> runs;
      synchronized (dirty) {
        if (dirty[s].isEmpty()) {
          return;
        }
        runs = dirty[s].takeAll();
      }
      if (!forcer.byRange() && runs.size() > 1) {
        // Each force would write back the whole segment: once is enough.
        runs = java.util.Collections.singletonList(
            new int[] {runs.get(0)[0], runs.get(runs.size() - 1)[1]});
      }
      for (int i = 0; i < runs.size(); i++) {
        int[] run = runs.get(i);
        try {
          forcer.force(segs[s], run[0], run[1] - run[0]);
        } catch (IOException | RuntimeException | InternalError e) {
          // InternalError: the JVM's report of a fault (SIGBUS) inside a memory access.
          synchronized (dirty) {
            for (int[] left : runs.subList(i, runs.size())) {
              dirty[s].add(left[0], left[1]);
            }
          }
          throw e instanceof IOException ? (IOException) e
              : new IOException("forcing the pmem cache's written pages failed", e);
        }
      }
    }
  }

  /**
   * Drops the mappings: later calls fail with an IOException. Slices handed out before stay
   * readable until the garbage collector collects them (see the class notes).
   */
  void release() {
    segments = null;
    checkers.shutdown();
  }

  /**
   * Drops and unmaps the mappings at once; only when no slice of them can be in use (a start that
   * failed before serving anything, or a shutdown after every reader released its blocks).
   * @return false when this JVM cannot unmap explicitly (the garbage collector does it later)
   */
  boolean unmap() {
    MappedByteBuffer[] segs = segments;
    segments = null;
    checkers.shutdown();
    if (segs == null) {
      return true;
    }
    boolean all = true;
    for (int s = 0; s < segs.length; s++) {
      synchronized (forceLocks[s]) { // not under a force
        all &= Unmapper.unmap(segs[s]);
      }
    }
    if (!all) {
      LOG.warn("pmem cache: this JVM cannot unmap explicitly ({}); the mappings go when the"
          + " garbage collector collects them", Unmapper.UNAVAILABLE);
    }
    return all;
  }

  /**
   * Why {@code f}'s filesystem refuses MAP_SYNC, or null when it grants it; creates, extends and
   * writes nothing of the cache. A temporary file in the same directory (a sparse page) is
   * mapped read-only with MAP_SYNC, never the cache file itself: closing any descriptor of a file
   * drops this process's POSIX locks on it, which would free a cache this JVM already holds to
   * another process. The probe file is unlinked as soon as it is open, before it is extended or
   * mapped (both work on the descriptor), so a kill -9 can leave it only in the instant between
   * its creation and its opening; such a leftover, and only that name, is removed first.
   */
  static String mapSyncRefusal(File f) {
    return mapSyncRefusal(f, () -> { });
  }

  /** {@link #mapSyncRefusal(File)}, running {@code beforeMap} just before the probe maps. */
  static String mapSyncRefusal(File f, Runnable beforeMap) {
    File dir = f.getAbsoluteFile().getParentFile();
    removeProbeLeftovers(dir);
    FileChannel.MapMode readSync = findSyncMode("READ_ONLY_SYNC");
    if (readSync == null) {
      return "this JDK has no MAP_SYNC (needs JDK 14+)";
    }
    File probe = null;
    try {
      probe = File.createTempFile(PROBE_PREFIX, PROBE_SUFFIX, dir);
      try (RandomAccessFile raf = new RandomAccessFile(probe, "rw")) {
        deleteProbe(probe);
        probe = null;
        raf.setLength(Layout.PAGE);
        beforeMap.run();
        Unmapper.unmap(raf.getChannel().map(readSync, 0, Layout.PAGE));
        return null;
      }
    } catch (IOException | UnsupportedOperationException e) {
      return "MAP_SYNC refused: " + e.getMessage();
    } finally {
      if (probe != null) {
        deleteProbe(probe);
      }
    }
  }

  private static final String PROBE_PREFIX = ".pmem-mapsync-probe";
  private static final String PROBE_SUFFIX = ".tmp";

  /**
   * Removes probe files a killed JVM left in {@code dir}. Another JVM probing the same directory
   * at this instant loses only the name of its file, not the file: it holds it open, and the
   * same lock that stops a second RegionServer on these paths stops that JVM's start later.
   */
  private static void removeProbeLeftovers(File dir) {
    File[] leftovers = dir.listFiles((d, name) -> name.startsWith(PROBE_PREFIX)
        && name.endsWith(PROBE_SUFFIX));
    if (leftovers == null) {
      return;
    }
    for (File leftover : leftovers) {
      LOG.info("pmem cache: removing {}, a MAP_SYNC probe file an earlier process left",
          leftover);
      deleteProbe(leftover);
    }
  }

  private static void deleteProbe(File probe) {
    if (!probe.delete() && probe.exists()) {
      LOG.warn("pmem cache: could not delete the MAP_SYNC probe file {}", probe);
    }
  }

  /** The message of a start refused because MAP_SYNC is required and {@code why}. */
  static String requiredMapSyncRefused(File f, String why) {
    return "pmem cache path " + f + " cannot be mapped with MAP_SYNC (" + why + ") but "
        + PmemCacheConfig.MAP_SYNC.name + "=require; mount the filesystem with -o dax on a"
        + " pmem/CXL device or set " + PmemCacheConfig.MAP_SYNC.name + "=auto";
  }

  private static void jdkForce(MappedByteBuffer seg, int index, int length) throws IOException {
    try {
      if (FORCE_RANGE != null) {
        FORCE_RANGE.invoke(seg, index, length);
      } else {
        seg.force();
      }
    } catch (java.lang.reflect.InvocationTargetException e) {
      Throwable c = e.getCause();
      throw c instanceof IOException ? (IOException) c
          : new IOException("force of a pmem cache mapping failed: " + c, c);
    } catch (IllegalAccessException e) {
      throw new IOException("force of a pmem cache mapping failed", e);
    } catch (Exception e) {
      // JDK 8 throws an undeclared IOException from force(); JDK 13+ an UncheckedIOException.
      throw e instanceof IOException ? (IOException) e
          : new IOException("force of a pmem cache mapping failed: " + e, e);
    }
  }

  private static FileChannel.MapMode findSyncMode(String name) {
    try {
      Class<?> c = Class.forName("jdk.nio.mapmode.ExtendedMapMode");
      return (FileChannel.MapMode) c.getField(name).get(null);
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
}
