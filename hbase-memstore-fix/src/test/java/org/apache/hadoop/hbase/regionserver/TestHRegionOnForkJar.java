package org.apache.hadoop.hbase.regionserver;

import org.junit.Ignore;
import org.junit.Test;

/**
 * Upstream's TestHRegion (hbase-server:2.6.4:tests) against the custom jar, whose HRegion the
 * series patches. Four tests are skipped: they assert the exact count of a WAL sync metric that
 * every region in the JVM shares, so a sync still finishing from an earlier test makes them off by
 * one. They fail the same way on the stock 2.6.4 jar when the whole class runs (measured here:
 * testBatchPut_whileNoRowLocksHeld, syncTimeNumOps 96, expected 97) and pass on the custom jar
 * when run alone ({@code -Dtest=TestHRegion#testAtomicBatchPut+testBatchPut*}).
 */
public class TestHRegionOnForkJar extends TestHRegion {
  private static final String SHARED_WAL_METRIC =
      "asserts an exact JVM-wide WAL sync count; order-dependent on stock 2.6.4 too";

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
}
