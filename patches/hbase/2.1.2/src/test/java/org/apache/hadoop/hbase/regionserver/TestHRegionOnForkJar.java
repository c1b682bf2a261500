package org.apache.hadoop.hbase.regionserver;

import org.junit.BeforeClass;
import org.junit.Ignore;
import org.junit.Test;

/**
 * Upstream's TestHRegion (hbase-server:2.1.2:tests) run by this line's Failsafe against the custom
 * 2.1.2 jar, whose HRegion the series patches. Failsafe runs all test classes in one JVM while
 * upstream forks one per class, so the ChunkCreator singleton is reset first, as a fresh JVM would
 * have it. One test is left out: it starts a MiniDFSCluster, and the Hadoop 2.7 minicluster jars
 * are not on this line's class path (the 2.1.2 minicluster ITs have them).
 */
public class TestHRegionOnForkJar extends TestHRegion {
  @BeforeClass
  public static void freshChunkCreator() {
    ChunkCreator.instance = null;
  }

  @Test
  @Ignore("starts a MiniDFSCluster; the Hadoop 2.7 minicluster is not on this line's class path")
  @Override
  public void testgetHDFSBlocksDistribution() {
  }
}
