package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.InvalidConfigurationException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Every property of the module, with its default and meaning. Each is read like any Hazelcast
 * property: {@code properties:} in hazelcast.yaml (or {@code Config.setProperty}) first, then
 * the system property of the same name, then the default. A malformed value stops the member
 * at start with a message naming the property and the accepted values.
 *
 * <p>The provider itself is selected by {@code hazelcast.map.eviction.provider} (added by the
 * hook patch): {@code auto} (default; this module when its jar is on the class path),
 * {@code gc-aware} (this module, failing if absent) or {@code stock} (the built-in estimator
 * and evictor).
 */
public final class GcAwareEvictionConfig {

  /** A documented property. */
  public static final class Property {
    public final String name;
    public final String defaultValue;
    public final String accepted;
    public final String doc;

    Property(String name, String defaultValue, String accepted, String doc) {
      this.name = name;
      this.defaultValue = defaultValue;
      this.accepted = accepted;
      this.doc = doc;
    }
  }

  private static final Map<String, Property> ALL = new LinkedHashMap<>();

  /** The value of hazelcast.map.eviction.provider that names this module. */
  public static final String PROVIDER_NAME = "gc-aware";

  public static final Property GC_MODEL = add("hazelcast.map.eviction.gc.model", "auto",
      "auto, g1, zgc, zgc-generational, shenandoah, parallel, serial, conservative",
      "Footprint model. auto detects the collector at member start from the"
          + " GarbageCollectorMXBean names; an unknown collector gets the conservative model"
          + " and one warning.");
  public static final Property REGION_SIZE = add("hazelcast.map.eviction.gc.region.size", "auto",
      "auto, or a size such as 4194304, 4m, 4MB, 512k",
      "Region size of the g1 and shenandoah models. auto reads it from the VM"
          + " (G1HeapRegionSize, ShenandoahRegionSize) or applies HotSpot's formula.");
  public static final Property SAMPLE_COUNT = add("hazelcast.map.eviction.pool.sample.count",
      "64", "an integer from 1 to 100000",
      "Entries sampled to refill an eviction pool (one pool per map and partition thread).");
  public static final Property POOL_SIZE = add("hazelcast.map.eviction.pool.size", "4",
      "an integer from 1 to the sample count",
      "Best candidates (by the map's eviction policy) kept from each refill; the pool is"
          + " refilled only when they are used up, so an eviction costs sample.count / pool.size"
          + " sampled entries amortized.");
  public static final Property MAX_EVICTIONS = add(
      "hazelcast.map.eviction.max.evictions.per.operation", "20000", "an integer from 1 to 10000000",
      "Cap on the evictions one operation performs; the rest continues on later operations.");
  public static final Property MAX_MICROS = add("hazelcast.map.eviction.max.micros.per.operation",
      "100000", "an integer from 1 to 60000000",
      "Cap on the time one operation spends evicting, in microseconds.");
  public static final Property REJECT_OVERSIZED = add("hazelcast.map.eviction.reject.oversized",
      "true", "true, false",
      "Reject a new entry whose modelled cost alone exceeds the map's per-member"
          + " USED_HEAP_SIZE / USED_HEAP_PERCENTAGE limit, with IllegalArgumentException to the"
          + " caller.");
  public static final Property BACKUPS_FOLLOW_OWNER = add(
      "hazelcast.map.eviction.backups.follow.owner", "false", "true, false",
      "true: under USED_HEAP_SIZE / USED_HEAP_PERCENTAGE a member evicts from the partitions it"
          + " owns and sends the evicted keys to their backups, so owner and backups hold the same"
          + " entries and a member crash loses no entry the map still held. false: every replica"
          + " evicts its own choice, as upstream does (better LRU accuracy, replicas differ).");
  public static final Property ENTRY_OVERHEAD = add("hazelcast.map.eviction.entry.overhead", "auto",
      "auto, or a number of bytes from 0 to 4096",
      "Per-entry bytes of the record store's structures (hash-table node, table slot, segment"
          + " and statistics share) added to key, value and record. auto: 72 with compressed oops,"
          + " 96 without (calibrated with 100 B values against heap after full GC).");

  public final String gcModel;
  public final long regionSize;
  public final int sampleCount;
  public final int poolSize;
  public final int maxEvictionsPerOperation;
  public final long maxNanosPerOperation;
  public final boolean rejectOversized;
  public final boolean backupsFollowOwner;
  public final int entryOverhead;

