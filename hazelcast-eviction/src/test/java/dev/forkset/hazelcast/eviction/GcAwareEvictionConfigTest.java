package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.config.InvalidConfigurationException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.Test;

public class GcAwareEvictionConfigTest {
  @Test
  public void read_nothingSet_givesTheDocumentedDefaults() {
    GcAwareEvictionConfig c = GcAwareEvictionConfig.read(n -> null);
    assertEquals("auto", c.gcModel);
    assertEquals(0, c.regionSize);
    assertEquals(64, c.sampleCount);
    assertEquals(4, c.poolSize);
    assertEquals(20000, c.maxEvictionsPerOperation);
    assertEquals(100_000_000L, c.maxNanosPerOperation);
    assertTrue(c.rejectOversized);
    assertFalse(c.backupsFollowOwner);
    assertEquals(-1, c.entryOverhead);
    assertEquals(-1, c.chunkedValues);
    assertEquals(50, c.inFlightHeapPercent);
    assertEquals(12, GcAwareEvictionConfig.settings().size());
    Set<String> names = new HashSet<>();
    for (GcAwareEvictionConfig.Setting s : GcAwareEvictionConfig.settings()) {
      assertTrue(s.name, names.add(s.name));
      assertTrue(s.name, s.name.startsWith("hazelcast.map.eviction."));
      assertFalse(s.name, s.doc.isEmpty() || s.accepted.isEmpty() || s.defaultValue.isEmpty());
    }
  }

  @Test
  public void read_everyDefault_isAccepted() {
    Map<String, String> p = new HashMap<>();
    for (GcAwareEvictionConfig.Setting s : GcAwareEvictionConfig.settings()) {
      p.put(s.name, s.defaultValue);
    }
    GcAwareEvictionConfig.read(p::get);
  }

  private static void assertRejected(String name, String value, String accepted, String fix) {
    Map<String, String> p = new HashMap<>();
    p.put(name, value);
    try {
      GcAwareEvictionConfig.read(p::get);
      fail(name + "=" + value + " accepted");
    } catch (InvalidConfigurationException e) {
      assertEquals(name + "='" + value + "' is not valid. Accepted: " + accepted + ". " + fix,
          e.getMessage());
    }
  }

  @Test
  public void inFlightHeapPercent_offOrAPercent() {
    Map<String, String> p = new HashMap<>();
    p.put(GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name, "OFF");
    assertEquals(0, GcAwareEvictionConfig.read(p::get).inFlightHeapPercent);
    p.put(GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name, "100");
    assertEquals(100, GcAwareEvictionConfig.read(p::get).inFlightHeapPercent);
    for (String bad : new String[] {"0", "101", "-5", "25%", "half"}) {
      assertRejected("hazelcast.map.eviction.inflight.heap.percent", bad,
          "an integer from 1 to 100, or off", "Remove it for the default 50.");
    }
  }

  @Test
  public void chunkedValues_autoOffOrAPowerOfTwoChunkSize() {
    Map<String, String> p = new HashMap<>();
    p.put(GcAwareEvictionConfig.CHUNKED_VALUES.name, "off");
    assertEquals(0, GcAwareEvictionConfig.read(p::get).chunkedValues);
    p.put(GcAwareEvictionConfig.CHUNKED_VALUES.name, "16");
    assertEquals(16, GcAwareEvictionConfig.read(p::get).chunkedValues);
    String accepted = "auto, off, or a chunk size in bytes: a power of two from 16 to 1073741824";
    String fix = "Remove it for the default auto.";
    assertRejected("hazelcast.map.eviction.chunked.values", "24", accepted, fix);
    assertRejected("hazelcast.map.eviction.chunked.values", "8", accepted, fix);
    assertRejected("hazelcast.map.eviction.chunked.values", "yes", accepted, fix);
  }

  @Test
  public void read_badValue_namesTheSettingTheValueWhatIsAcceptedAndTheFix() {
    assertRejected("hazelcast.map.eviction.gc.model", "g2",
        "auto, g1, zgc, zgc-generational, shenandoah, parallel, serial, conservative",
        "Remove it for the default auto.");
    assertRejected("hazelcast.map.eviction.gc.region.size", "3m",
        "auto, or a power of two from 64k to 512m such as 4194304, 4m, 4MB",
        "Remove it for the default auto.");
    assertRejected("hazelcast.map.eviction.gc.region.size", "lots",
        "auto, or a power of two from 64k to 512m such as 4194304, 4m, 4MB",
        "Remove it for the default auto.");
    assertRejected("hazelcast.map.eviction.pool.sample.count", "-1",
        "an integer from 1 to 100000", "Remove it for the default 64.");
    assertRejected("hazelcast.map.eviction.pool.sample.count", "lots",
        "an integer from 1 to 100000", "Remove it for the default 64.");
    assertRejected("hazelcast.map.eviction.pool.size", "65",
        "an integer from 1 to the sample count (64)",
        "Remove it for the default 4, or raise hazelcast.map.eviction.pool.sample.count.");
    assertRejected("hazelcast.map.eviction.reject.oversized", "yes", "true, false",
        "Remove it for the default true.");
    assertRejected("hazelcast.map.eviction.backups.follow.owner", "on", "true, false",
        "Remove it for the default false.");
    assertRejected("hazelcast.map.eviction.max.micros.per.operation", "0",
        "an integer from 1 to 60000000", "Remove it for the default 100000.");
    assertRejected("hazelcast.map.eviction.entry.overhead", "x",
        "auto, or a number of bytes from 0 to 4096", "Remove it for the default auto.");
  }

  @Test
  public void read_regionSizesWithUnits_areBytes() {
    Map<String, String> p = new HashMap<>();
    p.put("hazelcast.map.eviction.gc.region.size", "4MB");
    assertEquals(4L << 20, GcAwareEvictionConfig.read(p::get).regionSize);
    p.put("hazelcast.map.eviction.gc.region.size", "512k");
    assertEquals(512L << 10, GcAwareEvictionConfig.read(p::get).regionSize);
  }
}
