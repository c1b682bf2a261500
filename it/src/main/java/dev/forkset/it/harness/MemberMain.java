package dev.forkset.it.harness;

import java.io.IOException;
import java.io.InputStream;

/**
 * Entry point of a member JVM started by {@link HazelcastCluster}. It prints which Hazelcast jar
 * and patches the member runs, halts the JVM when the test JVM goes away (its stdin pipe closes:
 * this reaps members even when the build is killed), then starts Hazelcast from the
 * {@code hazelcast.config} file.
 */
public final class MemberMain {
  /** Exit status when the parent test JVM disappeared. */
  static final int ORPHANED = 97;

  private MemberMain() {}

  public static void main(String[] args) throws Exception {
    Thread watchdog = new Thread(() -> {
      InputStream in = System.in;
      try {
        while (in.read() >= 0) {
          // nothing is sent; read() returns -1 only when the parent closed the pipe or died
        }
      } catch (IOException ignored) {
        // same as end of stream
      }
      System.out.println("forkset-harness: parent test JVM is gone; halting member");
      System.out.flush();
      Runtime.getRuntime().halt(ORPHANED);
    }, "forkset-parent-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();

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
