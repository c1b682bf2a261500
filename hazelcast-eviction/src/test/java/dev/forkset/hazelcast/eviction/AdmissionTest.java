package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.SerializationService;
import com.hazelcast.internal.serialization.impl.DefaultSerializationServiceBuilder;
import com.hazelcast.logging.ILogger;
import com.hazelcast.map.impl.record.Record;
import com.hazelcast.map.impl.record.SimpleRecord;
import com.hazelcast.spi.exception.RetryableHazelcastException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

public class AdmissionTest {
  private static final long LIMIT = 10L << 20;
  private final SerializationService ss = new DefaultSerializationServiceBuilder().build();
  private final GcAwareEntryCostEstimator costs =
      new GcAwareEntryCostEstimator(GcFootprintModel.g1(1 << 20), 72);
  private final MapFootprint footprint = new MapFootprint();
  private final EvictionMetrics metrics = new EvictionMetrics(GcFootprintModel.g1(1 << 20), "",
      (m, c) -> 0);
  private final Admission admission = new Admission("m", LIMIT, "USED_HEAP_SIZE 10", true,
      () -> Math.max(0, footprint.used() - LIMIT), metrics);
  private final Map<Data, Record<?>> records = new HashMap<>();
  private final AtomicInteger catchUps = new AtomicInteger();

  private Data data(Object o) {
    return ss.toData(o);
  }

  private void admit(List<Data> keys, List<Data> values, Runnable catchUp) {
    admission.admit(costs, records::get, keys, values, () -> {
      catchUps.incrementAndGet();
      catchUp.run();
    });
  }

