package dev.forkset.hbase.pmem;

import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts what a recovery checked and found, logs its summary and serves it over JMX.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Counters are {@link LongAdder}s: reads on many handler threads and the background pass
 *       update them without contention.
 *   <li>"Per GiB" is checksum time only (the sum of the individual checks), which does not
 *       depend on how busy the machine is with other work; the pass's wall time is logged next
 *       to it.
 * </ol>
 */
final class RecoveryStats implements PmemCacheMXBean {
  private static final Logger LOG = LoggerFactory.getLogger(RecoveryStats.class);
  private static final double GIB = 1L << 30;

  private final String startMode;
  private final String coldReason;
  private final String previousStop;
  private final long epoch;
  private final String checksum;
  private volatile long startNanos = System.nanoTime();
  private final LongAdder passChecked = new LongAdder();
  private final LongAdder passFailed = new LongAdder();
  private final LongAdder passBytes = new LongAdder();
  private final LongAdder passNanos = new LongAdder();
  private final LongAdder readsChecked = new LongAdder();
  private final LongAdder readsFailed = new LongAdder();
  private final LongAdder writesSkipped = new LongAdder();
  private volatile int badRanges;
  private volatile long endNanos = startNanos;
  private volatile boolean complete = true;

  RecoveryStats(String startMode, String coldReason, String previousStop, long epoch,
      String checksum) {
    this.startMode = startMode;
    this.coldReason = coldReason == null ? "" : coldReason;
    this.previousStop = previousStop;
    this.epoch = epoch;
    this.checksum = checksum;
  }

  /** BucketCache accepted a persisted map: its blocks are verified from now on. */
  void recoveryStarted() {
    startNanos = System.nanoTime();
    complete = false;
  }

  void passChecked(int bytes, long nanos, boolean intact) {
    passChecked.increment();
    passBytes.add(bytes);
    passNanos.add(nanos);
    if (!intact) {
      passFailed.increment();
    }
  }

  /**
   * A read's check: counted as a check of a recovered block only while {@code recovering} (the
   * pass is not over), as failed whenever it failed.
   */
  void readChecked(boolean recovering, boolean intact) {
    if (recovering) {
      readsChecked.increment();
    }
    if (!intact) {
      readsFailed.increment();
    }
  }

  void badRange(int ranges) {
    badRanges = ranges;
  }

  void writeSkipped() {
    writesSkipped.increment();
  }

  /** The background pass has ended: log the summary. */
  void recoveryComplete() {
    endNanos = System.nanoTime();
    complete = true;
    LOG.info("pmem cache recovery: verified {} recovered blocks ({} MiB) in {} ms ({} ms of"
        + " {} per GiB): {} intact, {} failed and were evicted; {} reads were checked before the"
        + " pass ended, {} of them failed", getRecoveredBlocksChecked(),
        getRecoveredBytesChecked() >> 20, getRecoveryMillis(),
        String.format("%.0f", getVerifyMillisPerGiB()), checksum,
        getRecoveredBlocksChecked() - getRecoveredBlocksFailed(), getRecoveredBlocksFailed(),
        getReadsChecked(), getReadsFailed());
  }

  @Override
  public String getStartMode() {
    return startMode;
  }

  @Override
  public String getColdReason() {
    return coldReason;
  }

  @Override
  public String getPreviousStop() {
    return previousStop;
  }

  @Override
  public String getEpoch() {
    return Long.toHexString(epoch);
  }

  @Override
  public String getChecksum() {
    return checksum;
  }

  @Override
  public long getRecoveredBlocksChecked() {
    return passChecked.sum();
  }

  @Override
  public long getRecoveredBlocksFailed() {
    return passFailed.sum();
  }

  @Override
  public long getRecoveredBytesChecked() {
    return passBytes.sum();
  }

  @Override
  public long getReadsChecked() {
    return readsChecked.sum();
  }

  @Override
  public long getReadsFailed() {
    return readsFailed.sum();
  }

  @Override
  public int getBadRanges() {
    return badRanges;
  }

  @Override
  public long getWritesSkipped() {
    return writesSkipped.sum();
  }

  @Override
  public boolean isRecoveryComplete() {
    return complete;
  }

  @Override
  public long getRecoveryMillis() {
    long end = complete ? endNanos : System.nanoTime();
    return (end - startNanos) / 1_000_000;
  }

  @Override
  public double getVerifyMillisPerGiB() {
    long bytes = passBytes.sum();
    return bytes == 0 ? 0 : passNanos.sum() / 1e6 / (bytes / GIB);
  }
}
