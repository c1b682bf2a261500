package dev.forkset.hbase.memstore;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.regionserver.HRegion;

/**
 * Every setting of hbase-memstore-fix: name, default, accepted values, where it may be set and
 * what it does, and one {@link #read} that validates them all into an immutable value.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The fixes are patches of HBase (patches/hbase/&lt;line&gt;/), so HBase's own code
 *       reads the settings, as upstream would. On 2.6.4 the key is a {@code ConfigKey.LONG} of
 *       {@code HRegion} that must be positive: the master refuses a table value that is not
 *       (TableDescriptorChecker, at create and alter), and a RegionServer logs a site value that is
 *       not and uses the default ({@code HRegion.getFlushUpdatesLockWarnMs}); a region re-reads
 *       it on a configuration reload (update_config).</li>
 *   <li>{@link #read} applies the master's rule (a positive number of milliseconds) and fails on a
 *       value that is not, where the RegionServer would only warn; {@code main} runs it on a
 *       configuration before a rolling restart. A valid value is read by
 *       {@code HRegion.getFlushUpdatesLockWarnMs}, so this class and the RegionServer cannot
 *       disagree on it.</li>
 *   <li>The settings table of docs/hbase-memstore-fix.md is rendered from {@link #settings()}
 *       ({@code SettingsDocTest} fails when they differ).</li>
 * </ol>
 */
public final class MemstoreFixConfig {

  /** One documented setting. */
  public static final class Setting {
    /** The key, as in hbase-site.xml. */
    public final String name;
    /** The default, as an operator would write it. */
    public final String defaultValue;
    /** The accepted values, in words. */
    public final String accepted;
    /** Where it may be set: site (hbase-site.xml), table, family. */
    public final String scope;
    /** What it does. */
    public final String doc;

    Setting(String name, String defaultValue, String accepted, String scope, String doc) {
      this.name = name;
      this.defaultValue = defaultValue;
      this.accepted = accepted;
      this.scope = scope;
      this.doc = doc;
    }
  }

  private static final List<Setting> ALL = new ArrayList<>();

  /** WARN threshold of the flush updates-lock metric (the 0101 patch on 2.6.4, 0002 on 2.1.2). */
  public static final Setting FLUSH_UPDATES_LOCK_WARN_MS = add(
      "hbase.hregion.flush.updates.lock.warn.ms", "100",
      "a positive number of milliseconds",
      "site, table",
      "A flush that keeps writes out of a region longer than this (it waits for the region's"
          + " updates lock, then holds it while it snapshots the memstores and appends its"
          + " START_FLUSH marker to the WAL) logs a WARN naming the region, the wait and the hold;"
          + " so do the other holders of that lock (replay dropping memstore contents,"
          + " blockUpdates). A table's value (alter 't', CONFIGURATION => {...}) applies to its"
          + " regions; the master refuses one that is not valid at create and alter"
          + " (TableDescriptorChecker). A site value that is not valid is logged by each region"
          + " that reads it and the default used. Read when a region opens and on a configuration"
          + " reload (update_config).");

  /** The value of {@link #FLUSH_UPDATES_LOCK_WARN_MS}, in milliseconds. */
  public final long flushUpdatesLockWarnMs;

  private MemstoreFixConfig(Configuration conf) {
    String name = FLUSH_UPDATES_LOCK_WARN_MS.name;
    String value = conf.get(name);
    long ms;
    try {
      ms = conf.getLong(name, Long.parseLong(FLUSH_UPDATES_LOCK_WARN_MS.defaultValue));
    } catch (NumberFormatException e) {
      ms = -1;
    }
    if (ms <= 0) {
      throw new IllegalArgumentException(name + "='" + value + "' is not valid. Accepted: "
          + FLUSH_UPDATES_LOCK_WARN_MS.accepted + ". Remove it for the default "
          + FLUSH_UPDATES_LOCK_WARN_MS.defaultValue + " ms.");
    }
    this.flushUpdatesLockWarnMs = HRegion.getFlushUpdatesLockWarnMs(conf);
  }

  /**
   * Reads and validates every setting.
   * @throws IllegalArgumentException {@code <key>='<value>' is not valid. Accepted: <accepted>.
   *     <how to fix>} for the first setting that is not valid
   */
  public static MemstoreFixConfig read(Configuration conf) {
    return new MemstoreFixConfig(conf);
  }

  /** Every setting, in the order of the documentation. */
  public static List<Setting> settings() {
    return Collections.unmodifiableList(ALL);
  }

  private static Setting add(String name, String defaultValue, String accepted, String scope,
      String doc) {
    Setting s = new Setting(name, defaultValue, accepted, scope, doc);
    ALL.add(s);
    return s;
  }

  /**
   * The settings table of the module's document: {@code | setting | default | accepted |
   * meaning |}, one row per setting.
   */
  public static String settingsTable() {
    StringBuilder md = new StringBuilder();
    md.append("| setting | default | accepted | meaning |\n");
    md.append("|---|---|---|---|\n");
    for (Setting s : ALL) {
      md.append("| `").append(s.name).append("` | `").append(s.defaultValue).append("` | ")
          .append(s.accepted).append(" | ").append(s.doc).append(" Scope: ").append(s.scope)
          .append(". |\n");
    }
    return md.toString();
  }

  @Override
  public String toString() {
    return FLUSH_UPDATES_LOCK_WARN_MS.name + "=" + flushUpdatesLockWarnMs + "ms";
  }

  /**
   * Checks the configuration on the class path (hbase-site.xml), as a RegionServer would read it:
   * prints the values and exits 0, or prints the problem and exits 1. For use before a rolling
   * restart: {@code java -cp "$(hbase classpath)" dev.forkset.hbase.memstore.MemstoreFixConfig}.
   */
  public static void main(String[] args) {
    int status = check(HBaseConfiguration.create(), System.out, System.err);
    if (status != 0) {
      System.exit(status);
    }
  }

  /** {@link #main}: prints the values to {@code out} (0) or the problem to {@code err} (1). */
  static int check(Configuration conf, PrintStream out, PrintStream err) {
    try {
      out.println(read(conf));
      return 0;
    } catch (IllegalArgumentException e) {
      err.println(e.getMessage());
      return 1;
    }
  }
}