  private GcAwareEvictionConfig(Function<String, String> lookup) {
    String model = value(lookup, GC_MODEL).toLowerCase(Locale.ROOT);
    if (!model.equals("auto") && GcFootprintModel.Kind.of(model) == null) {
      throw bad(GC_MODEL, model);
    }
    this.gcModel = model;
    String region = value(lookup, REGION_SIZE);
    this.regionSize = region.equalsIgnoreCase("auto") ? 0 : parseRegion(region);
    this.sampleCount = intValue(lookup, SAMPLE_COUNT, 1, 100_000);
    this.poolSize = intValue(lookup, POOL_SIZE, 1, sampleCount);
    this.maxEvictionsPerOperation = intValue(lookup, MAX_EVICTIONS, 1, 10_000_000);
    this.maxNanosPerOperation = intValue(lookup, MAX_MICROS, 1, 60_000_000) * 1000L;
    this.rejectOversized = booleanValue(lookup, REJECT_OVERSIZED);
    this.backupsFollowOwner = booleanValue(lookup, BACKUPS_FOLLOW_OWNER);
    String overhead = value(lookup, ENTRY_OVERHEAD);
    this.entryOverhead = overhead.equalsIgnoreCase("auto") ? -1
        : intValue(lookup, ENTRY_OVERHEAD, 0, 4096);
  }

  /** Reads every property; {@code lookup} returns null for an unset one. */
  public static GcAwareEvictionConfig read(Function<String, String> lookup) {
    return new GcAwareEvictionConfig(lookup);
  }

  /** Every property in documentation order. */
  public static List<Property> properties() {
    return Collections.unmodifiableList(new ArrayList<>(ALL.values()));
  }

  private static Property add(String name, String dflt, String accepted, String doc) {
    Property p = new Property(name, dflt, accepted, doc);
    ALL.put(name, p);
    return p;
  }

  private static String value(Function<String, String> lookup, Property p) {
    String v = lookup.apply(p.name);
    return v == null || v.trim().isEmpty() ? p.defaultValue : v.trim();
  }

  private int intValue(Function<String, String> lookup, Property p, int min, int max) {
    String v = value(lookup, p);
    long n;
    try {
      n = Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw bad(p, v);
    }
    if (n < min || n > max) {
      throw new InvalidConfigurationException("Property " + p.name + "='" + v + "' is out of range."
          + " Accepted values: " + p.accepted + (p == POOL_SIZE ? " (" + max + ")" : "") + ".");
    }
    return (int) n;
  }

  private static long parseRegion(String v) {
    String s = v.trim().toLowerCase(Locale.ROOT);
    long unit = 1;
    if (s.endsWith("b")) {
      s = s.substring(0, s.length() - 1);
    }
    if (s.endsWith("k")) {
      unit = GcFootprintModel.KB;
    } else if (s.endsWith("m")) {
      unit = GcFootprintModel.MB;
    } else if (s.endsWith("g")) {
      unit = 1024 * GcFootprintModel.MB;
    }
    if (unit != 1) {
      s = s.substring(0, s.length() - 1);
    }
    try {
      long n = Long.parseLong(s.trim()) * unit;
      if (n < 64 * GcFootprintModel.KB || n > 512 * GcFootprintModel.MB || Long.bitCount(n) != 1) {
        throw new InvalidConfigurationException("Property " + REGION_SIZE.name + "='" + v
            + "' must be a power of two from 64k to 512m. Accepted values: "
            + REGION_SIZE.accepted + ".");
      }
      return n;
    } catch (NumberFormatException e) {
      throw bad(REGION_SIZE, v);
    }
  }

  private static boolean booleanValue(Function<String, String> lookup, Property p) {
    String v = value(lookup, p).toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw bad(p, v);
    }
    return Boolean.parseBoolean(v);
  }

  private static InvalidConfigurationException bad(Property p, String v) {
    return new InvalidConfigurationException("Property " + p.name + "='" + v + "' is not valid."
        + " Accepted values: " + p.accepted + ".");
  }

  @Override
  public String toString() {
    return "gc.model=" + gcModel + ", gc.region.size=" + (regionSize == 0 ? "auto" : regionSize)
        + ", pool.sample.count=" + sampleCount + ", pool.size=" + poolSize
        + ", max.evictions.per.operation=" + maxEvictionsPerOperation
        + ", max.micros.per.operation=" + maxNanosPerOperation / 1000
        + ", reject.oversized=" + rejectOversized
        + ", backups.follow.owner=" + backupsFollowOwner
        + ", entry.overhead=" + (entryOverhead < 0 ? "auto" : entryOverhead);
  }
}
