package org.apache.hadoop.hbase.regionserver;

/**
 * Upstream's TestMetricsRegionServer (hbase-server:2.1.2:tests), every test of it, run by this
 * line's Failsafe against the custom 2.1.2 jar, whose MetricsRegionServer the series patches.
 */
public class TestMetricsRegionServerOnForkJar extends TestMetricsRegionServer {
}
