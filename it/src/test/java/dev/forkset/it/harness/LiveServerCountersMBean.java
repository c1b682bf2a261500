package dev.forkset.it.harness;

/** The management interface of {@link LiveServerCounters} (a standard MBean). */
public interface LiveServerCountersMBean {
  /**
   * Values of the RegionServer wrapper's getters named like the server bean's attributes
   * ({@code l2CacheHitCount} reads {@code getL2CacheHitCount()}), in order; null while the
   * RegionServer has not registered its metrics yet.
   */
  long[] read(String[] attributes) throws Exception;
}
