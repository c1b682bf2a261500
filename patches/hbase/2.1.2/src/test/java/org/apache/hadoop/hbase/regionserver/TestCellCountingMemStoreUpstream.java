package org.apache.hadoop.hbase.regionserver;

import org.junit.Before;
import org.junit.BeforeClass;

/**
 * Upstream's TestDefaultMemStore (from hbase-server:2.1.2:tests), every test of it, run against
 * the module's CellCountingMemStore instead of DefaultMemStore.
 * The ChunkCreator singleton is reset first, as in upstream's fork-per-class runs.
 */
public class TestCellCountingMemStoreUpstream extends TestDefaultMemStore {
  @BeforeClass
  public static void freshChunkCreator() {
    ChunkCreator.instance = null;
  }

  @Before
  @Override
  public void setUp() throws Exception {
    super.setUp();
    this.memstore = new CellCountingMemStore();
  }
}