  @Test
  public void admit_batchWithOneOversizedEntry_refusesTheWholeBatchFirst() {
    footprint.add(LIMIT * 2); // far over: the size check comes before any back-pressure
    try {
      admit(Arrays.asList(data(1), data(2), data(3)),
          Arrays.asList(data(new byte[100]), data(new byte[11 << 20]), data(new byte[100])),
          () -> { });
      fail("accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().startsWith("Map 'm': an entry of this write"
          + " needs "));
      assertTrue(e.getMessage(), e.getMessage().contains("more than the map's whole per-member"
          + " limit of 10485760 bytes (USED_HEAP_SIZE 10). Nothing of the write was stored."));
    }
    assertEquals(0, catchUps.get());
    assertEquals("each entry of the refused batch", 3, metrics.getRejectedEntries());
  }

  @Test
  public void admit_newEntryUnderTheSlack_passesWithoutEvicting() {
    footprint.add(LIMIT + LIMIT / 32);
    admit(Collections.singletonList(data(1)), Collections.singletonList(data(new byte[1000])),
        () -> { });
    assertEquals(0, catchUps.get());
  }

  @Test
  public void admit_growingWriteFarOver_catchesUpFirstThenPasses() {
    footprint.add(LIMIT + LIMIT / 8);
    admit(Collections.singletonList(data(1)), Collections.singletonList(data(new byte[1000])),
        () -> footprint.add(-LIMIT / 8));
    assertEquals(1, catchUps.get());
  }

  @Test
  public void admit_growingUpdateStillFarOverAfterCatchingUp_isRetried() {
    footprint.add(LIMIT + LIMIT / 8);
    Data key = data(1);
    records.put(key, new SimpleRecord<>(data(new byte[100])));
    try {
      admit(Collections.singletonList(key), Collections.singletonList(data(new byte[1000])),
          () -> { });
      fail("accepted");
    } catch (RetryableHazelcastException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("the write is retried"));
    }
    assertEquals(1, catchUps.get());
    assertEquals(1, metrics.getDeferredPuts());
  }

  @Test
  public void admit_updateThatShrinksAnEntry_neverWaits() {
    footprint.add(LIMIT * 2);
    Data key = data(1);
    records.put(key, new SimpleRecord<>(data(new byte[5000])));
    admit(Collections.singletonList(key), Collections.singletonList(data(new byte[1000])),
        () -> { });
    assertEquals(0, catchUps.get());
  }

  @Test
  public void admit_valuesNotKnownYet_getBackPressureOnly() {
    footprint.add(LIMIT + LIMIT / 8);
    try {
      admit(Collections.singletonList(data(1)), null, () -> { });
      fail("accepted");
    } catch (RetryableHazelcastException expected) {
      assertEquals(1, catchUps.get());
    }
  }

  /** A member of 256 MB with the setting at 25%: 64 MB in flight; one backup: 5 x the value. */
  private Admission inFlight(int percent) {
    return new Admission("big", 1L << 40, "USED_HEAP_SIZE 1048576", true, () -> 0, metrics, 1,
        percent, 256L << 20);
  }

  @Test
  public void inFlight_valueOverTheShareOfTheMaxHeap_isRefusedNamingMapSizeRuleAndSetting() {
    Data value = data(new byte[13 << 20]); // 5 x 13 MB = 65 MB > 64 MB
    try {
      inFlight(25).admit(costs, records::get, Collections.singletonList(data(1)),
          Collections.singletonList(value), () -> catchUps.incrementAndGet());
      fail("accepted");
    } catch (IllegalArgumentException e) {
      assertEquals("Map 'big': a value of " + value.totalSize() + " serialized bytes takes about "
          + 5L * value.totalSize() + " bytes of heap in flight on a member, (3 + 2 x 1 backups)"
          + " x its size (the array it arrives in and its copy out of a member's packet, the"
          + " stored copy, and one serialized packet of it per backup), more than 25% of this"
          + " member's max heap of 268435456 bytes"
          + " (hazelcast.map.eviction.inflight.heap.percent=25). Nothing of the write was stored."
          + " Store smaller values, give the members more heap (-Xmx), or raise"
          + " hazelcast.map.eviction.inflight.heap.percent.", e.getMessage());
    }
    assertEquals(0, catchUps.get());
    assertEquals(1, metrics.getRejectedEntries());
  }

  @Test
  public void inFlight_valueWithinTheShare_passes_andOffRefusesNothing() {
    Data value = data(new byte[12 << 20]); // 5 x (12 MB + 12 B) < 64 MB
    inFlight(25).checkInFlight(value);
    inFlight(0).checkInFlight(data(new byte[100 << 20]));
    assertEquals(0, metrics.getRejectedEntries());
  }

  @Test
  public void inFlight_batchWithOneValueTooLarge_isRefusedWhole_beforeBackPressure() {
    Admission a = new Admission("big", 1L << 40, "USED_HEAP_SIZE 1048576", true, () -> 1L << 40,
        metrics, 0, 25, 256L << 20);
    try {
      // 3 x 22 MB = 66 MB > 64 MB without backups; the map is far over its limit too
      a.admit(costs, records::get, Arrays.asList(data(1), data(2)),
          Arrays.asList(data(new byte[100]), data(new byte[22 << 20])),
          () -> catchUps.incrementAndGet());
      fail("accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("(3 + 2 x 0 backups)"));
    }
    assertEquals(0, catchUps.get());
    assertEquals("each entry of the refused batch", 2, metrics.getRejectedEntries());
  }

  @Test
  public void mergeBatchDropped_namesMapPartitionEntriesSizesAndTheRefusal() {
    List<Data> values = Arrays.asList(data(new byte[5 << 20]), data(new byte[6 << 20]),
        data(new byte[5 << 20]));
    IllegalArgumentException refusal = null;
    try {
      inFlight(25).admit(costs, records::get, Arrays.asList(data(1), data(2), data(3)), values,
          () -> catchUps.incrementAndGet());
      fail("accepted");
    } catch (IllegalArgumentException e) {
      refusal = e;
    }
    long together = values.get(0).totalSize() + values.get(1).totalSize()
        + values.get(2).totalSize();
    assertEquals("Map 'big': a split-brain merge batch of 3 entries into partition 17 ("
        + together + " serialized bytes together, the largest value " + values.get(1).totalSize()
        + ") was refused and none of it is merged; the merge goes on with its other batches, and"
        + " these keys keep what this cluster holds for them (rejectedEntries counts the 3). "
        + refusal.getMessage(), inFlight(25).mergeBatchDropped(17, values, refusal));
    assertTrue(refusal.getMessage(),
        refusal.getMessage().contains("(hazelcast.map.eviction.inflight.heap.percent=25)"));
    assertEquals(3, metrics.getRejectedEntries());
  }

  /** The messages logged at WARNING through the returned logger. */
  private static ILogger warningsTo(List<String> warnings) {
    return (ILogger) Proxy.newProxyInstance(ILogger.class.getClassLoader(),
        new Class<?>[] {ILogger.class}, (proxy, method, args) -> {
          if (method.getName().equals("warning") && args.length == 1 && args[0] instanceof String) {
            warnings.add((String) args[0]);
          } else if (method.getName().startsWith("is")) {
            return true; // isLoggable, isWarningEnabled, ...
          }
          return method.getReturnType() == boolean.class ? false : null;
        });
  }

  /** A member of 256 MB with the setting at 25% (64 MB in flight), one backup, limit 10 MB. */
  private Admission mergeAdmission() {
    return new Admission("m", LIMIT, "USED_HEAP_SIZE 10", true, () -> 0, metrics, 1, 25,
        256L << 20);
  }

  /**
   * A split-brain merge batch loses only the entries that do not fit: each one over the map's
   * limit, and in the batch's order each value that would take the values kept before it over
   * the in-flight allowance; the others are admitted as a batch of only them, and one WARNING
   * says why, with the remedies for those reasons.
   */
  @Test
  public void mergeDrops_dropsOversizedEntriesAndTheValuesThatDoNotFitTogether() {
    List<Data> keys = Arrays.asList(data(1), data(2), data(3), data(4), data(5));
    List<Data> values = Arrays.asList(data(new byte[11 << 20]), data(new byte[6 << 20]),
        data(new byte[7 << 20]), data(new byte[100]), data(new byte[6 << 20]));
    List<List<Data>> admitted = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    BitSet dropped = mergeAdmission().mergeDrops(warningsTo(warnings), 17, costs, keys, values,
        (k, v) -> {
          admitted.add(k);
          admitted.add(v);
        });
    // 11 MB is over the limit; 6 + 7 MB would take 65 MB in flight; 6 + 0 + 6 MB take 60 MB
    assertEquals("{0, 2}", dropped.toString());
    assertEquals(Arrays.asList(Arrays.asList(keys.get(1), keys.get(3), keys.get(4)),
        Arrays.asList(values.get(1), values.get(3), values.get(4))), admitted);
    assertEquals(2, metrics.getRejectedEntries());
    assertEquals(1, warnings.size());
    String warning = warnings.get(0);
    assertTrue(warning, warning.startsWith("Map 'm': 2 of the 5 entries of a split-brain merge"
        + " batch into partition 17 (" + (values.get(0).totalSize() + values.get(2).totalSize())
        + " serialized bytes together, the largest value " + values.get(0).totalSize() + ") were"
        + " refused and are not merged: 1 over the map's whole per-member limit of " + LIMIT
        + " bytes (USED_HEAP_SIZE 10, under the "));
    assertTrue(warning, warning.contains("; 1 over what one write may take in flight on a member,"
        + " (3 + 2 x 1 backups) x their size together, more than 25% of this member's max heap of"
        + " 268435456 bytes (hazelcast.map.eviction.inflight.heap.percent=25) with the values kept"
        + " before them in the batch. The batch's remaining 3 entries are merged;"));
    assertTrue(warning, warning.endsWith("(rejectedEntries counts the 2). To merge such entries,"
        + " store smaller values, raise the map's limit, lower the batch-size of the map's merge"
        + " policy, give the members more heap (-Xmx), or raise"
        + " hazelcast.map.eviction.inflight.heap.percent."));
  }

  @Test
  public void mergeDrops_valueOverTheAllowanceAlone_isNamedSo_withoutTheBatchSizeRemedy() {
    List<Data> values = Arrays.asList(data(new byte[100]), data(new byte[13 << 20]));
    List<String> warnings = new ArrayList<>();
    // no heap policy (costs null): 5 x 13 MB = 65 MB alone over 64 MB
    BitSet dropped = mergeAdmission().mergeDrops(warningsTo(warnings), 3, null,
        Arrays.asList(data(1), data(2)), values, (k, v) -> { });
    assertEquals("{1}", dropped.toString());
    assertEquals(1, warnings.size());
    assertTrue(warnings.get(0), warnings.get(0).contains("were refused and are not merged: 1 each"
        + " alone over what one write may take in flight on a member, (3 + 2 x 1 backups) x the"
        + " size, more than 25% of this member's max heap of 268435456 bytes"
        + " (hazelcast.map.eviction.inflight.heap.percent=25). The batch's remaining 1 entries"));
    assertTrue(warnings.get(0), warnings.get(0).endsWith("To merge such entries, store smaller"
        + " values, give the members more heap (-Xmx), or raise"
        + " hazelcast.map.eviction.inflight.heap.percent."));
    assertEquals(1, metrics.getRejectedEntries());
  }

  @Test
  public void mergeDrops_batchThatFits_isAdmittedWhole_andARefusalThereDropsItWhole() {
    List<Data> keys = Arrays.asList(data(1), data(2));
    List<Data> values = Arrays.asList(data(new byte[100]), data(new byte[200]));
    List<List<Data>> admitted = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    assertTrue(mergeAdmission().mergeDrops(warningsTo(warnings), 3, costs, keys, values,
        (k, v) -> {
          admitted.add(k);
          admitted.add(v);
        }).isEmpty());
    assertEquals(Arrays.asList(keys, values), admitted);
    assertEquals(Collections.emptyList(), warnings);
    // a final refusal the selection does not mirror: the whole batch, with the whole-batch WARNING
    BitSet dropped = mergeAdmission().mergeDrops(warningsTo(warnings), 3, costs, keys, values,
        (k, v) -> {
          throw new IllegalArgumentException("refused");
        });
    assertEquals("{0, 1}", dropped.toString());
    assertEquals(1, warnings.size());
    assertTrue(warnings.get(0), warnings.get(0).startsWith("Map 'm': a split-brain merge batch of"
        + " 2 entries into partition 3 ("));
    assertTrue(warnings.get(0), warnings.get(0).endsWith("none of it is merged; the merge goes on"
        + " with its other batches, and these keys keep what this cluster holds for them"
        + " (rejectedEntries counts the 2). refused"));
  }

  @Test
  public void mergeDrops_retryableRefusal_ofABatchWithDrops_countsAndLogsNothing() {
    List<Data> values = Arrays.asList(data(new byte[11 << 20]), data(new byte[100]));
    List<String> warnings = new ArrayList<>();
    try {
      mergeAdmission().mergeDrops(warningsTo(warnings), 3, costs,
          Arrays.asList(data(1), data(2)), values, (k, v) -> {
            throw new RetryableHazelcastException("later");
          });
      fail("not retried");
    } catch (RetryableHazelcastException expected) {
      assertEquals("later", expected.getMessage());
    }
    assertEquals(0, metrics.getRejectedEntries());
    assertEquals(Collections.emptyList(), warnings);
  }

  /** The whole-batch drop a custom jar before revision 11 asks for (beforeMerge). */
  @Test
  public void admitMerge_finalRefusal_dropsTheBatchWithAWarning_retryableIsThrown() {
    List<Data> values = Arrays.asList(data(new byte[100]), data(new byte[200]));
    List<String> warnings = new ArrayList<>();
    assertTrue(mergeAdmission().admitMerge(warningsTo(warnings), 5, values, () -> { }));
    assertEquals(Collections.emptyList(), warnings);
    assertFalse(mergeAdmission().admitMerge(warningsTo(warnings), 5, values, () -> {
      throw new IllegalArgumentException("refused");
    }));
    assertEquals(1, warnings.size());
    assertTrue(warnings.get(0), warnings.get(0).startsWith("Map 'm': a split-brain merge batch of"
        + " 2 entries into partition 5 ("));
    try {
      mergeAdmission().admitMerge(warningsTo(warnings), 5, values, () -> {
        throw new RetryableHazelcastException("later");
      });
      fail("not retried");
    } catch (RetryableHazelcastException expected) {
      assertEquals(1, warnings.size());
    }
  }

  /**
   * A partition's batch (putAll, merge) travels as one: the client frame holds every value of
   * the partition, the owner stores them all, and one backup operation carries them all in one
   * packet. Values that each fit the allowance but together do not are refused whole.
   */
  @Test
  public void inFlight_batchWhoseValuesTogetherExceedTheShare_isRefusedWhole() {
    List<Data> values = Arrays.asList(data(new byte[5 << 20]), data(new byte[5 << 20]),
        data(new byte[5 << 20])); // 5 x 5 MB = 25 MB each < 64 MB; 5 x 15 MB = 75 MB > 64 MB
    for (Data value : values) {
      inFlight(25).checkInFlight(value);
    }
    long together = 3L * values.get(0).totalSize();
    try {
      inFlight(25).admit(costs, records::get, Arrays.asList(data(1), data(2), data(3)), values,
          () -> catchUps.incrementAndGet());
      fail("accepted");
    } catch (IllegalArgumentException e) {
      assertEquals("Map 'big': the 3 values of this write (one partition's batch of a putAll or"
          + " merge, which travels and is backed up as one), " + together + " serialized bytes"
          + " together, take about " + 5 * together + " bytes of heap in flight on a member,"
          + " (3 + 2 x 1 backups) x their size (the array they arrive in and its copy out of a"
          + " member's packet, the stored copies, and one serialized packet of them per backup),"
          + " more than 25% of this member's max heap of 268435456 bytes"
          + " (hazelcast.map.eviction.inflight.heap.percent=25). Nothing of the write was stored."
          + " Write fewer values at once (for a split-brain merge: a smaller batch-size in the"
          + " map's merge policy), store smaller values, give the members more heap (-Xmx), or"
          + " raise hazelcast.map.eviction.inflight.heap.percent.", e.getMessage());
    }
    assertEquals(0, catchUps.get());
    assertEquals("each entry of the refused batch", 3, metrics.getRejectedEntries());
    // two of them together fit: 5 x 10 MB = 50 MB
    inFlight(25).checkInFlight(values.subList(0, 2));
    assertEquals(3, metrics.getRejectedEntries());
  }

  /**
   * A multi-key entry processor's values of one partition (offloaded MapStore steps) are held
   * together until stored: values that each fit but together do not are refused whole, by the
   * same rule as a putAll batch, with a message that names the entry processor.
   */
  @Test
  public void inFlight_computedBatchWhoseValuesTogetherExceedTheShare_isRefusedWhole() {
    List<Data> values = Arrays.asList(data(new byte[5 << 20]), data(new byte[5 << 20]),
        data(new byte[5 << 20]));
    long together = 3L * values.get(0).totalSize();
    try {
      inFlight(25).checkComputedInFlight(values);
      fail("accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().startsWith("Map 'big': the 3 values of this write"
          + " (the values one partition's keys of a multi-key entry processor computed, which are"
          + " held together until they are stored), " + together + " serialized bytes together,"
          + " take about " + 5 * together + " bytes of heap in flight on a member,"));
      assertTrue(e.getMessage(), e.getMessage().endsWith("Nothing of the write was stored. Run the"
          + " entry processor on fewer keys at once, store smaller values, give the members more"
          + " heap (-Xmx), or raise hazelcast.map.eviction.inflight.heap.percent."));
    }
    assertEquals("each value of the refused batch", 3, metrics.getRejectedEntries());
    inFlight(25).checkComputedInFlight(values.subList(0, 2));
    inFlight(25).checkComputedInFlight(Collections.singletonList(data(new byte[12 << 20])));
    assertEquals(3, metrics.getRejectedEntries());
  }

  @Test
  public void inFlight_valueOverTheMapsLimit_keepsTheOversizedRefusal() {
    try {
      new Admission("m", LIMIT, "USED_HEAP_SIZE 10", true, () -> 0, metrics, 1, 1, 256L << 20)
          .admit(costs, records::get, Collections.singletonList(data(1)),
              Collections.singletonList(data(new byte[11 << 20])), () -> { });
      fail("accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("more than the map's whole per-member"));
    }
  }

  @Test
  public void inFlightBytes_countsOneSerializedCopyMoreFromTwoBackupsOn() {
    assertEquals(3 * 100, Admission.inFlightBytes(100, 0));
    assertEquals(5 * 100, Admission.inFlightBytes(100, 1));
    assertEquals(8 * 100, Admission.inFlightBytes(100, 2));
    assertEquals(10 * 100, Admission.inFlightBytes(100, 3));
    Admission twoBackups = new Admission("big", 1L << 40, "USED_HEAP_SIZE 1048576", true,
        () -> 0, metrics, 2, 25, 256L << 20);
    twoBackups.checkInFlight(data(new byte[(8 << 20) - 64])); // 8 x just under 8 MB < 64 MB
    try {
      twoBackups.checkInFlight(data(new byte[8 << 20]));
      fail("accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(" (4 + 2 x 2 backups) x its size "));
    }
  }
  /**
   * A member's own putAll to another member: partitions' batches go together while their sum is
   * within the rule (256 MB at 25%, one backup: 5 x the sum up to 64 MB, so 12.8 MB), a batch
   * over it goes alone; all within it, or one batch, stay one operation.
   */
  @Test
  public void operationEnds_runsOfBatchesWithinTheRule_aBatchOverItAlone() {
    long mb = 1 << 20;
    Admission a = inFlight(25);
    assertNull(a.operationEnds(new long[] {4 * mb, 4 * mb, 4 * mb}));
    assertNull(a.operationEnds(new long[] {100 * mb}));
    assertNull(a.operationEnds(new long[0]));
    // 6 + 6 fit (60 MB), a third does not (90 MB); 20 alone; 1 + 1 then
    assertArrayEquals(new int[] {2, 3, 4, 6},
        a.operationEnds(new long[] {6 * mb, 6 * mb, 6 * mb, 20 * mb, mb, mb}));
    // twenty 10 MB batches: one per run
    long[] twenty = new long[20];
    Arrays.fill(twenty, 10 * mb);
    int[] ends = a.operationEnds(twenty);
    assertEquals(20, ends.length);
    for (int i = 0; i < 20; i++) {
      assertEquals(i + 1, ends[i]);
    }
    // exactly at the rule still fits
    long share = (256L << 20) / 4 / 5;
    assertNull(a.operationEnds(new long[] {share / 2, share - share / 2}));
    assertArrayEquals(new int[] {1, 2}, a.operationEnds(new long[] {share / 2, share - share / 2 + 1}));
  }

  @Test
  public void operationEnds_withTheSettingOff_keepsOneOperation() {
    long[] twenty = new long[20];
    Arrays.fill(twenty, 100L << 20);
    assertNull(inFlight(0).operationEnds(twenty));
  }
}
