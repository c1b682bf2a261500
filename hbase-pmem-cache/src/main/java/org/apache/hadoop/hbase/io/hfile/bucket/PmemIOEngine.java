package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.hbase.pmem.PmemCacheConfig;
import dev.forkset.hbase.pmem.PmemStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.hbase.io.hfile.Cacheable;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hbase-pmem-cache BucketCache engine for {@code pmem:} values: one or more files on
 * pmem/CXL/DAX mounts, deterministic mappings of at most 1 GiB, zero-copy reads and a persisted
 * cache that is used again only after a clean shutdown (see {@link PmemStore}). It lives in
 * BucketCache's package because {@link BucketEntry#offset()} and
 * {@link BucketEntry#wrapAsCacheable(ByteBuffer[])} are package-private.
 */
public class PmemIOEngine extends PersistentIOEngine {
  private static final Logger LOG = LoggerFactory.getLogger(PmemIOEngine.class);

  private final PmemCacheConfig config;
  private final PmemStore store;

  public PmemIOEngine(PmemCacheConfig config) throws IOException {
    super(pathNames(config));
    this.config = config;
    this.store = new PmemStore(config);
  }

  private static String[] pathNames(PmemCacheConfig config) {
    String[] names = new String[config.paths().size()];
    for (int i = 0; i < names.length; i++) {
      names[i] = config.paths().get(i).getPath();
    }
    return names;
  }

  /** The mapped memory. */
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
  public Cacheable read(BucketEntry be) throws IOException {
    // Shared memory like stock pmem:: the block refers to the mapping, BucketCache's reference
    // counting keeps the bucket from being reused while a reader holds it.
    return be.wrapAsCacheable(store.slices(be.offset(), be.getLength()));
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
    try {
      store.close();
    } catch (IOException e) {
      LOG.error("pmem cache: forcing the written ranges at shutdown failed; the next start"
          + " will be cold", e);
    }
  }

  /** The digest stored with BucketCache's persisted map: valid only after a clean shutdown. */
  @Override
  protected byte[] calculateChecksum(String algorithm) {
    try {
      return store.cleanToken(algorithm);
    } catch (IOException e) {
      LOG.error("pmem cache: cannot record the clean shutdown; the next start will be cold", e);
      return new byte[0];
    }
  }

  /** Accepts the persisted map only when it was written at the last clean shutdown. */
  @Override
  protected void verifyFileIntegrity(byte[] persistentChecksum, String algorithm)
      throws IOException {
    try {
      store.verify(persistentChecksum, algorithm);
      LOG.info("pmem cache: persisted map belongs to the last clean shutdown, blocks reused");
    } catch (IOException e) {
      LOG.warn("pmem cache: discarding the persisted bucket cache map, the cache starts empty:"
          + " {}", e.getMessage());
      throw e;
    }
  }

  @Override
  public String toString() {
    return "ioengine=" + getClass().getSimpleName() + ", paths=" + config.paths()
        + ", capacity=" + String.format("%,d", config.capacity()) + ", mappings="
        + store.mappingCount();
  }
}
