package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.config.Config;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.config.MapConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import java.util.UUID;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The in-flight rule on a map without eviction with one real member in this JVM (no test kit, so
 * {@link ModuleOnJdk8Test} runs it on the oldest line too, where {@code MapContainer}, whose
 * backup count the rule reads, is a class and not an interface). The setting at 1%; the map
 * has one backup configured (none sent with one member: the rule counts the configured ones).
 */
public class MapWithoutEvictionOnOneMemberTest {
  private HazelcastInstance member;
  /** Over the allowance with one backup (5 x size), within it without (3 x size). */
  private final int overWithOneBackup = (int) (Runtime.getRuntime().maxMemory() / 100 / 5)
      + (1 << 18);

  @Before
  public void start() {
    assertTrue("3 x the value within 1% of the max heap",
        3L * overWithOneBackup < Runtime.getRuntime().maxMemory() / 100);
    Config config = new Config();
    config.setClusterName("without-eviction-" + UUID.randomUUID());
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.partition.count", "31");
    config.setProperty(GcAwareEvictionConfig.INFLIGHT_HEAP_PERCENT.name, "1");
    config.getNetworkConfig().setPort(15701).setPortAutoIncrement(true);
    config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    config.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
    config.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
    config.addMapConfig(new MapConfig("plain").setInMemoryFormat(InMemoryFormat.BINARY)
        .setBackupCount(1));
    member = Hazelcast.newHazelcastInstance(config);
  }

  @After
  public void stop() {
    if (member != null) {
      member.shutdown();
    }
  }

  private void assertRefused(String map, Runnable write) {
    try {
      write.run();
      fail("accepted a value of " + overWithOneBackup + " bytes on a map with one backup");
    } catch (RuntimeException e) {
      Throwable t = e;
      while (t != null && !(t instanceof IllegalArgumentException)) {
        t = t.getCause();
      }
      assertNotNull("an IllegalArgumentException, got " + e, t);
      assertTrue(t.getMessage(), t.getMessage().startsWith("Map '" + map + "': a value of ")
          && t.getMessage().contains("(3 + 2 x 1 backups)"));
    }
  }

  @Test
  public void valueOverTheRule_isRefused_andOneWithinItStored() {
    IMap<Integer, byte[]> map = member.getMap("plain");
    assertRefused("plain", () -> map.put(1, new byte[overWithOneBackup]));
    assertFalse(map.containsKey(1));
    map.put(2, new byte[overWithOneBackup / 2]);
    assertEquals(overWithOneBackup / 2, map.get(2).length);
  }

  /** The backups counted are the running map's, not those of a config added later for it. */
  @Test
  public void configAddedAfterTheMapRuns_doesNotChangeTheBackupsTheRuleCounts() {
    IMap<Integer, byte[]> map = member.getMap("late");
    map.put(1, new byte[16]);
    member.getConfig().addMapConfig(new MapConfig("late").setBackupCount(0));
    assertRefused("late", () -> map.put(2, new byte[overWithOneBackup]));
    assertFalse(map.containsKey(2));
  }
}
