package dev.forkset.hbase.memstore;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;

/**
 * Every configuration key of hbase-memstore-fix, with its default and meaning. Keys go in
 * hbase-site.xml of the RegionServers (or, for the threshold, in a table descriptor's
 * configuration to override it for one table).
 */
public final class MemstoreFixConfig {
  /**
   * WARN when a flush holds a region's update lock longer than this. A duration: a positive number
   * with a unit ns, us, ms, s, m or h (for example {@code 100ms}, {@code 0.5s}); a bare number is
   * milliseconds. Anything else, zero or negative fails the RegionServer at start.
   */
  public static final String WARN_THRESHOLD_KEY = "forkset.memstore.flush.lock.warn.threshold";

  /** Default of {@link #WARN_THRESHOLD_KEY}: 100 ms, well above a healthy hold (under 1 ms). */
  public static final String WARN_THRESHOLD_DEFAULT = "100ms";

  /**
   * HBase's key for the memstore class. On the hbase 2.1.2 fork jar it also applies to stores
   * without in-memory compaction; set it to {@link #CELL_COUNTING_MEMSTORE} there.
   */
  public static final String MEMSTORE_CLASS_KEY = "hbase.regionserver.memstore.class";

  /** The O(1)-snapshot memstore for HBase 2.0/2.1 (compiled against 2.1.2, Java 8). */
  public static final String CELL_COUNTING_MEMSTORE =
      "org.apache.hadoop.hbase.regionserver.CellCountingMemStore";

  /** HBase's key for RegionServer coprocessors; list {@link #COPROCESSOR} in it. */
  public static final String RS_COPROCESSORS_KEY = "hbase.coprocessor.regionserver.classes";

  /** HBase's key for coprocessors loaded on every region; list {@link #COPROCESSOR} in it. */
  public static final String REGION_COPROCESSORS_KEY = "hbase.coprocessor.region.classes";

  /** The coprocessor that exports the flush update-lock hold metric (HBase 2.6 / 3.0 fork jars). */
  public static final String COPROCESSOR = "dev.forkset.hbase.memstore.FlushLockHoldCoprocessor";

  /** A number and an optional unit. */
  private static final Pattern DURATION =
      Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*(ns|us|ms|s|m|min|h)?\\s*");

  private MemstoreFixConfig() {}

  /**
   * The WARN threshold in nanoseconds.
   * @throws IllegalArgumentException naming {@link #WARN_THRESHOLD_KEY} when the value is not a
   *     positive duration
   */
  public static long warnThresholdNanos(Configuration conf) {
    return parsePositiveDuration(WARN_THRESHOLD_KEY,
        conf.get(WARN_THRESHOLD_KEY, WARN_THRESHOLD_DEFAULT));
  }

  /** Parses {@code value} of {@code key} as a positive duration; see {@link #WARN_THRESHOLD_KEY}. */
  static long parsePositiveDuration(String key, String value) {
    Matcher m = DURATION.matcher(value == null ? "" : value.toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException(key + " = '" + value + "' is not a duration. Set it to"
          + " a positive number with a unit ns, us, ms, s, m or h, for example '100ms' (a bare"
          + " number means milliseconds), or remove it for the default " + WARN_THRESHOLD_DEFAULT
          + ".");
    }
    double amount = Double.parseDouble(m.group(1));
    String unit = m.group(2) == null ? "ms" : m.group(2);
    double nanos = amount * unitNanos(unit);
    if (!(nanos >= 1)) {
      throw new IllegalArgumentException(key + " = '" + value + "' is not a positive duration."
          + " Set it above zero, for example '100ms', or remove it for the default "
          + WARN_THRESHOLD_DEFAULT + ".");
    }
    return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) nanos;
  }

  private static long unitNanos(String unit) {
    switch (unit) {
      case "ns":
        return 1L;
      case "us":
        return TimeUnit.MICROSECONDS.toNanos(1);
      case "ms":
        return TimeUnit.MILLISECONDS.toNanos(1);
      case "s":
        return TimeUnit.SECONDS.toNanos(1);
      case "m":
      case "min":
        return TimeUnit.MINUTES.toNanos(1);
      case "h":
        return TimeUnit.HOURS.toNanos(1);
      default:
        throw new AssertionError(unit);
    }
  }
}
