package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.FileOutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class UpstreamTestsTest {
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  private static final List<String> LIST = Arrays.asList(
      "# comment",
      "mod-a org.x.r.TestRegion",
      "  !testOne  shares a JVM-wide counter",
      "  !testTwo   the same",
      "",
      "  # every bucket test",
      "mod-b org.x.b.Test*",
      "  !TestCache#testWait*  fails on stock too (see #12)",
      "  !TestPrefetch  flaky upstream",
      "mod-b org.x.m.EvictionTest#testLRU*+testLFU*");

  private static UpstreamTests list() {
    return UpstreamTests.parse("upstream-tests", LIST);
  }

  @Test
  public void select_aModule_rendersItsEntriesWithTheirExclusions() {
    assertEquals("org/x/r/TestRegion, !org/x/r/TestRegion#testOne, !org/x/r/TestRegion#testTwo",
        UpstreamTests.surefireTest(list().select("mod-a", null)));
    assertEquals("org/x/b/Test*, !org/x/b/TestCache#testWait*, !org/x/b/TestPrefetch,"
        + " org/x/m/EvictionTest#testLRU*+testLFU*",
        UpstreamTests.surefireTest(list().select("mod-b", "")));
    assertEquals(3, list().select("*", null).size());
  }

  @Test
  public void select_withTheUsersTest_narrowsToTheClassesItNames() {
    assertEquals("org/x/r/TestRegion, !org/x/r/TestRegion#testOne, !org/x/r/TestRegion#testTwo",
        UpstreamTests.surefireTest(list().select("mod-a", "TestRegion")));
    assertEquals("org/x/b/TestCache, !org/x/b/TestCache#testWait*",
        UpstreamTests.surefireTest(list().select("mod-b", "TestCache")));
    assertEquals("org/x/m/EvictionTest#testLRU*+testLFU*",
        UpstreamTests.surefireTest(list().select("mod-b", "org.x.m.EvictionTest#testLRU1")));
    assertTrue(list().select("mod-a", "MyOwnTest").isEmpty());
    assertTrue(list().select("mod-a", "org.y.r.TestRegion").isEmpty());
  }

  @Test
  public void parse_anExclusionWithoutAReason_failsNamingTheLine() {
    try {
      UpstreamTests.parse("f", Arrays.asList("m org.x.TestA", "  !testB"));
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().startsWith("f:2: the exclusion !testB gives no"));
    }
  }

  @Test
  public void parse_anEntryWithoutAModule_fails() {
    try {
      UpstreamTests.parse("f", Arrays.asList("org.x.TestA"));
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().startsWith("f:1: an entry is"));
    }
  }

  @Test
  public void differing_listsClassesWhoseBytesDiffer_andNotThoseDroppedFromBoth() throws Exception {
    File a = jar("a.jar", "x/A.class", "1", "x/B.class", "2");
    File b = jar("b.jar", "x/A.class", "1", "x/B.class", "3", "x/C.class", "4");
    assertEquals(Arrays.asList("x/B.class", "x/C.class"), UpstreamTestsMojo.differing(a, b,
        Arrays.asList("x/A.class", "x/B.class", "x/C.class", "x/A$1.class", "")));
    assertTrue(UpstreamTestsMojo.differing(a, a, Arrays.asList("x/A.class", "x/B.class"))
        .isEmpty());
  }

  private File jar(String name, String... entriesAndBytes) throws Exception {
    File f = tmp.newFile(name);
    try (ZipOutputStream out = new ZipOutputStream(new FileOutputStream(f))) {
      for (int i = 0; i < entriesAndBytes.length; i += 2) {
        out.putNextEntry(new ZipEntry(entriesAndBytes[i]));
        out.write(entriesAndBytes[i + 1].getBytes("UTF-8"));
        out.closeEntry();
      }
    }
    return f;
  }
}
