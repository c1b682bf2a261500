package dev.forkset.hbase21;

/** Which hbase-server 2.1.2 jar a minicluster JVM runs. */
public enum ServerJar {
  /** The release from Maven Central, as it is. */
  STOCK,
  /** The custom jar built by patches/hbase/2.1.2, with the hbase-memstore-fix module jar. */
  CUSTOM,
  /**
   * The custom hbase-server jar with the stock hbase-hadoop-compat and hbase-hadoop2-compat jars:
   * the misdeployment of an operator who replaced only hbase-server, which must not start.
   */
  CUSTOM_WITH_STOCK_COMPAT
}
