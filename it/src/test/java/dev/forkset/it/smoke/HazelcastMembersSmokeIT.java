package dev.forkset.it.smoke;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.map.IMap;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.ForksetJars;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.MemberProcess;
import org.junit.Test;

/** Members run in their own JVMs on the chosen jar, and the harness reports a member's death. */
public class HazelcastMembersSmokeIT {

  @Test
  public void customMembers_runCustomJar_andServeAClient() throws Exception {
    String patches = ForksetJars.manifestAttribute(
        ForksetJars.jar("forkset.hazelcast.custom.jar"), ForksetJars.PATCHES);
    System.out.println("custom hazelcast jar patches: " + patches);
    assertTrue("custom jar lists its patches", patches != null && !patches.isEmpty());
    try (HazelcastCluster cluster = HazelcastCluster.builder("smoke-custom").members(2)
        .flavor(Flavor.CUSTOM).heap("128m").jvmArgs("-XX:+UseG1GC").start()) {
      IMap<String, String> map = cluster.client().getMap("smoke");
      for (int i = 0; i < 1000; i++) {
        map.put("k" + i, "v" + i);
      }
      assertEquals(1000, map.size());
      assertEquals("v999", map.get("k999"));
      assertEquals(2, cluster.client().getCluster().getMembers().size());
      for (MemberProcess m : cluster.members()) {
        assertTrue(m.name() + " logs the applied patches",
            m.logText().contains("patches=" + patches));
        assertTrue(m.name() + " has a GC log", m.gcLogFile().toFile().length() > 0);
      }
      cluster.assertAllAlive();
    }
  }

  @Test
  public void killedMember_isReportedWithItsLog() throws Exception {
    try (HazelcastCluster cluster = HazelcastCluster.builder("smoke-kill").members(2)
        .flavor(Flavor.STOCK).heap("128m").start()) {
      assertTrue(cluster.member(0).logText().contains("patches=null"));
      cluster.member(1).kill();
      try {
        cluster.assertAllAlive();
        fail("a killed member must be reported");
      } catch (AssertionError expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("member-2-stock"));
        assertTrue(expected.getMessage(), expected.getMessage().contains("last "));
      }
    }
  }

  @Test
  public void memberOutOfMemory_isReportedAsOutOfMemory() throws Exception {
    try (HazelcastCluster cluster = HazelcastCluster.builder("smoke-oome").members(1)
        .flavor(Flavor.STOCK).heap("96m").jvmArgs("-XX:+UseSerialGC").start()) {
      IMap<Integer, byte[]> map = cluster.client().getMap("unbounded");
      byte[] value = new byte[4 << 20];
      try {
        for (int i = 0; i < 100 && cluster.member(0).isAlive(); i++) {
          map.put(i, value);
        }
      } catch (RuntimeException clientSideFailure) {
        // the member went away under the client
      }
      // The member exits on its OutOfMemoryError (-XX:+ExitOnOutOfMemoryError), possibly after
      // the client saw its last put or lost its connection: wait for the exit (at most 60 s).
      long deadline = System.nanoTime() + 60_000_000_000L;
      while (cluster.member(0).isAlive() && System.nanoTime() - deadline < 0) {
        Thread.sleep(50);
      }
      assertFalse("an unbounded map of 400 MB must kill a 96 MB member",
          cluster.member(0).isAlive());
      try {
        cluster.assertAllAlive();
        fail("a dead member must be reported");
      } catch (AssertionError expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("OutOfMemoryError"));
      }
    }
  }
}
