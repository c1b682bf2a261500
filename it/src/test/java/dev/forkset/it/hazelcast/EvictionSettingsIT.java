package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.HazelcastLine;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import dev.forkset.it.harness.MemberProcess;
import javax.management.ObjectName;
import org.junit.Test;

/**
 * Settings on real member JVMs of both Hazelcast lines: a malformed setting stops the member at
 * start, naming the property and its accepted values (the JVM exits: no half-started
 * member), and {@code hazelcast.map.eviction.provider: stock} switches a custom member with the
 * module on its class path back to the built-in eviction.
 */
public class EvictionSettingsIT {

  @Test
  public void malformedSetting_stopsTheMemberAtStart() throws Exception {
    malformedSettingsStopTheMember("bad-settings", HazelcastLine.DEFAULT, null);
  }

  @Test
  public void malformedSetting_stopsTheMemberAtStart_oldestLineOnJdk11() throws Exception {
    malformedSettingsStopTheMember("bad-settings-oldest-jdk11", HazelcastLine.OLDEST, Jdks.jdk11());
  }

  @Test
  public void stockValue_switchesTheModuleOff() throws Exception {
    stockValueSwitchesBack("provider-stock", HazelcastLine.DEFAULT, null);
  }

  @Test
  public void stockValue_switchesTheModuleOff_oldestLineOnJdk11() throws Exception {
    stockValueSwitchesBack("provider-stock-oldest-jdk11", HazelcastLine.OLDEST, Jdks.jdk11());
  }

  private static void malformedSettingsStopTheMember(String name, HazelcastLine line, Jdk jdk)
      throws Exception {
    // A provider name nobody registered (checked by the patch) and a module setting out of range
    // (checked by the module): one member each.
    String[][] cases = {
        {"hazelcast.map.eviction.provider", "gc-awre", "Accepted: auto, stock, gc-aware."},
        {"hazelcast.map.eviction.pool.sample.count", "lots",
            "Accepted: an integer from 1 to 100000. Remove it for the default 64."},
    };
    for (String[] c : cases) {
      MemberProcess m = builder(name + "-" + c[0].replaceAll(".*\\.", ""), Flavor.CUSTOM, line,
          jdk, "  " + c[0] + ": " + c[1] + "\n").startExpectingExit(120_000);
      String log = m.logText();
      m.assertRuns(line, jdk);
      assertTrue("the member names " + c[0] + "='" + c[1] + "':\n" + m.logTail(30),
          log.contains(c[0] + "='" + c[1] + "' is not valid."));
      assertTrue("and lists what it accepts (" + c[2] + "):\n" + m.logTail(30),
          log.contains(c[2]));
    }
  }

  private static void stockValueSwitchesBack(String name, HazelcastLine line, Jdk jdk)
      throws Exception {
    try (HazelcastCluster stock = builder(name, Flavor.CUSTOM, line, jdk,
        "  hazelcast.map.eviction.provider: stock\n").start();
        HazelcastCluster auto = builder(name + "-auto", Flavor.CUSTOM, line, jdk, "").start()) {
      MemberProcess off = stock.member(0);
      MemberProcess on = auto.member(0);
      off.assertRuns(line, jdk);
      // Touch the map so the provider, when active, has created its evictor.
      stock.client().getMap("settings").put(1, new byte[1024]);
      auto.client().getMap("settings").put(1, new byte[1024]);
      ObjectName bean = new ObjectName("dev.forkset.hazelcast:type=GcAwareEviction,*");
      assertEquals("with provider=stock the module registers nothing", 0,
          off.jmx().queryNames(bean, null).size());
      assertFalse(off.logText().contains("GC footprint model"));
      assertEquals("with the default (auto) the module is active", 1,
          on.jmx().queryNames(bean, null).size());
      assertTrue(on.logText().contains("GC footprint model"));
    }
  }

  private static HazelcastCluster.Builder builder(String name, Flavor flavor, HazelcastLine line,
      Jdk jdk, String properties) {
    return HazelcastCluster.builder(name).members(1).flavor(flavor).line(line).jdk(jdk)
        .heap("128m").config(EvictionMaps.usedHeapMap("settings", 64, 0, properties));
  }
}
