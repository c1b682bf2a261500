package dev.forkset.hbase.pmem;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.channels.FileChannel;

/**
 * Makes a cache file's channel immune to interrupts, so reads can run on the caller's thread.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Why: a FileChannel operation by a thread whose interrupt is set (or that is interrupted
 *       during it) closes the channel (ClosedByInterruptException), and closing any descriptor
 *       of a file drops this process's POSIX (fcntl) locks on it. RPC handlers, prefetch threads
 *       and BucketCache's writers get interrupted (a region closing, a cancelled prefetch,
 *       shutdown); one such read would end every later read and free the files to a second
 *       engine (the lock is what refuses it, in this module and in the custom jar's stock
 *       engines, patch 0103). The lock stays on the cache file itself, so every lock user keeps
 *       seeing it there; the reads go through the very channel that holds it.
 *   <li>JDK 9+: {@code sun.nio.ch.FileChannelImpl#setUninterruptible()}, the JDK's own switch
 *       for this (the JDK uses it for channels it must not lose). The package {@code sun.nio.ch}
 *       must be exported or opened to the class path
 *       ({@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} or {@code --add-opens ...}, as
 *       the root pom's {@code jdk17.opens} gives the tests; HBase's own scripts do not add it in
 *       every version, so the RegionServer's JVM options must).
 *   <li>JDK 8 has no such switch (checked on the 8u JDK here). There an interrupt reaches the
 *       channel only through the {@code sun.nio.ch.Interruptible} that
 *       {@code AbstractInterruptibleChannel.begin()} registers with the thread, kept in the
 *       channel's private field {@code interruptor} (created on first use when null); that field
 *       is set to one that does nothing, so an interrupt neither closes the channel nor marks it
 *       (end() then throws no ClosedByInterruptException). JDK 8 has no module system, so the
 *       field is reachable; its layout is frozen with that release line.
 *   <li>Both are looked up by reflection so the module stays Java 8 bytecode.
 *   <li>When it cannot be applied the caller falls back to reading on threads nothing
 *       interrupts ({@code Mappings}), slower but equally safe for the lock.
 * </ol>
 */
final class Uninterruptible {
  private static final Method SET = find();

  /** Tests set it to run the store as on a JVM where the switch cannot be reached. */
  static volatile boolean unavailableForTests;

  private Uninterruptible() {
  }

  private static Method find() {
    try {
      return Class.forName("sun.nio.ch.FileChannelImpl").getMethod("setUninterruptible");
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return null;
    }
  }

  /**
   * Makes {@code ch} uninterruptible.
   * @return null when done, else why not (for the log)
   */
  static String apply(FileChannel ch) {
    if (unavailableForTests) {
      return "made unavailable by a test";
    }
    if (SET == null) {
      return jdk8(ch);
    }
    if (!SET.getDeclaringClass().isInstance(ch)) {
      return "the channel is a " + ch.getClass().getName() + ", not a FileChannelImpl";
    }
    try {
      SET.invoke(ch);
      return null;
    } catch (IllegalAccessException | RuntimeException e) {
      // JDK 9+ without --add-exports/--add-opens java.base/sun.nio.ch=ALL-UNNAMED.
      return "sun.nio.ch is not exported to the class path (" + e + ")";
    } catch (InvocationTargetException e) {
      return "setUninterruptible failed: " + e.getCause();
    }
  }

  /** JDK 8: the channel's interruptor replaced by one that does nothing (note 3). */
  private static String jdk8(FileChannel ch) {
    try {
      Class<?> interruptible = Class.forName("sun.nio.ch.Interruptible");
      Object ignore = java.lang.reflect.Proxy.newProxyInstance(interruptible.getClassLoader(),
          new Class<?>[] {interruptible}, (proxy, method, args) -> {
            switch (method.getName()) {
              case "interrupt":
                return null; // the thread's interrupt status stays set for its own code
              case "hashCode":
                return System.identityHashCode(proxy);
              case "equals":
                return proxy == args[0];
              case "toString":
                return "pmem cache: interrupts ignored";
              default:
                throw new UnsupportedOperationException(method.toString());
            }
          });
      java.lang.reflect.Field f = java.nio.channels.spi.AbstractInterruptibleChannel.class
          .getDeclaredField("interruptor");
      if (f.getType() != interruptible) {
        return "AbstractInterruptibleChannel.interruptor is a " + f.getType().getName();
      }
      f.setAccessible(true);
      f.set(ch, ignore);
      return null;
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return "this JDK has no sun.nio.ch.FileChannelImpl#setUninterruptible and its channels'"
          + " interruptor cannot be replaced (" + e + ")";
    }
  }
}
