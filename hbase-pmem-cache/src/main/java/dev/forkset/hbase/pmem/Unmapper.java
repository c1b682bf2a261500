package dev.forkset.hbase.pmem;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;

/**
 * Unmaps a {@link MappedByteBuffer} now instead of when the garbage collector finds it: for a
 * start that failed before it served anything, for the MAP_SYNC probe, and for a cache stopped
 * when no reader held one of its blocks any more. A cache whose blocks a reader may still hold
 * is never unmapped this way (see {@link Mappings}).
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>JDK 9+: {@code sun.misc.Unsafe.invokeCleaner(ByteBuffer)} (module jdk.unsupported, no
 *       --add-opens needed), the path Netty's {@code CleanerJava9} and Lucene's
 *       {@code MMapDirectory} take. JDK 8: {@code ((sun.nio.ch.DirectBuffer) b).cleaner().clean()},
 *       as Netty's {@code CleanerJava6} does. Both are
 *       looked up once by reflection, so the class stays Java 8 bytecode and loads everywhere.
 *   <li>Where neither is available {@link #unmap} returns false and the buffer is left to the
 *       garbage collector, as before; the caller logs that once.
 *   <li>Only the buffer {@code FileChannel.map} returned may be passed (invokeCleaner refuses
 *       duplicates and slices). Touching the buffer or any slice of it afterwards reads unmapped
 *       memory and crashes the JVM: callers unmap only when no reader can hold a slice.
 * </ol>
 */
final class Unmapper {
  /** JDK 9+: Unsafe instance and its invokeCleaner method; null elsewhere. */
  private static final Object UNSAFE;
  private static final Method INVOKE_CLEANER;
  /** JDK 8: DirectBuffer.cleaner() and Cleaner.clean(); null elsewhere. */
  private static final Method CLEANER;
  private static final Method CLEAN;
  /** Why explicit unmapping is unavailable, or null. */
  static final String UNAVAILABLE;

  static {
    Object unsafe = null;
    Method invokeCleaner = null;
    Method cleaner = null;
    Method clean = null;
    String why = null;
    try {
      Class<?> c = Class.forName("sun.misc.Unsafe");
      invokeCleaner = c.getMethod("invokeCleaner", ByteBuffer.class);
      Field f = c.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      unsafe = f.get(null);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      invokeCleaner = null; // JDK 8 has no invokeCleaner
      unsafe = null;
      try {
        cleaner = Class.forName("sun.nio.ch.DirectBuffer").getMethod("cleaner");
        clean = Class.forName("sun.misc.Cleaner").getMethod("clean");
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e2) {
        cleaner = null;
        clean = null;
        why = "neither sun.misc.Unsafe.invokeCleaner (" + e + ") nor sun.misc.Cleaner (" + e2
            + ") is available";
      }
    }
    UNSAFE = unsafe;
    INVOKE_CLEANER = invokeCleaner;
    CLEANER = cleaner;
    CLEAN = clean;
    UNAVAILABLE = why;
  }

  private Unmapper() {}

  /**
   * Unmaps {@code b} now.
   * @return false when this JVM offers no way to (the garbage collector unmaps it later)
   */
  static boolean unmap(MappedByteBuffer b) {
    if (b == null || !b.isDirect()) {
      return false;
    }
    try {
      if (INVOKE_CLEANER != null) {
        INVOKE_CLEANER.invoke(UNSAFE, b);
        return true;
      }
      if (CLEANER != null) {
        Object cleaner = CLEANER.invoke(b);
        if (cleaner != null) {
          CLEAN.invoke(cleaner);
          return true;
        }
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
    return false;
  }
}
