package dev.forkset.hazelcast.eviction;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.logging.ILogger;
import com.hazelcast.map.impl.MapEntries;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.spi.exception.RetryableHazelcastException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Decides, on the owner's partition thread and before anything of a write is stored, whether a
 * map under a heap limit can take it.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Oversized: an entry whose modelled cost alone exceeds the map's per-member limit is
 *       refused with {@link IllegalArgumentException}, and with it the whole write (all entries
 *       of a putAll): evicting every other entry could not make room for it, and storing it
 *       could exhaust the heap. A split-brain merge batch loses only such entries
 *       ({@link #mergeDrops}).</li>
 *   <li>Back-pressure: a partition thread frees only its own partitions and hands the rest of an
 *       overshoot to the other threads, so a client that keeps writing large values can outrun
 *       eviction (seen: 26 live 5 MB values against a limit of 18 on a loaded 2-core machine,
 *       then OutOfMemoryError). A write that grows the map while it is more than
 *       1/{@value #SLACK_DIVISOR} of its limit over it first makes this thread catch up; if the
 *       map is still that far over, the write is refused with Hazelcast's
 *       {@link RetryableHazelcastException}, which client and member invocations retry. Updates
 *       that grow an entry count as growth; writes that only shrink or keep entries pass.
 *       "Over" is the part of the overshoot this member's own passes free: with backups
 *       following their owner, the owned share (see {@link SizeProportionalEvictor}).</li>
 *   <li>In flight: a stored value is chunked, but a value still travels as one array (the
 *       client frame or a forwarded operation's packet, copied out of it by
 *       {@code readData}; one serialized packet per backup, built in a pooled output buffer
 *       and copied out of it; on the backup the packet and its copy again), and the stored copy
 *       is made beside the arrived array. A write whose value would take more than the
 *       configured share of the member's max heap that way ({@link #inFlightBytes}) is refused
 *       with {@link IllegalArgumentException} before anything of it is stored, instead of
 *       running the owner or a backup out of memory on its way; the rule is static (max heap,
 *       not free heap), so every member with the same heap and setting judges a value alike,
 *       whatever its GC state. Checked after the oversized check, so a value larger than the
 *       map's limit keeps that message. Also for maps under count or free-heap policies, and for
 *       maps without eviction ({@link MapsWithoutEviction}: the hooks ask about every map since
 *       patch 0010).</li>
 * </ol>
 */
final class Admission {
  /** Over-limit share (1/n of the limit) beyond which growing writes wait for eviction. */
  static final int SLACK_DIVISOR = 16;

  private final String mapName;
  private final long limit;
  private final String limitSetting;
  private final boolean rejectOversized;
  private final LongSupplier overshoot;
  private final EvictionMetrics metrics;
  private final int backups;
  /** Bytes one write's value may take in flight on a member; Long.MAX_VALUE for no limit. */
  private final long inFlightAllowance;
  private final int inFlightPercent;
  private final long maxHeap;

  Admission(String mapName, long limit, String limitSetting, boolean rejectOversized,
      LongSupplier overshoot, EvictionMetrics metrics) {
    this(mapName, limit, limitSetting, rejectOversized, overshoot, metrics, 0, 0,
        Runtime.getRuntime().maxMemory());
  }

  /**
   * @param overshoot       the part of the map's overshoot of {@code limit} that this
   *                        member's eviction passes free, 0 when under the limit
   * @param backups         the map's backup count (sync and async): one packet of the value each
   * @param inFlightPercent share of {@code maxHeap} one write's value may take in flight; 0 for
   *                        no limit
   */
  Admission(String mapName, long limit, String limitSetting, boolean rejectOversized,
      LongSupplier overshoot, EvictionMetrics metrics, int backups, int inFlightPercent,
      long maxHeap) {
    this.mapName = mapName;
    this.backups = backups;
    this.inFlightPercent = inFlightPercent;
    this.maxHeap = maxHeap;
    this.inFlightAllowance = inFlightAllowance(inFlightPercent, maxHeap);
    this.limit = limit;
    this.limitSetting = limitSetting;
    this.rejectOversized = rejectOversized;
    this.overshoot = overshoot;
    this.metrics = metrics;
  }

  /**
   * Admits a write of {@code keys} with {@code values} (null where the values are not known
   * yet) or throws.
   *
   * @param costs    the cost model of the partition's record store
   * @param existing the record a key has now, or null
   * @param catchUp  an eviction pass on this thread
   */
  void admit(GcAwareEntryCostEstimator costs, Function<Data, Record<?>> existing,
      List<Data> keys, List<Data> values, Runnable catchUp) {
    if (values != null && costs != null) {
      for (int i = 0; i < values.size(); i++) {
        checkSize(costs, keys.get(i), values.get(i), values.size());
      }
    }
    // every value of the batch before any back-pressure: a refusal is final, a deferral retried
    checkInFlight(values);
    if (values != null && costs != null) {
      long growth = 0;
      for (int i = 0; i < values.size() && growth == 0; i++) {
        Data value = values.get(i);
        Record<?> now = existing.apply(keys.get(i));
        growth += now == null ? costs.entryCost(keys.get(i), value)
            : Math.max(0, costs.valueCost(value) - costs.recordCost(now));
      }
      if (growth == 0) {
        return;
      }
    }
    backPressure(catchUp);
  }

  /** Refuses an entry whose cost alone exceeds the limit. */
  void checkSize(GcAwareEntryCostEstimator costs, Data key, Data value) {
    checkSize(costs, key, value, 1);
  }

  /**
   * The same for an entry of a write of {@code entries} entries: each of them counts as rejected
   * ({@code rejectedEntries}), since none of them is stored.
   */
  private void checkSize(GcAwareEntryCostEstimator costs, Data key, Data value, int entries) {
    if (!rejectOversized || value == null) {
      return;
    }
    long cost = costs.entryCost(key, value);
    if (cost > limit) {
      metrics.rejected.add(entries);
      throw new IllegalArgumentException("Map '" + mapName + "': an entry of this write needs "
          + cost + " bytes of heap on this member (" + value.totalSize() + " serialized bytes"
          + " under the " + costs.model().kind().value + " footprint model), more than the"
          + " map's whole per-member limit of " + limit + " bytes (" + limitSetting + ")."
          + " Nothing of the write was stored. Raise the limit or store smaller values.");
    }
  }

  /**
   * The admission of a map without a limit: only the in-flight rule, with the map's
   * {@code backups}; nothing is oversized and there is no back-pressure.
   */
  static Admission inFlightOnly(String mapName, EvictionMetrics metrics, int backups,
      int inFlightPercent, long maxHeap) {
    return new Admission(mapName, Long.MAX_VALUE, "no limit", false, () -> 0, metrics, backups,
        inFlightPercent, maxHeap);
  }

  /** Bytes one write's value may take in flight on a member; Long.MAX_VALUE for no limit. */
  static long inFlightAllowance(int inFlightPercent, long maxHeap) {
    return inFlightPercent == 0 ? Long.MAX_VALUE : (long) (maxHeap * (inFlightPercent / 100.0));
  }

  /**
   * What a value of {@code serialized} bytes allocates in flight at most on one member, modelled
   * from what 5.7.0 allocates for an owner write with {@code backups} backups (measured in
   * InFlightValueLimitIT and docs/hazelcast-eviction.md, "Values in flight"): on the owner, the
   * array it arrived in, and its copy out of the packet when another member forwarded the
   * operation (2), the stored copy (1), and per backup a pooled output buffer that grows to the
   * value and the packet array copied out of it (2 each), plus, with more than one backup, the
   * backup operation serialized once before it is copied into each packet
   * ({@code OperationBackupHandler.sendMultipleBackups}: 1); on a backup, the packet, its copy
   * and the stored copy (3).
   */
  static long inFlightBytes(long serialized, int backups) {
    return serialized * inFlightFactor(backups);
  }

  private static int inFlightFactor(int backups) {
    return fixedCopies(backups) + 2 * backups;
  }

  private static int fixedCopies(int backups) {
    return backups > 1 ? 4 : 3;
  }

  /**
   * Refuses, before anything is stored, a write whose values the member heap cannot take in
   * flight: one value too large, or a batch too large together. A batch is one partition's
   * entries of a putAll or merge, and it travels as one: a client sends them in one message
   * ({@code ClientMapProxy#putAllInternal}: one request per partition), a member in one packet,
   * the owner stores them all, and one backup operation carries them all in one packet; so its
   * values count like one value of their summed size.
   */
  void checkInFlight(List<Data> values) {
    if (values == null) {
      return;
    }
    long together = 0;
    int count = 0;
    for (Data value : values) {
      checkInFlight(value, values.size());
      if (value != null) {
        together += value.totalSize();
        count++;
      }
    }
    checkTogether(together, count, "one partition's batch of a putAll or merge, which travels"
        + " and is backed up as one", "Write fewer values at once (for a split-brain merge: a"
        + " smaller batch-size in the map's merge policy)");
  }

  /**
   * The same for the values a multi-key entry processor computed for one partition's batch,
   * each already checked alone: with an offloaded MapStore the steps hold them all from the
   * processor's run until they are stored, so they count together like a putAll batch (by the
   * same rule, although a backup re-runs the processor instead of receiving the values: the rule
   * stays one static bound for every write path).
   */
  void checkComputedInFlight(List<?> values) {
    long together = 0;
    int count = 0;
    for (Object value : values) {
      // a value the map keeps as an object (not serialized on its way in) is not counted
      if (value instanceof Data) {
        together += ((Data) value).totalSize();
        count++;
      }
    }
    checkTogether(together, count, "the values one partition's keys of a multi-key entry"
        + " processor computed, which are held together until they are stored",
        "Run the entry processor on fewer keys at once");
  }

  private void checkTogether(long together, int count, String what, String fewer) {
    if (count < 2 || inFlightAllowance == Long.MAX_VALUE) {
      return;
    }
    long inFlight = inFlightBytes(together, backups);
    if (inFlight > inFlightAllowance) {
      metrics.rejected.add(count);
      throw new IllegalArgumentException("Map '" + mapName + "': the " + count + " values of this"
          + " write (" + what + "), " + together + " serialized bytes together, take about "
          + inFlight + " bytes of heap in flight on a member, (" + fixedCopies(backups) + " + 2 x "
          + backups + " backups) x their size (the array they arrive in and its copy out of a"
          + " member's packet, the stored copies, and one serialized packet of them per backup),"
          + " more than " + inFlightPercent + "% of this member's max heap of " + maxHeap
          + " bytes (" + GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name + "=" + inFlightPercent
          + "). Nothing of the write was stored. " + fewer + ", store smaller values, give the"
          + " members more heap (-Xmx), or raise " + GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name
          + ".");
    }
  }

  /** The same for one value. */
  void checkInFlight(Data value) {
    checkInFlight(value, 1);
  }

  /** The same for one value of a write of {@code entries} entries, which all count as rejected. */
  private void checkInFlight(Data value, int entries) {
    if (value == null || inFlightAllowance == Long.MAX_VALUE) {
      return;
    }
    long size = value.totalSize();
    long inFlight = inFlightBytes(size, backups);
    if (inFlight > inFlightAllowance) {
      metrics.rejected.add(entries);
      throw new IllegalArgumentException("Map '" + mapName + "': a value of " + size
          + " serialized bytes takes about " + inFlight + " bytes of heap in flight on a member,"
          + " (" + fixedCopies(backups) + " + 2 x " + backups + " backups) x its size (the array"
          + " it arrives in and its copy out of a member's packet, the stored copy, and one"
          + " serialized packet of it per backup), more than " + inFlightPercent
          + "% of this member's max heap of " + maxHeap + " bytes (" + GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name + "=" + inFlightPercent
          + "). Nothing of the write was stored. Store smaller values, give the members more"
          + " heap (-Xmx), or raise " + GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name + ".");
    }
  }

  /**
   * How a member's own putAll splits the partitions' batches it sends another member (patch
   * 0008, {@code MapProxySupport#invokePutAllOperation}). Stock sends them in one operation, which
   * the other member reads as one packet, and copies each value out of, before any partition's
   * owner can judge a batch ({@link #checkInFlight(List)}); so those batches together count like
   * one batch of their summed size. Consecutive batches go together while their sum is within the
   * rule; a batch over it alone goes alone (its owner then refuses it as it refuses any such
   * batch). The runs are sent one after the other, so the other member holds one in flight at a
   * time. The rule is this member's: its max heap and setting stand for the other member's, as
   * every member with the same heap and setting judges a value alike.
   *
   * @param batchBytes the serialized size of each partition's values, in the order sent
   * @return the exclusive ends of the runs, or {@code null} when all of them fit in one
   */
  int[] operationEnds(MapEntries[] batches) {
    return operationEnds(batchBytes(batches));
  }

  /** The serialized size of each partition's values. */
  static long[] batchBytes(MapEntries[] batches) {
    long[] bytes = new long[batches.length];
    for (int i = 0; i < batches.length; i++) {
      for (int j = 0; j < batches[i].size(); j++) {
        Data value = batches[i].getValue(j);
        bytes[i] += value == null ? 0 : value.totalSize();
      }
    }
    return bytes;
  }

  /** The same for the batches' sizes. */
  int[] operationEnds(long[] batchBytes) {
    if (inFlightAllowance == Long.MAX_VALUE || batchBytes.length < 2) {
      return null;
    }
    int[] ends = new int[batchBytes.length];
    int runs = 0;
    long run = 0;
    for (int i = 0; i < batchBytes.length; i++) {
      if (i > 0 && inFlightBytes(run + batchBytes[i], backups) > inFlightAllowance) {
        ends[runs++] = i;
        run = 0;
      }
      run += batchBytes[i];
    }
    ends[runs++] = batchBytes.length;
    if (runs == 1) {
      return null;
    }
    metrics.putAllRuns.add(runs);
    return Arrays.copyOf(ends, runs);
  }

  /**
   * One partition's batch of a split-brain merge: {@code admit} admits it as any write, and a
   * final refusal ({@link IllegalArgumentException}: an entry over the map's limit, values the
   * heap cannot take in flight) drops the batch with a WARNING instead of failing the merge
   * operation; see {@link SizeProportionalEvictor#beforeMerge}. A retryable refusal (back-pressure)
   * is thrown: that batch is retried.
   *
   * @return whether to merge the batch
   */
  boolean admitMerge(ILogger logger, int partitionId, List<Data> values, Runnable admit) {
    try {
      admit.run();
      return true;
    } catch (IllegalArgumentException refused) {
      logger.warning(mergeBatchDropped(partitionId, values, refused));
      return false;
    }
  }

  /**
   * The entries of one partition's batch of a split-brain merge to drop so that the others merge
   * (custom jars of revision 11 or later; see {@link SizeProportionalEvictor#mergeBatchDrops}):
   * each entry over the map's limit ({@code costs}: null where nothing is oversized), and, in the
   * batch's order, each value that would take the values kept before it over the in-flight
   * allowance together (a later, smaller value may still fit). {@code admit} then admits the kept
   * entries as any write: back-pressure throws its retryable exception before anything is counted
   * or logged, and the whole batch is retried; a final refusal there would be a check this
   * selection does not mirror, and drops the whole batch, as {@link #admitMerge} does. The dropped
   * entries count as rejected and are named in one WARNING.
   *
   * @return the indexes of the entries to drop; empty to merge every entry
   */
  BitSet mergeDrops(ILogger logger, int partitionId, GcAwareEntryCostEstimator costs,
      List<Data> keys, List<Data> values, BiConsumer<List<Data>, List<Data>> admit) {
    BitSet dropped = new BitSet(values.size());
    int oversized = 0;
    int alone = 0;
    long kept = 0;
    for (int i = 0; i < values.size(); i++) {
      Data value = values.get(i);
      if (value == null) {
        continue;
      }
      if (costs != null && rejectOversized && costs.entryCost(keys.get(i), value) > limit) {
        dropped.set(i);
        oversized++;
      } else if (inFlightAllowance != Long.MAX_VALUE
          && inFlightBytes(kept + value.totalSize(), backups) > inFlightAllowance) {
        dropped.set(i);
        alone += inFlightBytes(value.totalSize(), backups) > inFlightAllowance ? 1 : 0;
      } else {
        kept += value.totalSize();
      }
    }
    List<Data> keptKeys = keys;
    List<Data> keptValues = values;
    if (!dropped.isEmpty()) {
      keptKeys = new ArrayList<>(keys.size());
      keptValues = new ArrayList<>(values.size());
      for (int i = dropped.nextClearBit(0); i < keys.size(); i = dropped.nextClearBit(i + 1)) {
        keptKeys.add(keys.get(i));
        keptValues.add(values.get(i));
      }
    }
    try {
      if (!keptKeys.isEmpty()) {
        admit.accept(keptKeys, keptValues);
      }
    } catch (IllegalArgumentException refused) {
      metrics.rejected.add(dropped.cardinality());
      logger.warning(mergeBatchDropped(partitionId, values, refused));
      dropped.set(0, values.size());
      return dropped;
    }
    if (!dropped.isEmpty()) {
      metrics.rejected.add(dropped.cardinality());
      logger.warning(mergeEntriesDropped(partitionId, values, dropped, oversized, alone, costs));
    }
    return dropped;
  }

  /**
   * The WARNING of {@link #mergeDrops} when it drops some entries of a batch: how many, why
   * ({@code oversized} over the map's limit, {@code alone} over the in-flight allowance by
   * themselves, the rest over it with the values kept before them), the settings and the remedies
   * for those reasons; the batch's other entries are merged.
   */
  String mergeEntriesDropped(int partitionId, List<Data> values, BitSet dropped, int oversized,
      int alone, GcAwareEntryCostEstimator costs) {
    List<Data> refused = new ArrayList<>(dropped.cardinality());
    for (int i = dropped.nextSetBit(0); i >= 0; i = dropped.nextSetBit(i + 1)) {
      refused.add(values.get(i));
    }
    int count = refused.size();
    int together = count - oversized - alone;
    List<String> why = new ArrayList<>();
    if (oversized > 0) {
      why.add(oversized + " over the map's whole per-member limit of " + limit + " bytes ("
          + limitSetting + ", under the " + costs.model().kind().value + " footprint model)");
    }
    String rule = " what one write may take in flight on a member, (" + fixedCopies(backups)
        + " + 2 x " + backups + " backups) x the size, more than " + inFlightPercent + "% of this"
        + " member's max heap of " + maxHeap + " bytes ("
        + GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name + "=" + inFlightPercent + ")";
    if (alone > 0) {
      why.add(alone + " each alone over" + rule);
    }
    if (together > 0) {
      why.add(together + " over" + rule.replace("the size", "their size together")
          + " with the values kept before them in the batch");
    }
    List<String> remedies = new ArrayList<>();
    remedies.add("store smaller values");
    if (oversized > 0) {
      remedies.add("raise the map's limit");
    }
    if (together > 0) {
      remedies.add("lower the batch-size of the map's merge policy");
    }
    if (alone + together > 0) {
      remedies.add("give the members more heap (-Xmx)");
      remedies.add("raise " + GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name);
    }
    return "Map '" + mapName + "': " + count + " of the " + values.size() + " entries of a"
        + " split-brain merge batch into partition " + partitionId + " (" + sizes(refused)
        + ") were refused and are not merged: " + String.join("; ", why) + ". The batch's"
        + " remaining " + (values.size() - count) + " entries are merged; the merge goes on with"
        + " its other batches, and the refused keys keep what this cluster holds for them"
        + " (rejectedEntries counts the " + count + "). To merge such entries, "
        + String.join(", ", remedies.subList(0, remedies.size() - 1))
        + (remedies.size() > 1 ? ", or " : "") + remedies.get(remedies.size() - 1) + ".";
  }

  /** "S serialized bytes together, the largest value L" of {@code values} (nulls count 0). */
  private static String sizes(List<Data> values) {
    long together = 0;
    long largest = 0;
    for (Data value : values) {
      if (value != null) {
        together += value.totalSize();
        largest = Math.max(largest, value.totalSize());
      }
    }
    return together + " serialized bytes together, the largest value " + largest;
  }

  /**
   * The WARNING a member logs when it drops one partition's batch of a split-brain merge that
   * {@code refusal} refused (oversized or in flight): the refusal names the setting, and the
   * merge goes on with its other batches (see {@link SizeProportionalEvictor#beforeMerge}).
   */
  String mergeBatchDropped(int partitionId, List<Data> values, IllegalArgumentException refusal) {
    return "Map '" + mapName + "': a split-brain merge batch of " + values.size() + " entries"
        + " into partition " + partitionId + " (" + sizes(values) + ") was refused and none of"
        + " it is merged; the merge goes on with its other batches, and these keys keep what"
        + " this cluster holds for them (rejectedEntries counts the " + values.size() + "). "
        + refusal.getMessage();
  }

  private void backPressure(Runnable catchUp) {
    long slack = limit / SLACK_DIVISOR;
    if (overshoot.getAsLong() <= slack) {
      return;
    }
    catchUp.run();
    long over = overshoot.getAsLong();
    if (over > slack) {
      metrics.deferred.increment();
      throw new RetryableHazelcastException("Map '" + mapName + "' has " + over
          + " bytes over its per-member limit of " + limit + " bytes to free on this member"
          + " while eviction catches up on other partition threads; the write is retried.");
    }
  }
}
