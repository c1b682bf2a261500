package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

public class PmemCacheConfigTest {
  private static final long MIB = 1L << 20;

  private static PmemCacheConfig parse(String io, String... kv) {
    Configuration c = new Configuration(false);
    for (int i = 0; i < kv.length; i += 2) {
      c.set(kv[i], kv[i + 1]);
    }
    return PmemCacheConfig.parse(io, 8 * MIB, c);
  }

  private static void assertRejected(String key, String value, String io) {
    try {
      parse(io, key, value);
      fail(key + "=" + value + " was accepted");
    } catch (IllegalArgumentException e) {
      String m = e.getMessage();
      assertTrue(m, m.startsWith(key + "='" + value + "' is not valid. Accepted: "));
      assertTrue(m, m.endsWith("."));
    }
  }

  @Test
  public void parse_givesTheDefaults() {
    PmemCacheConfig c = parse("pmem:/tmp/a/cache");
    assertEquals(1L << 30, c.mappingSize());
    assertEquals(PmemCacheConfig.MapSync.AUTO, c.mapSync());
    assertEquals(10_000, c.lockWaitMillis());
    assertEquals("MD5", c.mapDigestAlgorithm());
    assertNull(c.persistencePath());
    assertFalse("reads of the mappings must be opt-in", c.readMapped());
    assertTrue(parse("pmem:/tmp/a/cache", PmemCacheConfig.READ.name, " Mapped ").readMapped());
    assertFalse(parse("pmem:/tmp/a/cache", PmemCacheConfig.READ.name, "copy").readMapped());
  }

  @Test
  public void parse_readsSizesAndDurationsWithUnits() {
    PmemCacheConfig c = parse("pmem:/tmp/a/cache", PmemCacheConfig.MAPPING_SIZE.name, "64m",
        PmemCacheConfig.LOCK_WAIT.name, "2s");
    assertEquals(64 * MIB, c.mappingSize());
    assertEquals(2000, c.lockWaitMillis());
    assertEquals(250, parse("pmem:/tmp/a/cache", PmemCacheConfig.LOCK_WAIT.name, "250ms")
        .lockWaitMillis());
    assertEquals(0, parse("pmem:/tmp/a/cache", PmemCacheConfig.LOCK_WAIT.name, "0")
        .lockWaitMillis());
    assertEquals(4 * MIB, parse("pmem:/tmp/a/cache", PmemCacheConfig.MAPPING_SIZE.name,
        "4194304").mappingSize());
  }

  @Test
  public void parse_rejectsBadValuesNamingKeyValueAndAcceptedValues() {
    String io = "pmem:/tmp/a/cache";
    assertRejected(PmemCacheConfig.MAPPING_SIZE.name, "3000000", io);
    assertRejected(PmemCacheConfig.MAPPING_SIZE.name, "2g", io);
    assertRejected(PmemCacheConfig.MAPPING_SIZE.name, "1m", io);
    assertRejected(PmemCacheConfig.MAPPING_SIZE.name, "big", io);
    assertRejected(PmemCacheConfig.MAP_SYNC.name, "sometimes", io);
    assertRejected(PmemCacheConfig.LOCK_WAIT.name, "soon", io);
    assertRejected(PmemCacheConfig.LOCK_WAIT.name, "11m", io);
    assertRejected(PmemCacheConfig.LOCK_WAIT.name, "-5s", io);
    assertRejected(PmemCacheConfig.MAP_DIGEST.name, "NOPE-512", io);
    assertRejected(PmemCacheConfig.READ.name, "zero-copy", io);
    Configuration c = new Configuration(false);
    c.set(PmemCacheConfig.ENGINE.name, "other");
    try {
      PmemCacheConfig.moduleSelected(c);
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().startsWith(
          PmemCacheConfig.ENGINE.name + "='other' is not valid. Accepted: module, stock."));
    }
  }

  @Test
  public void parse_rejectsRelativeEmptyAndDuplicatePathsNamingTheIoengineKey() {
    for (String io : new String[] {"pmem:cache", "pmem:/a/c,", "pmem:", "pmem:/a/c,/a/./c"}) {
      try {
        parse(io);
        fail(io);
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().startsWith(
            PmemCacheConfig.IOENGINE.name + "='" + io + "' is not valid. Accepted: "));
      }
    }
  }

  @Test
  public void parse_resolvesPathsAndThePersistencePathCanonically() {
    Configuration c = new Configuration(false);
    PmemCacheConfig p = PmemCacheConfig.parse("pmem:/tmp/a/../b/cache", 8 * MIB,
        "/tmp/x/./map", c);
    assertEquals(new File("/tmp/b/cache"), p.paths().get(0));
    assertEquals(new File("/tmp/x/map"), p.persistencePath());
    try {
      PmemCacheConfig.parse("pmem:/tmp/a", 8 * MIB, "relative/map", c);
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().startsWith(
          PmemCacheConfig.PERSISTENT_PATH.name + "='relative/map' is not valid."));
    }
  }

  @Test
  public void moduleSelected_isTheDefault() {
    assertTrue(PmemCacheConfig.moduleSelected(new Configuration(false)));
    Configuration c = new Configuration(false);
    c.set(PmemCacheConfig.ENGINE.name, " Stock ");
    assertFalse(PmemCacheConfig.moduleSelected(c));
  }

  @Test
  public void settings_listEveryKeyOnceWithItsDocumentation() {
    java.util.Set<String> names = new java.util.HashSet<>();
    for (PmemCacheConfig.Setting s : PmemCacheConfig.settings()) {
      assertTrue(s.name, names.add(s.name));
      assertFalse(s.name, s.doc.isEmpty() || s.accepted.isEmpty() || s.defaultValue.isEmpty());
      if (!s.hbaseKey) {
        assertTrue(s.name, s.name.startsWith("hbase.bucketcache.pmem."));
      }
      if (s.name.contains("wait") || s.name.contains("interval")) {
        assertTrue("durations end in .ms: " + s.name, s.hbaseKey || s.name.endsWith(".ms"));
      }
    }
  }
}
