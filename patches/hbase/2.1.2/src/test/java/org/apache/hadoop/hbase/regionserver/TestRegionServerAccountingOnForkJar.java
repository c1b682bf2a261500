package org.apache.hadoop.hbase.regionserver;

import org.junit.BeforeClass;

/**
 * Upstream's TestRegionServerAccounting (hbase-server:2.1.2:tests), every test of it, run by this line's Failsafe
 * against the custom 2.1.2 jar, whose memstore classes the series patches. Failsafe runs all test
 * classes in one JVM while upstream forks one per class, so the ChunkCreator singleton is reset
 * first, as a fresh JVM would have it.
 */
public class TestRegionServerAccountingOnForkJar extends TestRegionServerAccounting {
  @BeforeClass
  public static void freshChunkCreator() {
    ChunkCreator.instance = null;
  }
}
