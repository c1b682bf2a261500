package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.FileOutputStream;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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

  /** The classes of LIST's tests jar, with the methods each has. */
  private static TestClasses classes() {
    Map<String, TestClasses.Info> m = new TreeMap<>();
    m.put("org.x.r.TestRegion", info(null, "testOne", "testTwo", "testFlush"));
    m.put("org.x.r.TestRegionBase", info(null, "testBase"));
    m.put("org.x.b.TestCache", info("org.x.b.AbstractCacheTest", "testWaitShort", "testHit"));
    m.put("org.x.b.AbstractCacheTest", info(null, "testInherited"));
    m.put("org.x.b.TestCache$Inner", info(null, "testNested"));
    m.put("org.x.b.TestPrefetch", info(null, "testPrefetch"));
    m.put("org.x.b.TestBucketWriter", info(null, "testWrite"));
    m.put("org.x.m.EvictionTest", info(null, "testLRU1", "testLRU2", "testLFU", "testRandom"));
    return new TestClasses(m, "tests.jar");
  }

  private static TestClasses.Info info(String superName, String... methods) {
    return new TestClasses.Info(superName, new LinkedHashSet<>(Arrays.asList(methods)));
  }

  private static String select(String module, String user) {
    return UpstreamTests.surefireTest(list().select(module, user, classes()));
  }

  @Test
  public void select_aModule_rendersItsEntriesWithTheirExclusions() {
    assertEquals("org/x/r/TestRegion, !org/x/r/TestRegion#testOne, !org/x/r/TestRegion#testTwo",
        select("mod-a", null));
    assertEquals("org/x/b/Test*, !org/x/b/TestCache#testWait*, !org/x/b/TestPrefetch,"
        + " org/x/m/EvictionTest#testLRU*+testLFU*", select("mod-b", ""));
    assertEquals(3, list().select("*", null, classes()).size());
  }

  @Test
  public void select_withTheUsersTest_narrowsToTheClassesItNames() {
    assertEquals("org/x/r/TestRegion, !org/x/r/TestRegion#testOne, !org/x/r/TestRegion#testTwo",
        select("mod-a", "TestRegion"));
    assertEquals("org/x/b/TestCache, !org/x/b/TestCache#testWait*", select("mod-b", "TestCache"));
    assertEquals("", select("mod-a", "MyOwnTest"));
    assertEquals("", select("mod-a", "org.y.r.TestRegion"));
    assertEquals("org/x/b/TestCache, !org/x/b/TestCache#testWait*",
        select("mod-b", "org/x/b/TestCache.java"));
  }

  @Test
  public void select_twoGlobs_runsTheClassesBothMatch() {
    // Neither "*Bucket*" nor "Test*" contains the other; TestBucketWriter is in both.
    assertEquals("org/x/b/TestBucketWriter", select("mod-b", "*Bucket*"));
    assertEquals("org/x/b/TestCache, !org/x/b/TestCache#testWait*, org/x/b/TestPrefetch,"
        + " !org/x/b/TestPrefetch", select("mod-b", "*Ca*,*Pre*"));
  }

  @Test
  public void select_classAndMethod_runsThatMethodOnly() {
    assertEquals("org/x/r/TestRegion#testFlush, !org/x/r/TestRegion#testOne,"
        + " !org/x/r/TestRegion#testTwo", select("mod-a", "TestRegion#testFlush"));
    // Within the entry's methods: the methods the tests jar has that both allow.
    assertEquals("org/x/m/EvictionTest#testLRU1", select("mod-b", "EvictionTest#testLRU1"));
    assertEquals("org/x/m/EvictionTest#testLRU1+testLRU2+testLFU",
        select("mod-b", "EvictionTest#test*"));
    assertEquals("", select("mod-b", "EvictionTest#testRandom"));
    // A pattern without methods takes the class's whole entry.
    assertEquals("org/x/m/EvictionTest#testLRU*+testLFU*",
        select("mod-b", "EvictionTest#testLRU1,EvictionTest"));
  }

  @Test
  public void problems_none_whenEveryEntryMethodAndExclusionNamesSomething() {
    assertEquals(Arrays.asList(), list().problems("*", classes()));
  }

  @Test
  public void problems_nameEntriesMethodsAndExclusionsThatMatchNothing() {
    UpstreamTests t = UpstreamTests.parse("f", Arrays.asList(
        "m org.x.r.TestRegoin",
        "m org.x.r.TestRegion#testFlush+testFlushes",
        "  !testGone  removed upstream",
        "m org.x.b.Test*",
        "  !TestCach  misspelt",
        "  !TestCache#testInherited  inherited methods count",
        "other org.x.none.TestNothing"));
    assertEquals(Arrays.asList(
        "m org.x.r.TestRegoin: no such test class",
        "m org.x.r.TestRegion#testFlush+testFlushes: no method testFlushes",
        "m org.x.r.TestRegion#testFlush+testFlushes: the exclusion !TestRegion#testGone names no"
            + " method testGone",
        "m org.x.b.Test*: the exclusion !TestCach matches none of its classes"),
        t.problems("m", classes()));
  }

  @Test
  public void problems_exclusionOfAMethodOnlyOneLineHas_isNoProblemInTheOther() {
    UpstreamTests t = UpstreamTests.parse("f", Arrays.asList(
        "m org.x.r.TestRegion",
        "  !testAddedLater  flaky upstream",
        "  !testNowhere  misspelt"));
    Map<String, TestClasses.Info> m = new TreeMap<>();
    m.put("org.x.r.TestRegion", info(null, "testFlush", "testAddedLater"));
    TestClasses newer = new TestClasses(m, "newer.jar");
    String missing = "m org.x.r.TestRegion: the exclusion !TestRegion#testNowhere names no method"
        + " testNowhere";
    // Alone, the older line's classes (no testAddedLater) would report both exclusions.
    assertEquals(Arrays.asList("m org.x.r.TestRegion: the exclusion !TestRegion#testAddedLater"
        + " names no method testAddedLater", missing), t.problems("m", classes()));
    assertEquals(Arrays.asList(missing),
        t.problems("m", classes(), Arrays.asList(classes(), newer)));
    assertEquals(Arrays.asList(), t.problems("m", classes(), Arrays.<TestClasses>asList()));
  }

  @Test
  public void classes_readsTheMethodsAndSuperclassOfARealClassFile() throws Exception {
    File dir = new File(UpstreamTestsTest.class.getProtectionDomain().getCodeSource()
        .getLocation().toURI());
    TestClasses c = TestClasses.read(Arrays.asList(dir));
    assertEquals(Arrays.asList("UpstreamTestsTest"),
        c.simpleNames("dev.forkset.series", "UpstreamTestsT*"));
    assertTrue(c.methods("dev.forkset.series.UpstreamTestsTest")
        .contains("classes_readsTheMethodsAndSuperclassOfARealClassFile"));
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

  @Test
  public void parse_fromRelease_keepsTheReleaseApartFromTheLinesEntries() {
    UpstreamTests t = UpstreamTests.parse("list", Arrays.asList(
        "mod-a org.x.r.TestRegion",
        "mod-a org.x.r.TestSet from 1.1",
        "  !testOld  1.1 still has it, for another reason",
        "mod-b org.x.r.TestOther from 1.2"));
    assertEquals(1, t.from(null).entries().size());
    assertEquals("mod-a org.x.r.TestSet from 1.1", t.from("1.1").entries().get(0).toString());
    assertEquals(Arrays.asList("TestSet#testOld"), t.from("1.1").entries().get(0).exclusions);
    assertEquals(2, t.released().entries().size());
    assertEquals(new LinkedHashSet<>(Arrays.asList("1.1")), t.releases("mod-a"));
    assertEquals(new LinkedHashSet<>(Arrays.asList("1.1", "1.2")), t.releases("*"));
    try {
      UpstreamTests.parse("list", Arrays.asList("mod-a org.x.r.TestSet 1.1"));
      fail("a release without 'from'");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("[from <release>]"));
    }
  }
}
