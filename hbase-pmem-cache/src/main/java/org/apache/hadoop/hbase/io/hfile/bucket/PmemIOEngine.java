package org.apache.hadoop.hbase.io.hfile.bucket;

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
 * mounts, few large deterministic mappings, zero-copy reads, and blocks that prove themselves, so
 * the cache comes back after a clean stop, a kill -9 or a crash (see {@link PmemStore}).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>It lives in BucketCache's package because {@link BucketEntry#offset()} and
 *       {@link BucketEntry#wrapAsCacheable(ByteBuffer[])} are package-private; everything else
 *       is in {@code dev.forkset.hbase.pmem}.
 *   <li>As a {@link BlockVerifyingIOEngine} (patch 0056) it gets the key of every block it
 *       stores and a header in front of it, has its backing map checkpointed by BucketCache's
 *       persister, and is asked to verify the blocks of a recovered map before they are served.
 *   <li>Reads share the mapped memory (like stock {@code pmem:}): BucketCache's reference count
 *       keeps a bucket from being reused while a reader holds its block.
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

  @Override
  public boolean usesSharedMemory() {
    return true;
  }

  @Override
  public int blockHeaderSize() {
    return store.blockHeaderSize();
  }

  @Override
  public void writeBlock(BlockCacheKey key, BucketEntry entry, ByteBuff block,
      ByteBuffer metadata) throws IOException {
    store.writeBlock(key, entry.offset(), entry.getLength(), block, metadata);
  }

  @Override
  public Cacheable read(BlockCacheKey key, BucketEntry entry, boolean verify)
      throws IOException {
    if (verify) {
      store.checkRead(key, entry.offset(), entry.getLength());
    }
    return entry.wrapAsCacheable(store.blockBody(entry.offset(), entry.getLength()));
  }

  @Override
  public void verify(BlockCacheKey key, BucketEntry entry) throws IOException {
    store.checkRecovered(key, entry.offset(), entry.getLength());
  }

  @Override
  public void recoveredBlocksVerified() {
    store.recoveryComplete();
  }

  /** A read without the key cannot be checked; BucketCache reads with the key. */
  @Override
  public Cacheable read(BucketEntry be) throws IOException {
    return be.wrapAsCacheable(store.blockBody(be.offset(), be.getLength()));
  }

  @Override
  public void write(ByteBuffer srcBuffer, long offset) throws IOException {
    store.write(ByteBuff.wrap(srcBuffer), offset);
  }

  @Override
  public void write(ByteBuff srcBuffer, long offset) throws IOException {
    store.write(srcBuffer, offset);
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
