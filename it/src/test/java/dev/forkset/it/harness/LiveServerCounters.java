package dev.forkset.it.harness;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import javax.management.ObjectName;
import org.apache.hadoop.hbase.regionserver.MetricsRegionServerWrapper;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;

/**
 * The RegionServer's counters as they are now, over JMX, for a test in another JVM: an MBean the
 * RegionServer JVM of a {@link RegionServerProcess} registers at start.
 *
 * <p>The RegionServer's own metrics bean ({@value RegionServerProcess#SERVER_BEAN}) serves a
 * snapshot taken once per metrics period and cached again by the JMX adapter, so a read right
 * after a scan can miss the scan's hits, and no read says how old its values are. This bean asks
 * the server's {@link MetricsRegionServerWrapper} each time, whose block cache getters read the
 * cache's own counters ({@code CacheStats}, {@code BucketCache.getBlockCount}): a hit or a miss is
 * counted on the handler thread before the scan's answer leaves the server, so a read after the
 * answer sees it.
 */
public final class LiveServerCounters implements LiveServerCountersMBean {
  /** The bean's name in the RegionServer JVM. */
  public static final String NAME = "dev.forkset.it:type=LiveServerCounters";
  /** The metrics source under which the RegionServer registers its server metrics. */
  private static final String SOURCE = "RegionServer,sub=Server";

  private LiveServerCounters() {}

  /** Registers the bean in this JVM's platform MBean server. */
  static void register() throws Exception {
    ManagementFactory.getPlatformMBeanServer()
        .registerMBean(new LiveServerCounters(), new ObjectName(NAME));
  }

  @Override
  public long[] read(String[] attributes) throws Exception {
    MetricsSource source = DefaultMetricsSystem.instance().getSource(SOURCE);
    if (source == null) {
      return null;
    }
    MetricsRegionServerWrapper wrapper = wrapperOf(source);
    long[] out = new long[attributes.length];
    for (int i = 0; i < attributes.length; i++) {
      String a = attributes[i];
      Method getter = MetricsRegionServerWrapper.class
          .getMethod("get" + Character.toUpperCase(a.charAt(0)) + a.substring(1));
      out[i] = ((Number) getter.invoke(wrapper)).longValue();
    }
    return out;
  }

  /** MetricsRegionServerSourceImpl keeps its wrapper in a package-private field, rsWrap. */
  private static MetricsRegionServerWrapper wrapperOf(MetricsSource source) throws Exception {
    for (Class<?> c = source.getClass(); c != null; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        if (MetricsRegionServerWrapper.class.isAssignableFrom(f.getType())) {
          f.setAccessible(true);
          return (MetricsRegionServerWrapper) f.get(source);
        }
      }
    }
    throw new IllegalStateException(source.getClass() + " holds no MetricsRegionServerWrapper");
  }
}
