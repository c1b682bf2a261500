package dev.forkset.hbase.memstore;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

public class MemstoreFixConfigTest {

  private static long threshold(String value) {
    Configuration conf = new Configuration(false);
    if (value != null) {
      conf.set(MemstoreFixConfig.WARN_THRESHOLD_KEY, value);
    }
    return MemstoreFixConfig.warnThresholdNanos(conf);
  }

  private static void assertRejected(String value) {
    try {
      long nanos = threshold(value);
      fail("'" + value + "' accepted as " + nanos + " ns");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(MemstoreFixConfig.WARN_THRESHOLD_KEY));
      assertTrue(e.getMessage(), e.getMessage().contains("'" + value + "'"));
    }
  }

  @Test
  public void defaultThresholdIs100Milliseconds() {
    assertEquals(TimeUnit.MILLISECONDS.toNanos(100), threshold(null));
  }

  @Test
  public void thresholdAcceptsEveryUnitAndBareMilliseconds() {
    assertEquals(TimeUnit.MILLISECONDS.toNanos(250), threshold("250ms"));
    assertEquals(TimeUnit.MILLISECONDS.toNanos(500), threshold("0.5s"));
    assertEquals(TimeUnit.MICROSECONDS.toNanos(1500), threshold("1500us"));
    assertEquals(7, threshold("7ns"));
    assertEquals(TimeUnit.MINUTES.toNanos(2), threshold(" 2 m "));
    assertEquals(TimeUnit.HOURS.toNanos(1), threshold("1H"));
    assertEquals(TimeUnit.MILLISECONDS.toNanos(40), threshold("40"));
  }

  @Test
  public void thresholdThatIsNotAPositiveDurationIsRejectedNamingTheKey() {
    assertRejected("0");
    assertRejected("0ms");
    assertRejected("0.1ns");
    assertRejected("-5ms");
    assertRejected("abc");
    assertRejected("10 parsecs");
    assertRejected("");
    assertRejected("ms");
  }
}
