package dev.forkset.it.smoke;

import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;

/**
 * Stands in for a test JVM that dies mid-test: starts one member, prints its pid, then waits to
 * be killed. Run by {@link MemberReapingIT}.
 */
public final class OrphanLauncher {
  private OrphanLauncher() {}

  public static void main(String[] args) throws Exception {
    HazelcastCluster cluster = HazelcastCluster.builder("smoke-orphan").members(1)
        .flavor(Flavor.STOCK).heap("96m").start();
    System.out.println("MEMBER_PID=" + cluster.member(0).pid());
    System.out.flush();
    Thread.sleep(600_000);
  }
}
