package dev.forkset.hbase.pmem;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.hbase.HBaseIOException;
import org.apache.hadoop.hbase.io.ByteBuffAllocator;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pmem: cache's files, opened the safe way: checked, locked, preallocated, mapped, and only
 * then written; then the blocks in them, each written with and checked against its
 * {@link BlockCheck} header.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Start-up order: (1) {@link StartupChecks}: paths, collisions, MAP_SYNC where it is
 *       required (probed without touching a cache file), free space summed per filesystem;
 *       (2) open or create each file and take its {@link CacheLock}; (3) read every
 *       {@link CacheFileHeader} and decide warm (keep the epoch) or cold, and whether
 *       BucketCache's persisted map belongs to these files ({@link PersistedMap}); (4)
 *       {@link Preallocation}; (5) {@link Mappings}, with MAP_SYNC as configured. Nothing is
 *       written before all of that has passed: (6) a cold start moves an unusable map aside
 *       (unread) and formats the files with a new epoch; every start writes its holder record.
 *       A failure releases the locks and deletes only the files this start created (CREATE_NEW)
 *       and locked, so a valid cache is never lost to a failed start (e.g. map.sync=require on
 *       a non-DAX mount), nor a file that a start racing on the same new paths created or locked.
 *   <li>A warm start keeps the files and their epoch; BucketCache then reloads its last
 *       checkpoint and verifies every entry against its block header before serving it (patch
 *       0056), so the same path serves a clean restart, a kill -9 and a power loss. Whether the
 *       previous run stopped cleanly is only reported.
 *   <li>A block's header carries the checksum of its body: a write torn by a crash (a kill
 *       during the write, a power cut before the sync) fails its check, whatever part of it
 *       landed. By default the entry goes to its file in one positional write; with
 *       hbase.bucketcache.pmem.write=mapped the body is copied into the mapping first, then its
 *       header.
 *   <li>{@link #close()} forces what was written, records a clean stop, drops the mappings and
 *       closes the files (which releases the locks), in that order, so a second engine on the
 *       same paths, in this JVM or another, starts warm at once. BucketCache calls it after its
 *       final checkpoint of the backing map (patches 0059, 0060): the clean-stop record and the
 *       lock release come after the map they vouch for is on the device, and the clean stop is
 *       recorded only when that checkpoint succeeded. The memory is unmapped at once when
 *       BucketCache saw every block released by its readers within its bounded wait, and by the
 *       garbage collector otherwise: a reader may still hold a block ({@link Mappings}).
 * </ol>
 */
public final class PmemStore {
  private static final Logger LOG = LoggerFactory.getLogger(PmemStore.class);
  private static final String RUNNING = "running ";
  private static final String STOPPED = "stopped cleanly ";

  private final PmemCacheConfig config;
  private final Layout layout;
  private final FileChannel[] channels;
  private final FileLock[] locks;
  private final Mappings mappings;
  private final BlockCheck check;
  private final RecoveryStats stats;
  private final ObjectName mbeanName;
  private volatile boolean closed;

  private PmemStore(PmemCacheConfig config, Layout layout, FileChannel[] channels,
      FileLock[] locks, Mappings mappings, BlockCheck check, RecoveryStats stats) {
    this.config = config;
    this.layout = layout;
    this.channels = channels;
    this.locks = locks;
    this.mappings = mappings;
    this.check = check;
    this.stats = stats;
    this.mbeanName = register(stats, config.paths().get(0));
  }

  /** What the identity records of the files say. */
  private static final class Identity {
    long epoch;
    Crc crc;
    String coldReason;
    String previousStop = "unknown";
  }

  /**
   * Opens the cache files: see the class notes for the order.
   * @throws IOException naming the path or setting when the cache cannot start
   */
  public static PmemStore open(PmemCacheConfig config) throws IOException {
    List<File> paths = config.paths();
    int n = paths.size();
    Layout layout = new Layout(n, config.capacity(), config.mappingSize());
    StartupChecks.check(config, layout);

    FileChannel[] channels = new FileChannel[n];
    Mappings mapped = null;
    FileLock[] locks = new FileLock[n];
    boolean[] created = new boolean[n];
    boolean ok = false;
    try {
      String interruptible = null;
      for (int i = 0; i < n; i++) {
        File f = paths.get(i);
        channels[i] = openOrCreate(f, created, i);
        // Before the lock: from here on no interrupt of any thread using the channel can close
        // it (and so drop the lock); see Uninterruptible.
        String why = Uninterruptible.apply(channels[i]);
        if (why != null) {
          interruptible = why;
        }
        locks[i] = CacheLock.acquire(f, channels[i], config.lockWaitMillis());
      }
      if (interruptible != null) {
        LOG.warn("pmem cache: the cache files' channels cannot be made immune to interrupts ({});"
            + " reads, checks and writes run on threads of their own so that an interrupted"
            + " reader or writer cannot close a file and drop its lock, at the cost of a thread"
            + " hand-off per read and write."
            + " Add --add-exports java.base/sun.nio.ch=ALL-UNNAMED (or --add-opens) to the"
            + " RegionServer's JVM options to read on the caller's thread", interruptible);
      }
      Identity id = readIdentity(layout, paths, channels);
      File map = config.persistencePath();
      String mapAside = null;
      if (map != null && map.exists()) {
        mapAside = id.coldReason != null ? id.coldReason : mapMismatch(config, layout, id, map);
      }
      boolean cold = id.coldReason != null;
      for (int i = 0; i < n; i++) {
        if (!Preallocation.preallocate(paths.get(i), channels[i], layout.fileLength(i), cold)) {
          // Without fallocate (no command, or a filesystem that does not support it) a file
          // that is not fully allocated can only be zero-filled.
          cold = true;
          id.coldReason = paths.get(i) + " has holes and fallocate (missing, or not supported by"
              + " its filesystem) cannot fill them in place";
          mapAside = map != null && map.exists() ? id.coldReason : null;
          Preallocation.preallocate(paths.get(i), channels[i], layout.fileLength(i), true);
        }
      }
      Mappings mappings = new Mappings(layout, channels, paths, config.mapSync(),
          interruptible == null, config.writeMapped());
      mapped = mappings;

      // Every check has passed: from here on the engine writes.
      if (mapAside != null) {
        File aside = new File(map.getPath() + StartupChecks.DISCARDED_SUFFIX);
        Durable.rename(map, aside);
        LOG.warn("pmem cache: moved the persisted map {} aside to {} without reading it: {}",
            map, aside, mapAside);
      }
      if (cold) {
        id.epoch = newEpoch();
        id.crc = Crc.fastest();
        format(layout, paths, channels, created, id);
      }
      String holder = RUNNING + CacheLock.self() + " since " + now();
      for (int i = 0; i < n; i++) {
        writeHolder(channels[i], holder);
      }
      RecoveryStats stats = new RecoveryStats(cold ? "cold" : "warm", id.coldReason,
          id.previousStop, id.epoch, id.crc.name());
      PmemStore store = new PmemStore(config, layout, channels, locks, mappings,
          new BlockCheck(id.epoch, id.crc), stats);
      if (cold) {
        LOG.warn("pmem cache: cold start, files formatted with epoch {}: {}",
            Long.toHexString(id.epoch), id.coldReason);
      } else {
        LOG.info("pmem cache: warm start, epoch {} kept (previous stop: {}); the blocks of the"
            + " persisted map are verified before they are served", Long.toHexString(id.epoch),
            id.previousStop);
      }
      LOG.info("pmem cache: {} mappings of up to {} bytes over {} path(s) {}, MAP_SYNC {},"
          + " block checksum {}", layout.segmentCount(), layout.mappingSize(), n, paths,
          mappings.mapSyncSummary(), id.crc.name());
      ok = true;
      return store;
    } finally {
      if (!ok) {
        if (mapped != null) {
          mapped.unmap(); // nothing was served from them
        }
        // Only files this start created and locked: a file it created but another start locked
        // first is that start's. Deleted while still locked, so no other start takes the lock
        // of a file that is about to go.
        for (int i = 0; i < n; i++) {
          if (created[i] && locks[i] != null && !paths.get(i).delete()) {
            LOG.warn("pmem cache: could not delete {} created by a failed start", paths.get(i));
          }
        }
        closeAll(channels);
      }
    }
  }

  /**
   * Opens {@code f}, creating it when it does not exist; {@code created[i]} tells whether this
   * call created it (CREATE_NEW, so of two starts racing on a new path exactly one did).
   */
  private static FileChannel openOrCreate(File f, boolean[] created, int i) throws IOException {
    while (true) {
      try {
        FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.CREATE_NEW,
            StandardOpenOption.READ, StandardOpenOption.WRITE);
        created[i] = true;
        return ch;
      } catch (FileAlreadyExistsException e) {
        // Another start created it, or it was there: open it as it is.
      }
      try {
        return FileChannel.open(f.toPath(), StandardOpenOption.READ, StandardOpenOption.WRITE);
      } catch (NoSuchFileException e) {
        // A failed start deleted the file it had just created: create it again.
      }
    }
  }

  private static Identity readIdentity(Layout layout, List<File> paths, FileChannel[] channels)
      throws IOException {
    Identity id = new Identity();
    Set<String> stops = new LinkedHashSet<>();
    for (int i = 0; i < channels.length; i++) {
      String holder = CacheFileHeader.readHolder(channels[i]);
      stops.add(holder == null ? "unknown" : holder.startsWith(STOPPED) ? "clean"
          : holder.startsWith(RUNNING) ? "unclean" : "unknown");
    }
    id.previousStop = stops.contains("unclean") ? "unclean"
        : stops.size() == 1 ? stops.iterator().next() : "unknown";
    for (int i = 0; i < channels.length && id.coldReason == null; i++) {
      File f = paths.get(i);
      CacheFileHeader h;
      try {
        h = CacheFileHeader.read(channels[i]);
      } catch (IOException e) {
        id.coldReason = f + ": " + e.getMessage();
        break;
      }
      String mismatch = h.mismatch(layout, i);
      if (mismatch != null) {
        id.coldReason = f + ": " + mismatch;
      } else if (channels[i].size() != layout.fileLength(i)) {
        id.coldReason = f + ": it is " + channels[i].size() + " bytes long, its layout needs "
            + layout.fileLength(i) + " (truncated or extended)";
      } else if (i > 0 && h.epoch != id.epoch) {
        id.coldReason = f + ": it belongs to another cache than " + paths.get(0)
            + " (epoch " + Long.toHexString(h.epoch) + " vs " + Long.toHexString(id.epoch) + ")";
      } else if (Crc.forId(h.crcId) == null) {
        id.coldReason = f + ": its blocks are checksummed with " + Crc.nameOf(h.crcId)
            + ", which this JDK lacks (CRC32C needs JDK 9+)";
      } else {
        id.epoch = h.epoch;
        id.crc = Crc.forId(h.crcId);
      }
    }
    return id;
  }

  /** Why the persisted map cannot be used with these (warm) files, or null. */
  private static String mapMismatch(PmemCacheConfig config, Layout layout, Identity id, File map) {
    byte[] stored;
    try {
      stored = PersistedMap.readChecksum(map);
    } catch (IOException e) {
      return "the persisted map cannot be read: " + e.getMessage();
    }
    if (stored.length == 0) {
      return null; // an empty cache's map: nothing to use, nothing to mistake
    }
    try {
      byte[] expected = PersistedMap.digest(config.mapDigestAlgorithm(), id.epoch, layout);
      return MessageDigest.isEqual(expected, stored) ? null
          : "it was written for other cache files (another epoch or layout)";
    } catch (IOException e) {
      return e.getMessage();
    }
  }

  private static void format(Layout layout, List<File> paths, FileChannel[] channels,
      boolean[] created, Identity id) throws IOException {
    long now = System.currentTimeMillis();
    Set<File> dirs = new LinkedHashSet<>();
    for (int i = 0; i < channels.length; i++) {
      if (channels[i].size() > layout.fileLength(i)) {
        channels[i].truncate(layout.fileLength(i));
      }
      ByteBuffer h = CacheFileHeader.of(layout, i, id.crc, id.epoch, now).encode();
      while (h.hasRemaining()) {
        channels[i].write(h, h.position());
      }
      channels[i].force(true);
      if (created[i]) {
        dirs.add(paths.get(i).getParentFile());
      }
    }
    for (File dir : dirs) {
      Durable.syncDirectory(dir);
    }
  }

  private static void writeHolder(FileChannel ch, String text) throws IOException {
    ByteBuffer b = CacheFileHeader.encodeHolder(text);
    long pos = CacheFileHeader.HOLDER_OFFSET;
    while (b.hasRemaining()) {
      pos += ch.write(b, pos);
    }
    ch.force(false);
  }

  private static long newEpoch() {
    long e = 0;
    SecureRandom r = new SecureRandom();
    while (e == 0) {
      e = r.nextLong();
    }
    return e;
  }

  private static String now() {
    return new SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ssZ").format(new Date());
  }

  private static ObjectName register(RecoveryStats stats, File firstPath) {
    try {
      ObjectName name = new ObjectName("dev.forkset.hbase.pmem:type=PmemCache,path="
          + ObjectName.quote(firstPath.getPath()));
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      if (server.isRegistered(name)) {
        server.unregisterMBean(name);
      }
      server.registerMBean(stats, name);
      return name;
    } catch (Exception e) {
      LOG.warn("pmem cache: cannot register its JMX bean: {}", e.toString());
      return null;
    }
  }

  private static void closeAll(FileChannel[] channels) {
    for (FileChannel ch : channels) {
      if (ch != null) {
        try {
          ch.close(); // releases the lock
        } catch (IOException e) {
          LOG.warn("closing a pmem cache file failed", e);
        }
      }
    }
  }

  // ---- blocks ------------------------------------------------------------------------------

  /** Bytes kept in front of each block. */
  public int blockHeaderSize() {
    return BlockCheck.HEADER_SIZE;
  }

  /**
   * Writes a block at {@code offset}: header, then its bytes, then {@code metadata}.
   * @param entryLength header size plus both remainders
   */
  public void writeBlock(BlockCacheKey key, long offset, int entryLength, ByteBuff block,
      ByteBuffer metadata) throws IOException {
    int bodyLength = entryLength - BlockCheck.HEADER_SIZE;
    if (bodyLength != block.remaining() + metadata.remaining()) {
      throw new IllegalArgumentException("entry of " + entryLength + " bytes for a body of "
          + block.remaining() + " + " + metadata.remaining());
    }
    mappings.requireStored(offset, entryLength);
    if (badRanges.overlapping(offset, entryLength) != null) {
      // Not stored, and not refused either: BucketCache frees a refused block's slot and its
      // allocator hands the last freed slot out first, so every later block of that size would
      // get this slot and be refused in turn (the size class stops caching; measured in
      // PmemMediaErrorTest). The block goes into the backing map unwritten; its first read
      // fails (the pread meets the bad page, or the stale bytes fail the check): a miss, which
      // frees the slot again. So the slot costs at most one block per read of it.
      stats.writeSkipped();
      return;
    }
    if (!mappings.writesMapped()) {
      writeEntry(key, offset, entryLength, block, metadata);
      return;
    }
    long body = offset + BlockCheck.HEADER_SIZE;
    // The block's bytes as one buffer (a view; a copy only when it spans several buffers), so
    // the checksum is summed from the source, never read back from the mapping.
    ByteBuffer bytes = Mappings.contiguous(block);
    int blockLength = bytes.remaining();
    ByteBuffer header = check.header(key, bodyLength,
        new ByteBuffer[] {bytes.duplicate(), metadata.duplicate()});
    mappings.writeUnchecked(body, ByteBuff.wrap(bytes));
    mappings.writeUnchecked(body + blockLength, metadata.duplicate());
    mappings.writeUnchecked(offset, header);
  }

  /**
   * {@link #writeBlock} with a positional write: the entry (header, body, metadata) is assembled
   * in this thread's direct buffer, summed there (the checksum covers the very bytes written)
   * and written with one pwrite (two only across a segment boundary). Its order does not
   * matter: a write cut short (a kill during it, a power cut before the sync) leaves an old
   * header over new bytes or a new header over old ones, and either fails the check (another
   * key, or the checksum); an old header of the same key and length vouches only for that
   * block's own bytes (HFile blocks never change under a key).
   */
  private void writeEntry(BlockCacheKey key, long offset, int entryLength, ByteBuff block,
      ByteBuffer metadata) throws IOException {
    ByteBuffer entry = ENTRY_SCRATCH.get();
    if (entry.capacity() < entryLength) {
      entry = ByteBuffer.allocateDirect(Math.max(entryLength, entry.capacity() * 2));
      ENTRY_SCRATCH.set(entry);
    }
    int blockLength = block.remaining();
    ByteBuffer body = entry.duplicate();
    body.clear().position(BlockCheck.HEADER_SIZE);
    block.get(body, block.position(), blockLength); // absolute: block's position stays
    ByteBuffer meta = entry.duplicate();
    meta.clear().position(BlockCheck.HEADER_SIZE + blockLength);
    meta.put(metadata.duplicate());
    entry.clear().limit(entryLength);
    check.seal(key, entry);
    try {
      mappings.writeFiles(offset, entry);
    } catch (java.nio.channels.ClosedChannelException e) {
      throw e; // shut down: not the device
    } catch (IOException e) {
      if (!mappings.isLive()) {
        throw e; // shut down, not the device
      }
      // Skipped, not refused, as over a bad range: a refusal would hand the same slot to every
      // later block of this size. Its read is a miss (a part written, or none).
      stats.writeSkipped();
      if (noSpace(e)) {
        logNoSpace(offset, e); // transient: the range stays usable
      } else {
        recordBadRange(offset, entryLength, e, "writing");
      }
    }
  }

  /** Whether {@code e} is ENOSPC (a full filesystem under a hole punched into a cache file). */
  private static boolean noSpace(IOException e) {
    String m = e.getMessage();
    return m != null && m.contains("No space left on device");
  }

  /** One WARN a minute for writes that found no space; the rest at DEBUG. */
  private void logNoSpace(long offset, IOException e) {
    long now = System.nanoTime();
    long next = nextNoSpaceWarn.get();
    if (now - next >= 0 && nextNoSpaceWarn.compareAndSet(next, now + FAILURE_WARN_NANOS)) {
      LOG.warn("pmem cache: a block write at {} ({}) found no space ({}): a hole was punched into"
          + " a cache file on a full filesystem (the files are preallocated at start); that"
          + " block is not cached. At most one such line a minute", offset,
          mappings.whereIs(offset), e.getMessage());
    } else {
      LOG.debug("pmem cache: a block write at {} found no space: {}", offset, e.getMessage());
    }
  }

  private final java.util.concurrent.atomic.AtomicLong nextNoSpaceWarn =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime());

  /**
   * Per writing thread, the entry (header, body, metadata) of a positional block write; direct,
   * so the write copies it once, into the file. Grows to the largest entry written.
   */
  private static final ThreadLocal<ByteBuffer> ENTRY_SCRATCH =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(66 * 1024));

  /**
   * Refuses a raw write (no block header, so a skipped write could not be told from a stored
   * one) overlapping a range whose read failed with an I/O error: a store into a poisoned page through the mapping raises SIGBUS (a page-cache filesystem has to read the
   * page in first, which fails; on DAX a store does not clear the poison), which crashes the
   * JVM (JDK 8) or kills the writing thread with an asynchronous InternalError (JDK 9+).
   * @throws CacheFileCutException as a write into a cut file: BucketCache drops that block
   */
  private void refuseBadRange(long offset, int len) throws CacheFileCutException {
    long[] bad = badRanges.overlapping(offset, len);
    if (bad != null) {
      stats.writeSkipped();
      throw new CacheFileCutException("pmem cache: a block of " + len + " bytes at " + offset
          + " would overlap bytes " + bad[0] + " to " + bad[1] + " (" + mappings.whereIs(bad[0])
          + "), whose read failed with an I/O error (a media error): it is not stored there");
    }
  }

  /** Records the range of a block whose positional read or write failed with an I/O error. */
  private void recordBadRange(long offset, int len, IOException e, String doing) {
    if (e instanceof java.io.EOFException) {
      return; // a cut file: a positional write extends it again, a mapped one is refused
    }
    if (badRanges.add(offset, len)) {
      stats.badRange(badRanges.size());
      LOG.warn("pmem cache: {} {} bytes at {} ({}) failed with an I/O error ({}): a media"
          + " error (or no space under a hole punched into the file); no block is stored over"
          + " these bytes again while this cache runs ({} such range(s)). Check the device"
          + " (ndctl list --media-errors, badblocks)", doing, len, offset,
          mappings.whereIs(offset), e.getMessage(), badRanges.size());
    }
  }

  private final BadRanges badRanges = new BadRanges();

  /**
   * The stored bytes of the block at {@code offset}, without its header; nothing copied: views
   * of the mappings (reads with {@code hbase.bucketcache.pmem.read=mapped} only, see
   * {@link #readBlock} for why the default reads copies).
   */
  public ByteBuffer[] blockBody(long offset, int entryLength) throws IOException {
    // A block over a bad range was never stored (writeBlock skips it): the mapping holds what
    // was there before, another block's bytes or the poisoned page. Unchecked views must not
    // hand that out; a miss instead (the caller evicts, which frees the slot).
    long[] bad = badRanges.overlapping(offset, entryLength);
    if (bad != null) {
      throw new HBaseIOException("pmem cache block at " + offset + ": overlaps bytes " + bad[0]
          + " to " + bad[1] + " (" + mappings.whereIs(bad[0]) + "), whose read failed with an"
          + " I/O error; it was not stored there");
    }
    return mappings.slices(offset + BlockCheck.HEADER_SIZE, entryLength - BlockCheck.HEADER_SIZE);
  }

  /** Whether reads hand out views of the mappings (opt-in) rather than checked copies. */
  public boolean readsMapped() {
    return config.readMapped();
  }

  /**
   * Reads the block at {@code offset} from its file into a buffer of {@code allocator}, checks it
   * and returns its stored bytes without the header (position 0, limit the body length; release
   * it when done).
   *
   * <p>One positional read of the whole entry (header and body; one more only when the entry
   * crosses a segment boundary or the allocator hands out several buffers) straight into the
   * allocator's buffer (a pooled direct buffer in a RegionServer for the blocks it cached: the
   * kernel copies the page cache or DAX memory into it, nothing else copies; a block recovered
   * after a warm restart carries the heap allocator, upstream's BucketProtoUtils.fromPB, and is
   * read through a temporary direct buffer until it is cached again), as stock {@code file:}
   * reads. A read that fails with an I/O error (not EOF) records the block's range as bad:
   * no block is stored over it again (see {@link #writeBlock}). Never
   * through the mappings: a page with nothing behind it (a file truncated by another process, a
   * media error) raises SIGBUS when touched through a mapping, which the JVM turns into a crash
   * in the copy stub (JDK 8) or an asynchronous InternalError delivered past any catch (JDK 9+),
   * wherever the reading thread is then; a positional read fails at once (EOF, EIO) and costs
   * that block. Then the whole check (magic, epoch, key, length, CRC of header and body, summed
   * in place in the copy): a punched hole or a torn page reads as zeros through the file as
   * through a mapping, and only the checksum tells. A failing block is an HBaseIOException, which
   * BucketCache answers by evicting the block (the read goes to HDFS).
   *
   * @param key        null to check everything but the key (a read without the key)
   * @param recovering whether the block belongs to a recovered map whose pass is not over (the
   *                   read is counted as such a check)
   * @throws HBaseIOException when the block cannot be read or fails its check
   */
  public ByteBuff readBlock(BlockCacheKey key, long offset, int entryLength,
      ByteBuffAllocator allocator, boolean recovering) throws IOException {
    if (entryLength < BlockCheck.HEADER_SIZE) {
      throw new HBaseIOException("pmem cache block " + key + " at " + offset + ": an entry of "
          + entryLength + " bytes cannot hold a block header");
    }
    int bodyLength = entryLength - BlockCheck.HEADER_SIZE;
    ByteBuff dst = allocator.allocate(entryLength);
    boolean handedOut = false;
    try {
      String why;
      try {
        ByteBuffer[] parts = dst.nioByteBuffers();
        long at = offset;
        int left = entryLength;
        for (int i = 0; i < parts.length && left > 0; i++) {
          ByteBuffer part = parts[i].duplicate();
          part.limit(Math.min(part.limit(), part.position() + left));
          int n = part.remaining();
          try {
            mappings.readFully(at, part);
          } catch (java.nio.channels.ClosedChannelException e) {
            throw e;
          } catch (IOException e) {
            if (mappings.isLive()) {
              recordBadRange(offset, entryLength, e, "reading"); // the file's read, not the allocator
            }
            throw e;
          }
          at += n;
          left -= n;
        }
        if (left > 0) {
          throw new IOException("the allocator gave " + (entryLength - left) + " of "
              + entryLength + " bytes");
        }
        why = check.mismatch(key, bodyLength, header(dst), range(dst, BlockCheck.HEADER_SIZE,
            entryLength));
      } catch (java.nio.channels.ClosedChannelException e) {
        throw e; // shut down (or, without Uninterruptible, closed): not a damaged block
      } catch (IOException e) {
        if (!mappings.isLive()) {
          throw e; // shut down, not a damaged block
        }
        why = "it cannot be read (" + e.getMessage() + "): a media error, or its cache file was"
            + " truncated by another process";
      }
      stats.readChecked(recovering, why == null);
      if (why != null) {
        logFailedRead(key, offset, why);
        throw new HBaseIOException("pmem cache block " + key + " at " + offset + ": " + why);
      }
      dst.position(BlockCheck.HEADER_SIZE).limit(entryLength);
      ByteBuff body = dst.slice(); // shares dst's reference count: releasing it frees dst
      handedOut = true;
      return body;
    } finally {
      if (!handedOut) {
        dst.release();
      }
    }
  }

  /**
   * Logs a failed read at WARN, at most once a minute with the count since the last such line
   * (a failing device fails many reads; each costs one block, read from HDFS instead), the rest
   * at DEBUG. Every failed read is counted in {@link PmemCacheMXBean#getReadsFailed}.
   */
  private void logFailedRead(BlockCacheKey key, long offset, String why) {
    long failed = unloggedFailures.incrementAndGet();
    long now = System.nanoTime();
    long next = nextFailureWarn.get();
    if (now - next >= 0 && nextFailureWarn.compareAndSet(next, now + FAILURE_WARN_NANOS)) {
      unloggedFailures.addAndGet(-failed);
      LOG.warn("pmem cache: block {} at {}: {}; it is evicted and read from HDFS ({} failed"
          + " read(s) since the last such line; at most one a minute, the rest at DEBUG)", key,
          offset, why, failed);
    } else {
      LOG.debug("pmem cache: block {} at {}: {}", key, offset, why);
    }
  }

  private static final long FAILURE_WARN_NANOS = java.util.concurrent.TimeUnit.MINUTES.toNanos(1);
  private final java.util.concurrent.atomic.AtomicLong unloggedFailures =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong nextFailureWarn =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime());

  /** The header bytes at the start of {@code entry}, from position 0. */
  private static ByteBuffer header(ByteBuff entry) {
    ByteBuffer first = entry.nioByteBuffers()[0];
    if (first.limit() >= BlockCheck.HEADER_SIZE) {
      ByteBuffer h = first.duplicate();
      h.position(0).limit(BlockCheck.HEADER_SIZE);
      return h.slice();
    }
    ByteBuffer h = ByteBuffer.allocate(BlockCheck.HEADER_SIZE);
    for (int i = 0; i < BlockCheck.HEADER_SIZE; i++) {
      h.put(i, entry.get(i));
    }
    return h;
  }

  /** Views of bytes [from, to) of {@code entry}, over its buffers (no copy). */
  private static ByteBuffer[] range(ByteBuff entry, int from, int to) {
    ByteBuffer[] parts = entry.nioByteBuffers();
    List<ByteBuffer> out = new ArrayList<>(parts.length);
    int start = 0;
    for (ByteBuffer p : parts) {
      int end = start + p.limit();
      int a = Math.max(from, start);
      int b = Math.min(to, end);
      if (a < b) {
        ByteBuffer v = p.duplicate();
        v.limit(b - start).position(a - start);
        out.add(v.slice());
      }
      start = end;
    }
    return out.toArray(new ByteBuffer[0]);
  }


  /** Why the block at {@code offset} is not the one cached under {@code key}, or null. */
  private String mismatch(BlockCacheKey key, long offset, int entryLength) throws IOException {
    if (entryLength < BlockCheck.HEADER_SIZE) {
      return "an entry of " + entryLength + " bytes cannot hold a block header";
    }
    // From the files, not the mappings, on a checker thread: see Mappings.check.
    try {
      return mappings.check(offset, entryLength, entry -> {
        ByteBuffer header = entry.duplicate();
        header.limit(BlockCheck.HEADER_SIZE);
        ByteBuffer body = entry.duplicate();
        body.position(BlockCheck.HEADER_SIZE);
        return check.mismatch(key, entryLength - BlockCheck.HEADER_SIZE, header.slice(),
            new ByteBuffer[] {body.slice()});
      });
    } catch (java.io.InterruptedIOException | java.nio.channels.ClosedChannelException e) {
      throw e; // not a damaged block
    } catch (IOException e) {
      if (!mappings.isLive()) {
        throw e; // shut down, not a damaged block
      }
      recordBadRange(offset, entryLength, e, "reading");
      return "it cannot be read (" + e.getMessage() + "): a media error, or its cache file was"
          + " truncated by another process";
    }
  }

  /**
   * Checks a block before a read serves it.
   * @throws HBaseIOException when it fails: the caller evicts it
   */
  public void checkRead(BlockCacheKey key, long offset, int entryLength) throws IOException {
    String why = mismatch(key, offset, entryLength);
    stats.readChecked(true, why == null);
    if (why != null) {
      throw new HBaseIOException("pmem cache block " + key + " at " + offset + ": " + why);
    }
  }

  /**
   * Checks a block of a recovered backing map (the background pass).
   * @throws HBaseIOException when it fails: the caller evicts it
   */
  public void checkRecovered(BlockCacheKey key, long offset, int entryLength)
      throws IOException {
    long start = System.nanoTime();
    String why = mismatch(key, offset, entryLength);
    stats.passChecked(entryLength, System.nanoTime() - start, why == null);
    if (why != null) {
      throw new HBaseIOException("pmem cache block " + key + " at " + offset + ": " + why);
    }
  }

  /** BucketCache accepted the persisted map; its blocks are being verified. */
  public void recoveryStarted() {
    stats.recoveryStarted();
  }

  /** Every block of the recovered map has been verified. */
  public void recoveryComplete() {
    stats.recoveryComplete();
  }

  // ---- raw bytes (no header; IOEngine.write and tests) ---------------------------------------

  /**
   * Copies the remaining bytes of {@code src} to logical offset {@code offset}.
   * @throws CacheFileCutException when its file was cut before that place
   */
  public void write(ByteBuff src, long offset) throws IOException {
    refuseBadRange(offset, src.remaining());
    mappings.write(offset, src);
  }

  /** Views of {@code len} bytes at {@code offset}: shared memory, nothing copied. */
  public ByteBuffer[] slices(long offset, int len) throws IOException {
    return mappings.slices(offset, len);
  }

  /** Forces every range written before this call to the device. */
  public void sync() throws IOException {
    mappings.sync();
  }

  // ---- identity ----------------------------------------------------------------------------

  /** The digest BucketCache stores with its persisted map: these files' epoch and layout. */
  public byte[] mapDigest(String algorithm) throws IOException {
    return PersistedMap.digest(algorithm, check.epoch(), layout);
  }

  /**
   * Accepts a persisted map only when it was written for these files.
   * @throws IOException when it was not
   */
  public void verifyMapDigest(byte[] persisted, String algorithm) throws IOException {
    if (!MessageDigest.isEqual(mapDigest(algorithm), persisted)) {
      throw new IOException("the persisted bucket cache map was written for other cache files"
          + " than " + config.paths() + " (another epoch or layout)");
    }
  }

  /**
   * Forces what was written, records a clean stop, drops the mappings and closes the files (which
   * releases the locks). Writes after this fail with an IOException; blocks read before stay
   * readable (the garbage collector unmaps them).
   */
  public void close() {
    close(true, false);
  }

  /**
   * Forces what was written, records a clean stop when {@code cleanStop} (else the files keep
   * saying "running", so the next start treats the stop as unclean), drops the mappings,
   * or unmaps them when {@code unmap}, and closes the files (which releases the locks). Writes
   * after this fail with an IOException.
   * @param cleanStop whether BucketCache's persisted map describes the blocks (its final persist
   *                  succeeded)
   * @param unmap     whether no reader holds a block and none can read one any more: only then
   *                  may the memory go at once; otherwise blocks read before stay readable
   */
  public void close(boolean cleanStop, boolean unmap) {
    if (closed) {
      return;
    }
    closed = true;
    boolean synced = false;
    try {
      mappings.sync();
      synced = true;
    } catch (IOException e) {
      LOG.error("pmem cache: forcing the written ranges at shutdown failed; the blocks are"
          + " verified at the next start anyway", e);
    }
    if (!cleanStop) {
      LOG.warn("pmem cache: no clean stop recorded, BucketCache's final persist of its map did not"
          + " succeed: the files keep their \"running\" record, so the next start treats this"
          + " stop as unclean");
    } else if (synced) {
      String holder = STOPPED + CacheLock.self() + " at " + now();
      for (FileChannel ch : channels) {
        try {
          writeHolder(ch, holder);
        } catch (IOException e) {
          LOG.warn("pmem cache: cannot record the clean stop: {}", e.toString());
        }
      }
    }
    if (unmap) {
      mappings.unmap();
    } else {
      mappings.release();
    }
    closeAll(channels);
    if (mbeanName != null) {
      try {
        ManagementFactory.getPlatformMBeanServer().unregisterMBean(mbeanName);
      } catch (Exception e) {
        LOG.debug("unregistering the pmem cache bean", e);
      }
    }
  }

  // ---- facts -------------------------------------------------------------------------------

  /** Number of mappings. */
  public int mappingCount() {
    return mappings.count();
  }

  /** Whether path i is mapped with MAP_SYNC. */
  public boolean mapSync(int path) {
    return mappings.mapSync(path);
  }

  /** What this start found and what the recovery checked. */
  public PmemCacheMXBean stats() {
    return stats;
  }

  /** The cache files. */
  public List<File> paths() {
    return new ArrayList<>(config.paths());
  }

  /** The configuration the store was opened with. */
  public PmemCacheConfig config() {
    return config;
  }

  /** For tests: replaces how mappings are forced (to inject device errors). */
  void forcer(Mappings.Forcer forcer) {
    mappings.forcer(forcer);
  }

  /** For tests: replaces how the files are written (to inject device errors). */
  void writer(Mappings.Writer writer) {
    mappings.writer(writer);
  }

  /** For tests: replaces how written files are forced (to inject device errors). */
  void fileForcer(Mappings.FileForcer forcer) {
    mappings.fileForcer(forcer);
  }

  /** For tests: replaces how the files are read (to inject device errors). */
  void reader(Mappings.Reader reader) {
    mappings.reader(reader);
  }

  /** For tests: the locks held. */
  boolean holdsLocks() {
    for (FileLock l : locks) {
      if (!l.isValid()) {
        return false;
      }
    }
    return true;
  }

  /** For tests: the layout. */
  Layout layout() {
    return layout;
  }
}
