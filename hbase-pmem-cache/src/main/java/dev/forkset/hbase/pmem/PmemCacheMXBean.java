package dev.forkset.hbase.pmem;

/**
 * What the engine reports about its start and its recovery, as JMX attributes under
 * {@code dev.forkset.hbase.pmem:type=PmemCache,path=<first cache path>} (also on the
 * RegionServer's {@code /jmx} page). See docs/hbase-pmem-cache.md, "Observing a recovery".
 */
public interface PmemCacheMXBean {

  /** "warm" (the files' epoch was kept) or "cold" (formatted at this start). */
  String getStartMode();

  /** Why the start was cold, or empty. */
  String getColdReason();

  /** "clean", "unclean" (the previous process did not stop the cache) or "unknown". */
  String getPreviousStop();

  /** The cache files' epoch, in hex. */
  String getEpoch();

  /** The block checksum, CRC32C or CRC32. */
  String getChecksum();

  /** Recovered blocks checked by the background pass so far. */
  long getRecoveredBlocksChecked();

  /** Recovered blocks that failed the background pass and were evicted. */
  long getRecoveredBlocksFailed();

  /** Bytes checked by the background pass. */
  long getRecoveredBytesChecked();

  /** Reads checked because they came before the background pass had ended. */
  long getReadsChecked();

  /**
   * Reads that failed their check or could not be read, during the recovery pass and after
   * (each block evicted, read from HDFS instead).
   */
  long getReadsFailed();

  /**
   * Ranges of the cache whose read failed with an I/O error (a media error) since the start:
   * no block is stored over them again while the cache runs.
   */
  int getBadRanges();

  /**
   * Writes not stored because they overlapped such a range: a block left unwritten (its first
   * read is a miss) or a raw write refused.
   */
  long getWritesSkipped();

  /** True once every block of the recovered map has been verified (or nothing was recovered). */
  boolean isRecoveryComplete();

  /** Wall time of the background pass, in ms (so far, while it runs). */
  long getRecoveryMillis();

  /** Checksum time per GiB verified by the background pass, in ms. */
  double getVerifyMillisPerGiB();
}
