package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertTrue;

import org.apache.hadoop.hbase.io.hfile.bucket.BucketCache;
import org.junit.Test;

public class CustomServerJarTest {

  /** The upstream tests run in this module only prove something if they run the custom jar. */
  @Test
  public void bucketCacheComesFromTheCustomServerJar() {
    String jar = BucketCache.class.getProtectionDomain().getCodeSource().getLocation().toString();
    assertTrue(jar, jar.contains("-fork"));
  }
}
