package dev.forkset.it.harness;

/**
 * Main class of a member JVM started by {@link HazelcastCluster} (through the child-jvm
 * launcher, which reaps it when the test JVM goes away). It prints which Hazelcast jar and patches
 * the member runs, then starts Hazelcast from the {@code hazelcast.config} file.
 */
public final class MemberMain {
  private MemberMain() {}

  public static void main(String[] args) throws Exception {
    Class<?> hz = Class.forName("com.hazelcast.core.Hazelcast");
    java.nio.file.Path jar = ForksetJars.codeSource(hz);
    System.out.println("forkset-harness: hazelcast from " + jar + " patches="
        + ForksetJars.manifestAttribute(jar, ForksetJars.PATCHES) + " java="
        + System.getProperty("java.version"));
    try {
      hz.getMethod("newHazelcastInstance").invoke(null);
    } catch (java.lang.reflect.InvocationTargetException e) {
      // As if called directly (like Hazelcast's own member starter): the start failure itself
      // ends the main thread, and the JVM exits unless Hazelcast left threads running.
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
  }
}
