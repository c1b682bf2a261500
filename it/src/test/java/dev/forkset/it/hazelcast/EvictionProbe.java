package dev.forkset.it.hazelcast;

import dev.forkset.it.harness.MemberProcess;
import java.util.Set;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/** Reads a member's gc-aware eviction MBean (dev.forkset.hazelcast:type=GcAwareEviction) over JMX. */
final class EvictionProbe {
  private final MemberProcess member;

  EvictionProbe(MemberProcess member) {
    this.member = member;
  }

  private ObjectName name(MBeanServerConnection c) throws Exception {
    Set<ObjectName> names = c.queryNames(new ObjectName("dev.forkset.hazelcast:type=GcAwareEviction,*"), null);
    if (names.isEmpty()) {
      throw new AssertionError(member.name() + " has no GcAwareEviction MBean: is the module active?");
    }
    return names.iterator().next();
  }

  long attribute(String attribute) throws Exception {
    MBeanServerConnection c = member.jmx();
    return (Long) c.getAttribute(name(c), attribute);
  }

  String model() throws Exception {
    MBeanServerConnection c = member.jmx();
    return (String) c.getAttribute(name(c), "Model");
  }

  long evictions() throws Exception {
    return attribute("EvictionCount");
  }

  long mapCost(String map) throws Exception {
    MBeanServerConnection c = member.jmx();
    return (Long) c.invoke(name(c), "mapCost", new Object[] {map}, new String[] {String.class.getName()});
  }

  long mapEntries(String map) throws Exception {
    MBeanServerConnection c = member.jmx();
    return (Long) c.invoke(name(c), "mapEntries", new Object[] {map}, new String[] {String.class.getName()});
  }
}
