package org.apache.hadoop.hbase.regionserver;

import org.junit.BeforeClass;

/**
 * Upstream's TestCompactingToCellFlatMapMemStore (hbase-server:2.1.2:tests), every test and parameter of it, run by this line's Failsafe
 * against the custom 2.1.2 jar, whose memstore classes the series patches. Failsafe runs all test
 * classes in one JVM while upstream forks one per class, so the ChunkCreator singleton is reset
 * first, as a fresh JVM would have it.
 */
public class TestCompactingToCellFlatMapMemStoreOnForkJar extends TestCompactingToCellFlatMapMemStore {
  public TestCompactingToCellFlatMapMemStoreOnForkJar(String type) {
    super(type);
  }

  @BeforeClass
  public static void freshChunkCreator() {
    ChunkCreator.instance = null;
  }
}
