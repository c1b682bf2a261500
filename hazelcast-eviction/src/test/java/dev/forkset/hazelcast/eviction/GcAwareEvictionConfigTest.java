package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.config.InvalidConfigurationException;
import java.util.HashMap;
import java.util.Map;
import org.junit.Test;

public class GcAwareEvictionConfigTest {
  @Test
  public void defaults() {
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
    assertEquals(9, GcAwareEvictionConfig.properties().size());
  }

  private static void assertRejected(String name, String value, String... expected) {
    Map<String, String> p = new HashMap<>();
    p.put(name, value);
    try {
      GcAwareEvictionConfig.read(p::get);
      fail(name + "=" + value + " accepted");
    } catch (InvalidConfigurationException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(name));
      for (String s : expected) {
        assertTrue(e.getMessage(), e.getMessage().contains(s));
      }
    }
  }

  @Test
  public void malformedValuesNameThePropertyAndTheAcceptedValues() {
    assertRejected("hazelcast.map.eviction.gc.model", "g2", "g1, zgc, zgc-generational, shenandoah");
    assertRejected("hazelcast.map.eviction.gc.region.size", "3m", "power of two");
    assertRejected("hazelcast.map.eviction.gc.region.size", "lots", "auto, or a size");
    assertRejected("hazelcast.map.eviction.pool.sample.count", "-1", "from 1 to 100000");
    assertRejected("hazelcast.map.eviction.pool.sample.count", "many", "from 1 to 100000");
    assertRejected("hazelcast.map.eviction.pool.size", "65", "sample count");
    assertRejected("hazelcast.map.eviction.reject.oversized", "yes", "true, false");
    assertRejected("hazelcast.map.eviction.backups.follow.owner", "on", "true, false");
    assertRejected("hazelcast.map.eviction.max.micros.per.operation", "0", "from 1");
    assertRejected("hazelcast.map.eviction.entry.overhead", "x", "auto, or a number");
  }

  @Test
  public void sizesWithUnits() {
    Map<String, String> p = new HashMap<>();
    p.put("hazelcast.map.eviction.gc.region.size", "4MB");
    assertEquals(4L << 20, GcAwareEvictionConfig.read(p::get).regionSize);
    p.put("hazelcast.map.eviction.gc.region.size", "512k");
    assertEquals(512L << 10, GcAwareEvictionConfig.read(p::get).regionSize);
  }
}
