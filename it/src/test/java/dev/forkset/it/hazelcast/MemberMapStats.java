package dev.forkset.it.hazelcast;

import dev.forkset.it.harness.MemberProcess;
import java.util.Set;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/**
 * One member's share of a map, from Hazelcast's own IMap MBean (members need
 * {@code hazelcast.jmx: true}, and {@code hazelcast.jmx.update.interval.seconds: 0} for values
 * that are not up to 5 s old). Works on stock and custom members alike: on a custom member the
 * costs are the module's modelled costs, as its estimator feeds the record stores.
 */
final class MemberMapStats {
  final long ownedEntries;
  final long backupEntries;
  final long ownedCost;
  final long backupCost;

  private MemberMapStats(long ownedEntries, long backupEntries, long ownedCost, long backupCost) {
    this.ownedEntries = ownedEntries;
    this.backupEntries = backupEntries;
    this.ownedCost = ownedCost;
    this.backupCost = backupCost;
  }

  static MemberMapStats of(MemberProcess member, String map) throws Exception {
    MBeanServerConnection c = member.jmx();
    Set<ObjectName> names =
        c.queryNames(new ObjectName("com.hazelcast:type=IMap,name=" + map + ",*"), null);
    if (names.isEmpty()) {
      throw new AssertionError("no IMap MBean for " + map + " on " + member.name()
          + " (hazelcast.jmx: true?)");
    }
    ObjectName n = names.iterator().next();
    return new MemberMapStats((Long) c.getAttribute(n, "localOwnedEntryCount"),
        (Long) c.getAttribute(n, "localBackupEntryCount"),
        (Long) c.getAttribute(n, "localOwnedEntryMemoryCost"),
        (Long) c.getAttribute(n, "localBackupEntryMemoryCost"));
  }

  /** Owned plus backup cost: what a used-heap limit is compared with on this member. */
  long cost() {
    return ownedCost + backupCost;
  }

  long entries() {
    return ownedEntries + backupEntries;
  }

  @Override
  public String toString() {
    return ownedEntries + " owned + " + backupEntries + " backup entries, "
        + (cost() >> 10) + " KB";
  }
}
