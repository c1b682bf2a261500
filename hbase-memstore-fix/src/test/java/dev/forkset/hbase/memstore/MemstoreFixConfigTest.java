package dev.forkset.hbase.memstore;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import dev.forkset.hbase.memstore.MemstoreFixConfig.Setting;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.HashSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

public class MemstoreFixConfigTest {
  private static final String KEY = MemstoreFixConfig.FLUSH_UPDATES_LOCK_WARN_MS.name;

  private static MemstoreFixConfig read(String value) {
    Configuration conf = new Configuration(false);
    if (value != null) {
      conf.set(KEY, value);
    }
    return MemstoreFixConfig.read(conf);
  }

  @Test
  public void defaultWarnThresholdIsTheDocumentedOne() {
    assertEquals(Long.parseLong(MemstoreFixConfig.FLUSH_UPDATES_LOCK_WARN_MS.defaultValue),
        read(null).flushUpdatesLockWarnMs);
  }

  @Test
  public void warnThresholdIsAPositiveNumberOfMilliseconds() {
    assertEquals(250, read("250").flushUpdatesLockWarnMs);
    assertEquals(250, read(" 250 ").flushUpdatesLockWarnMs);
    assertEquals(1, read("1").flushUpdatesLockWarnMs);
  }

  @Test
  public void badWarnThresholdIsRejectedNamingKeyValueAcceptedAndFix() {
    for (String bad : new String[] {"0", "-5", "250ms", "2s", "0.5", "abc", ""}) {
      try {
        MemstoreFixConfig c = read(bad);
        fail("'" + bad + "' accepted as " + c);
      } catch (IllegalArgumentException e) {
        assertEquals(KEY + "='" + bad + "' is not valid. Accepted: "
            + MemstoreFixConfig.FLUSH_UPDATES_LOCK_WARN_MS.accepted + ". Remove it for the default "
            + MemstoreFixConfig.FLUSH_UPDATES_LOCK_WARN_MS.defaultValue + " ms.", e.getMessage());
      }
    }
  }

  @Test
  public void checkPrintsTheValuesOrTheProblem() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    Configuration conf = new Configuration(false);
    conf.set(KEY, "2000");
    assertEquals(0, MemstoreFixConfig.check(conf, new PrintStream(out, true, "UTF-8"),
        new PrintStream(err, true, "UTF-8")));
    assertEquals(KEY + "=2000ms", out.toString("UTF-8").trim());
    conf.set(KEY, "soon");
    assertEquals(1, MemstoreFixConfig.check(conf, new PrintStream(out, true, "UTF-8"),
        new PrintStream(err, true, "UTF-8")));
    String problem = err.toString("UTF-8");
    assertTrue(problem, problem.startsWith(KEY + "='soon' is not valid."));
  }

  @Test
  public void everySettingIsDocumentedOnce() {
    Set<String> names = new HashSet<>();
    for (Setting s : MemstoreFixConfig.settings()) {
      assertTrue("twice: " + s.name, names.add(s.name));
      assertTrue(s.name, !s.defaultValue.isEmpty() && !s.accepted.isEmpty() && !s.doc.isEmpty());
      assertTrue(s.name + " scope " + s.scope,
          s.scope.matches("(site|table|family)(, (table|family))*"));
    }
  }
}
