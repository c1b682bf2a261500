package dev.forkset.hazelcast.eviction;

import com.hazelcast.config.InvalidConfigurationException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Every setting of the module, with its default, the values it accepts and its meaning, and the
 * one method that reads and checks them all ({@link #read}). Each is read like any Hazelcast
 * property: {@code properties:} in hazelcast.yaml (or {@code Config.setProperty}) first, then the
 * system property of the same name, then the default. A bad value stops the member at start with
 * {@code <key>='<value>' is not valid. Accepted: <accepted>. <how to fix>.}
 *
 * <p>The operator's table in docs/hazelcast-eviction.md ("Settings") is rendered from
 * {@link #settings()}; SettingsDocTest keeps the two equal.
 */
public final class GcAwareEvictionConfig {

  /** A documented setting. */
  public static final class Setting {
    /** The property name. */
    public final String name;
    /** The default, as an operator writes it. */
    public final String defaultValue;
    /** The accepted values, in words. */
    public final String accepted;
    /** What it does. */
    public final String doc;

    Setting(String name, String defaultValue, String accepted, String doc) {
      this.name = name;
      this.defaultValue = defaultValue;
      this.accepted = accepted;
      this.doc = doc;
    }

    InvalidConfigurationException invalid(String value) {
      return new InvalidConfigurationException(name + "='" + value + "' is not valid. Accepted: "
          + accepted + ". Remove it for the default " + defaultValue + ".");
    }
  }

  private static final List<Setting> ALL = new ArrayList<>();

  /** The value of {@link #PROVIDER} that names this module. */
  public static final String PROVIDER_NAME = "gc-aware";

  public static final Setting PROVIDER = add("hazelcast.map.eviction.provider", "auto",
      "auto, stock, " + PROVIDER_NAME,
      "Read by the hook patch. auto: this module when its jar is on the class path, else"
          + " Hazelcast's own estimator and evictor; stock: Hazelcast's own, with the jar present;"
          + " gc-aware: this module, and the member does not start without it.");
  public static final Setting GC_MODEL = add("hazelcast.map.eviction.gc.model", "auto",
      "auto, g1, zgc, zgc-generational, shenandoah, parallel, serial, conservative",
      "Footprint model. auto detects the collector at member start from the"
          + " GarbageCollectorMXBean names; an unknown collector gets the conservative model"
          + " and one warning.");
  public static final Setting REGION_SIZE = add("hazelcast.map.eviction.gc.region.size", "auto",
      "auto, or a power of two from 64k to 512m such as 4194304, 4m, 4MB",
      "Region size of the g1 and shenandoah models. auto reads it from the VM"
          + " (G1HeapRegionSize, ShenandoahRegionSize).");
  public static final Setting SAMPLE_COUNT = add("hazelcast.map.eviction.pool.sample.count",
      "64", "an integer from 1 to 100000",
      "Entries sampled to refill an eviction pool (one pool per map and partition thread).");
  public static final Setting POOL_SIZE = add("hazelcast.map.eviction.pool.size", "4",
      "an integer from 1 to the sample count",
      "Best candidates (by the map's eviction policy) kept from each refill; the pool is"
          + " refilled only when they are used up, so an eviction costs sample.count / pool.size"
          + " sampled entries amortized.");
  public static final Setting MAX_EVICTIONS = add(
      "hazelcast.map.eviction.max.evictions.per.operation", "20000",
      "an integer from 1 to 10000000",
      "Cap on the evictions one operation performs; the rest continues on later operations.");
  public static final Setting MAX_MICROS = add("hazelcast.map.eviction.max.micros.per.operation",
      "100000", "an integer from 1 to 60000000",
      "Cap on the time one operation spends evicting, in microseconds.");
  public static final Setting REJECT_OVERSIZED = add("hazelcast.map.eviction.reject.oversized",
      "true", "true, false",
      "Refuse a write whose entry alone exceeds the map's per-member USED_HEAP_SIZE /"
          + " USED_HEAP_PERCENTAGE limit, with IllegalArgumentException to the caller, before"
          + " anything of it is stored (such an entry of a split-brain merge batch is dropped with"
          + " a WARNING instead, and the batch's other entries and the merge go on; custom jars"
          + " before revision 11 drop the whole batch).");
  public static final Setting BACKUPS_FOLLOW_OWNER = add(
      "hazelcast.map.eviction.backups.follow.owner", "false", "true, false",
      "true: under USED_HEAP_SIZE / USED_HEAP_PERCENTAGE a member evicts from the partitions it"
          + " owns and sends the evicted keys to their backups, so owner and backups hold the same"
          + " entries and a member crash loses no entry the map still held; a member never evicts"
          + " backups itself, so give members equal heaps and limits. false: every replica"
          + " evicts its own choice, as upstream does (better LRU accuracy, replicas differ).");
  public static final Setting ENTRY_OVERHEAD = add("hazelcast.map.eviction.entry.overhead",
      "auto", "auto, or a number of bytes from 0 to 4096",
      "Per-entry bytes of the record store's structures (hash-table node, table slot, segment"
          + " and statistics share) added to key, value and record. auto: 72 with compressed oops,"
          + " 96 without (calibrated with 100 B values against heap after full GC).");

  public static final Setting CHUNKED_VALUES = add("hazelcast.map.eviction.chunked.values",
      "auto", "auto, off, or a chunk size in bytes: a power of two from 16 to 1073741824",
      "Stored copies of BINARY map values (custom jars of revision 4 or later, both lines; an"
          + " older jar stores one array whatever this says). auto: a value the collector would"
          + " round as one array (G1: above half a region) is stored in pieces below that size,"
          + " modelled and counted as such; off: one array, as stock; a number N: every value above"
          + " N bytes in N-byte pieces (for tests). With custom jars of revision 9 or later a"
          + " client's value to store (put, set, putAll and their kin) that a BINARY map keeps in"
          + " pieces is read into them as it arrives instead of into one array first; with"
          + " revision 10 or later so are a value of that size that the map only compares"
          + " (replace(key, old, new), remove(key, value), containsValue) and a client's"
          + " transactional writes.");

  public static final Setting INFLIGHT_HEAP_PERCENT = add(
      "hazelcast.map.eviction.inflight.heap.percent", "50", "an integer from 1 to 100, or off",
      "Refuse an owner write of a value that would take more than this share of the member's"
          + " max heap in flight, with IllegalArgumentException to the caller before anything of"
          + " it is stored (in a split-brain merge batch, the values that do not fit are dropped"
          + " with a WARNING instead, and the batch's other entries and the merge go on; custom"
          + " jars before revision 11 drop the whole batch). A value of S serialized bytes is"
          + " counted as (3 + 2 x backups) x S,"
          + " one S more with two or more backups: it arrives as one array (and is copied out of"
          + " a member's packet; a client's value that a BINARY map chunks is read into its stored"
          + " chunks since revision 9, still counted so: the owner cannot tell it from a forwarded"
          + " one), is copied into the stored record, and goes to each backup as"
          + " one serialized packet, copied out on the backup. The values of one partition's"
          + " putAll or merge batch count together, as they travel together, and so do those a"
          + " multi-key entry processor computes for one partition with an offloaded MapStore"
          + " (held together until stored; custom jars of revision 7 or later). Every map is"
          + " protected, with an eviction config or without (custom jars of revision 8 or later;"
          + " an earlier jar asks the module only about maps with an eviction config, so give"
          + " there every map that may receive large values one). Never refused: a value a"
          + " MapLoader loads, a multi-key entry processor's values without an offloaded"
          + " MapStore, an entry processor's value on an OBJECT map (never serialized on its way"
          + " in), backups and migration. off: no such refusal (a value the heap cannot take"
          + " ends in OutOfMemoryError, as stock).");

  public final String gcModel;
  /** 0 for auto. */
  public final long regionSize;
  public final int sampleCount;
  public final int poolSize;
  public final int maxEvictionsPerOperation;
  public final long maxNanosPerOperation;
  public final boolean rejectOversized;
  public final boolean backupsFollowOwner;
  /** -1 for auto. */
  public final int entryOverhead;
  /** -1 for auto, 0 for off, else the chunk size. */
  public final int chunkedValues;
  /** Percent of the max heap one write may take in flight; 0 for off. */
  public final int inFlightHeapPercent;

  private GcAwareEvictionConfig(Function<String, String> lookup) {
    String model = value(lookup, GC_MODEL).toLowerCase(Locale.ROOT);
    if (!model.equals("auto") && GcFootprintModel.Kind.of(model) == null) {
      throw GC_MODEL.invalid(model);
    }
    this.gcModel = model;
    String region = value(lookup, REGION_SIZE);
    this.regionSize = region.equalsIgnoreCase("auto") ? 0 : parseRegion(region);
    this.sampleCount = intValue(lookup, SAMPLE_COUNT, 1, 100_000);
    String pool = value(lookup, POOL_SIZE);
    this.poolSize = parseInt(pool, 1, sampleCount, () -> new InvalidConfigurationException(
        POOL_SIZE.name + "='" + pool + "' is not valid. Accepted: " + POOL_SIZE.accepted + " ("
            + sampleCount + "). Remove it for the default " + POOL_SIZE.defaultValue
            + ", or raise " + SAMPLE_COUNT.name + "."));
    this.maxEvictionsPerOperation = intValue(lookup, MAX_EVICTIONS, 1, 10_000_000);
    this.maxNanosPerOperation = intValue(lookup, MAX_MICROS, 1, 60_000_000) * 1000L;
    this.rejectOversized = booleanValue(lookup, REJECT_OVERSIZED);
    this.backupsFollowOwner = booleanValue(lookup, BACKUPS_FOLLOW_OWNER);
    String overhead = value(lookup, ENTRY_OVERHEAD);
    this.entryOverhead = overhead.equalsIgnoreCase("auto") ? -1
        : intValue(lookup, ENTRY_OVERHEAD, 0, 4096);
    String chunked = value(lookup, CHUNKED_VALUES).toLowerCase(Locale.ROOT);
    if (chunked.equals("auto")) {
      this.chunkedValues = -1;
    } else if (chunked.equals("off")) {
      this.chunkedValues = 0;
    } else {
      int n = parseInt(chunked, 16, 1 << 30, () -> CHUNKED_VALUES.invalid(chunked));
      if (Integer.bitCount(n) != 1) {
        throw CHUNKED_VALUES.invalid(chunked);
      }
      this.chunkedValues = n;
    }
    String inFlight = value(lookup, INFLIGHT_HEAP_PERCENT).toLowerCase(Locale.ROOT);
    this.inFlightHeapPercent = inFlight.equals("off") ? 0
        : parseInt(inFlight, 1, 100, () -> INFLIGHT_HEAP_PERCENT.invalid(inFlight));
  }

  /**
   * Reads and checks every setting; {@code lookup} returns null for an unset one. Throws
   * {@link InvalidConfigurationException} naming the first bad setting.
   */
  public static GcAwareEvictionConfig read(Function<String, String> lookup) {
    return new GcAwareEvictionConfig(lookup);
  }

  /** Every setting in documentation order. */
  public static List<Setting> settings() {
    return Collections.unmodifiableList(ALL);
  }

  private static Setting add(String name, String dflt, String accepted, String doc) {
    Setting s = new Setting(name, dflt, accepted, doc);
    ALL.add(s);
    return s;
  }

  private static String value(Function<String, String> lookup, Setting s) {
    String v = lookup.apply(s.name);
    return v == null || v.trim().isEmpty() ? s.defaultValue : v.trim();
  }

  private static int intValue(Function<String, String> lookup, Setting s, int min, int max) {
    String v = value(lookup, s);
    return parseInt(v, min, max, () -> s.invalid(v));
  }

  private static int parseInt(String v, int min, int max,
      java.util.function.Supplier<InvalidConfigurationException> invalid) {
    long n;
    try {
      n = Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw invalid.get();
    }
    if (n < min || n > max) {
      throw invalid.get();
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
    long n;
    try {
      n = Long.parseLong(s.trim()) * unit;
    } catch (NumberFormatException e) {
      throw REGION_SIZE.invalid(v);
    }
    if (n < 64 * GcFootprintModel.KB || n > 512 * GcFootprintModel.MB || Long.bitCount(n) != 1) {
      throw REGION_SIZE.invalid(v);
    }
    return n;
  }

  private static boolean booleanValue(Function<String, String> lookup, Setting s) {
    String v = value(lookup, s).toLowerCase(Locale.ROOT);
    if (!v.equals("true") && !v.equals("false")) {
      throw s.invalid(v);
    }
    return Boolean.parseBoolean(v);
  }

  @Override
  public String toString() {
    return "gc.model=" + gcModel + ", gc.region.size=" + (regionSize == 0 ? "auto" : regionSize)
        + ", pool.sample.count=" + sampleCount + ", pool.size=" + poolSize
        + ", max.evictions.per.operation=" + maxEvictionsPerOperation
        + ", max.micros.per.operation=" + maxNanosPerOperation / 1000
        + ", reject.oversized=" + rejectOversized
        + ", backups.follow.owner=" + backupsFollowOwner
        + ", entry.overhead=" + (entryOverhead < 0 ? "auto" : entryOverhead)
        + ", chunked.values=" + (chunkedValues < 0 ? "auto" : chunkedValues == 0 ? "off"
            : String.valueOf(chunkedValues))
        + ", inflight.heap.percent=" + (inFlightHeapPercent == 0 ? "off"
            : String.valueOf(inFlightHeapPercent));
  }
}
