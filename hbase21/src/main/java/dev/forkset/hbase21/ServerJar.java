package dev.forkset.hbase21;

/** Which hbase-server 2.1.2 jar a minicluster JVM runs. */
public enum ServerJar {
  /** The release from Maven Central, as it is. */
  STOCK,
  /** The custom jar built by patches/hbase/2.1.2, with the hbase-memstore-fix module jar. */
  CUSTOM
}
