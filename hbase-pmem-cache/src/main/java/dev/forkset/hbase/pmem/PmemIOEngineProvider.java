package dev.forkset.hbase.pmem;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.io.hfile.bucket.IOEngine;
import org.apache.hadoop.hbase.io.hfile.bucket.IOEngineProvider;
import org.apache.hadoop.hbase.io.hfile.bucket.PmemIOEngine;

/**
 * Serves {@code pmem:} ioengine values with {@link PmemIOEngine} unless
 * {@link PmemCacheConfig#ENGINE} is "stock". Found by BucketCache through META-INF/services
 * (patch 0052-ioengine-provider).
 */
public final class PmemIOEngineProvider implements IOEngineProvider {

  @Override
  public IOEngine create(String ioEngineName, long capacity, String persistencePath,
      Configuration conf) throws IOException {
    if (!ioEngineName.startsWith(PmemCacheConfig.IOENGINE_PREFIX)
        || !PmemCacheConfig.moduleSelected(conf)) {
      return null;
    }
    return new PmemIOEngine(
        PmemCacheConfig.parse(ioEngineName, capacity, persistencePath, conf));
  }
}
