package dev.forkset.memstore.agent;

/**
 * Called at the start of every {@code ConcurrentSkipListMap.size()} once {@link CslmSizeAgent} has
 * instrumented that method. The agent puts this class on the boot class path, so there is one
 * copy in the JVM and code in any class loader (a probe over the stock jar, another over the
 * custom jar) reaches the same {@link #listener}.
 */
public final class CslmSizeHook {
  /** Told of each call, on the calling thread; null when nobody listens. */
  private static volatile Runnable listener;

  private CslmSizeHook() {}

  /** Invoked by the instrumented {@code ConcurrentSkipListMap.size()}. */
  public static void sizeCalled() {
    Runnable l = listener;
    if (l != null) {
      l.run();
    }
  }

  /** Installs {@code l} (null to stop listening); returns the previous listener. */
  public static synchronized Runnable listen(Runnable l) {
    Runnable previous = listener;
    listener = l;
    return previous;
  }

  /** True when the agent instrumented {@code ConcurrentSkipListMap.size()} in this JVM. */
  public static boolean installed() {
    return Boolean.getBoolean(CslmSizeAgent.INSTALLED_PROPERTY);
  }
}
