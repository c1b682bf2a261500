package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.hbase.pmem.CacheFileCutException;
import dev.forkset.hbase.pmem.PmemCacheConfig;
import dev.forkset.hbase.pmem.PmemStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hbase-pmem-cache BucketCache engine for {@code pmem:} values: several files on pmem/CXL/DAX
 * mounts, few large deterministic mappings, checked reads, and blocks that prove themselves, so
 * the cache comes back after a clean stop, a kill -9 or a crash (see {@link PmemStore}).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>It lives in BucketCache's package because {@link BucketEntry#offset()},
 *       {@code BucketEntry#wrapAsCacheable}, {@code BucketEntry.allocator} and
 *       {@link BucketAllocatorException}'s constructor are package-private; everything else is
 *       in {@code dev.forkset.hbase.pmem}.
 *   <li>As a {@link BlockVerifyingIOEngine} (patch 0056) it gets the key of every block it
 *       stores and a header in front of it, has its backing map checkpointed by BucketCache's
 *       persister, and is asked to verify the blocks of a recovered map before they are served.
 *   <li>By default a read copies its block from the file with one positional read into a
 *       buffer of the block's allocator and checks it ({@link PmemStore#readBlock}), as stock
 *       {@code file:} reads: a page of a mapping that goes away (a truncated file, a media
 *       error) would crash or fault the JVM in whichever thread touches it later; a read of the
 *       file fails at once and BucketCache evicts the block. With
 *       {@code hbase.bucketcache.pmem.read=mapped} (opt-in, with that risk) reads share the
 *       mapped memory like stock {@code pmem:}, and BucketCache's reference count keeps a
 *       bucket from being reused while a reader holds its block.
 *   <li>By default a block is written to its file with positional writes and a sync forces the
 *       files written ({@code PmemStore#writeBlock}): a page gone under the cache costs at most
 *       that block (skipped, its first read a miss; a cut file is grown back) instead of
 *       faulting the writer. With
 *       {@code hbase.bucketcache.pmem.write=mapped} (opt-in) blocks are copied into the
 *       mappings, and a write past the end of a file cut under the running cache is refused
 *       ({@code CacheFileCutException}) and reported to BucketCache as a failed allocation, so
 *       the writer drops that one block and goes on.
 *   <li>A block whose write overlaps a range a read found unreadable (an I/O error, a media
 *       error) is not stored and not refused: it enters the backing map unwritten and its first
 *       read is a miss ({@code PmemStore#writeBlock} says why a refusal would stall its size).
 *   <li>BucketCache shuts it down after its final persist with
 *       {@link #shutdown(boolean, boolean)} (patch 0060): whether that persist succeeded (the
 *       clean stop is recorded only then) and whether no reader holds a block (the files are
 *       unmapped at once only then).
 * </ol>
 */
public class PmemIOEngine extends PersistentIOEngine implements BlockVerifyingIOEngine {
  private static final Logger LOG = LoggerFactory.getLogger(PmemIOEngine.class);

  private final PmemCacheConfig config;
  private final PmemStore store;

  public PmemIOEngine(PmemCacheConfig config) throws IOException {
    super(pathNames(config));
    this.config = config;
    this.store = PmemStore.open(config);
  }

  private static String[] pathNames(PmemCacheConfig config) {
    String[] names = new String[config.paths().size()];
    for (int i = 0; i < names.length; i++) {
      names[i] = config.paths().get(i).getPath();
    }
    return names;
  }

  /** The cache files and their blocks. */
  public PmemStore store() {
    return store;
  }

  @Override
  public boolean isPersistent() {
    return true;
  }

  /** Only with reads of the mappings (opt-in); the default hands out copies. */
  @Override
  public boolean usesSharedMemory() {
    return store.readsMapped();
  }

  @Override
  public int blockHeaderSize() {
    return store.blockHeaderSize();
  }

  @Override
  public void writeBlock(BlockCacheKey key, BucketEntry entry, ByteBuff block,
      ByteBuffer metadata) throws IOException {
    try {
      store.writeBlock(key, entry.offset(), entry.getLength(), block, metadata);
    } catch (CacheFileCutException e) {
      throw cut(e);
    }
  }

  /**
   * A write past the end of a file cut under the running cache, as BucketCache's writer should
   * treat it: it retries an IOException until the cache is disabled (60 s of errors, every
   * retry logged with its stack), right for a transient error, not for bytes that can never be
   * stored; a failed allocation drops that block (its slot freed, one WARN a minute) and the
   * writer goes on, and the blocks placed below the cut or in the other files are still cached.
   */
  private static BucketAllocatorException cut(CacheFileCutException e) {
    BucketAllocatorException b = new BucketAllocatorException(e.getMessage());
    b.initCause(e);
    return b;
  }

  /**
   * Default: every read is a checked copy read from the file ({@code verify} only says the block
   * belongs to a recovered map whose pass is not over, for the counts). Mapped (opt-in): a view
   * of the mapping, checked only while {@code verify}.
   */
  @Override
  public Cacheable read(BlockCacheKey key, BucketEntry entry, boolean verify)
      throws IOException {
    if (!store.readsMapped()) {
      return wrap(entry, store.readBlock(key, entry.offset(), entry.getLength(),
          entry.allocator, verify));
    }
    if (verify) {
      store.checkRead(key, entry.offset(), entry.getLength());
    }
    return entry.wrapAsCacheable(store.blockBody(entry.offset(), entry.getLength()));
  }

  private static Cacheable wrap(BucketEntry entry, ByteBuff bytes) throws IOException {
    try {
      return entry.wrapAsCacheable(bytes);
    } catch (IOException | RuntimeException e) {
      bytes.release();
      throw e;
    }
  }

  @Override
  public void verify(BlockCacheKey key, BucketEntry entry) throws IOException {
    store.checkRecovered(key, entry.offset(), entry.getLength());
  }

  @Override
  public void recoveredBlocksVerified() {
    store.recoveryComplete();
  }

  /** A read without the key: checked except for the key; BucketCache reads with the key. */
  @Override
  public Cacheable read(BucketEntry be) throws IOException {
    if (!store.readsMapped()) {
      return wrap(be, store.readBlock(null, be.offset(), be.getLength(), be.allocator, false));
    }
    return be.wrapAsCacheable(store.blockBody(be.offset(), be.getLength()));
  }

  @Override
  public void write(ByteBuffer srcBuffer, long offset) throws IOException {
    write(ByteBuff.wrap(srcBuffer), offset);
  }

  @Override
  public void write(ByteBuff srcBuffer, long offset) throws IOException {
    try {
      store.write(srcBuffer, offset);
    } catch (CacheFileCutException e) {
      throw cut(e);
    }
  }

  @Override
  public void sync() throws IOException {
    store.sync();
  }

  @Override
  public void shutdown() {
    store.close();
  }

  /**
   * BucketCache's shutdown after its final persist (patch 0060): the clean stop is recorded only
   * when that persist succeeded, and the files are unmapped at once only when no reader holds a
   * block; otherwise the mappings are left to the garbage collector.
   */
  @Override
  public void shutdown(boolean mapPersisted, boolean blocksReleased) {
    store.close(mapPersisted, blocksReleased);
  }

  /** The digest stored with BucketCache's persisted map: the identity of these files. */
  @Override
  protected byte[] calculateChecksum(String algorithm) {
    try {
      return store.mapDigest(algorithm);
    } catch (IOException e) {
      LOG.error("pmem cache: cannot digest the cache identity; the persisted map will not be"
          + " used at the next start", e);
      return new byte[0];
    }
  }

  /** Accepts a persisted map only when it was written for these files. */
  @Override
  protected void verifyFileIntegrity(byte[] persistentChecksum, String algorithm)
      throws IOException {
    try {
      store.verifyMapDigest(persistentChecksum, algorithm);
    } catch (IOException e) {
      LOG.warn("pmem cache: discarding the persisted bucket cache map, the cache starts empty:"
          + " {}", e.getMessage());
      throw e;
    }
    store.recoveryStarted();
    LOG.info("pmem cache: the persisted map belongs to these files; its blocks are verified in"
        + " the background and on first read until that pass ends");
  }

  @Override
  public String toString() {
    return "ioengine=" + getClass().getSimpleName() + ", paths=" + config.paths()
        + ", capacity=" + String.format("%,d", config.capacity()) + ", mappings="
        + store.mappingCount();
  }
}
