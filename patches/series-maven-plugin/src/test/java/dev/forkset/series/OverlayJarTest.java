package dev.forkset.series;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class OverlayJarTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final Instant TIMESTAMP = Instant.parse("2026-01-02T03:04:06Z");
  private static final List<String> UNITS = List.of("p/A");

  private Path upstream() throws Exception {
    Path classes = tmp.newFolder().toPath();
    Compiled.compile(classes, 8, Compiled.sources(
        "p/A.java", "package p; public class A { class Inner {} Runnable r = new Runnable() {"
            + " public void run() {} }; }",
        "p/B.java", "package p; public class B {}"));
    Map<String, byte[]> entries = new TreeMap<>();
    for (String c : Compiled.classes(classes)) {
      entries.put(c, Files.readAllBytes(classes.resolve(c)));
    }
    entries.put("META-INF/versions/11/p/A.class", entries.get("p/A.class"));
    entries.put("META-INF/UPSTREAM.SF", "signature".getBytes(StandardCharsets.UTF_8));
    entries.put("META-INF/UPSTREAM.RSA", "signature".getBytes(StandardCharsets.UTF_8));
    entries.put("META-INF/MANIFEST.MF",
        "Manifest-Version: 1.0\r\nCreated-By: upstream\r\n\r\n".getBytes(StandardCharsets.UTF_8));
    entries.put("p/data.txt", "data".getBytes(StandardCharsets.UTF_8));
    return Compiled.zip(tmp.getRoot().toPath().resolve("upstream.jar"), entries);
  }

  private Path patched() throws Exception {
    Path classes = tmp.newFolder().toPath();
    Compiled.compile(classes, 8, Compiled.sources(
        "p/A.java", "package p; public class A { public int added; }",
        "p/Hook.java", "package p; public interface Hook {}"));
    return classes;
  }

  private Manifest manifest(JarFile upstream) throws Exception {
    Manifest m = new Manifest(upstream.getManifest());
    m.getMainAttributes().putValue("Forkset-Patches", "0001-a.patch");
    return m;
  }

  private OverlayJar.Result write(Path upstreamJar, Path classes, Path out) throws Exception {
    try (JarFile up = new JarFile(upstreamJar.toFile())) {
      return OverlayJar.write(up, classes, new TreeSet<>(Compiled.classes(classes)), UNITS,
          manifest(up), TIMESTAMP, out);
    }
  }

  @Test
  public void write_replacesEveryClassOfAPatchedUnit_andKeepsTheRest() throws Exception {
    Path out = tmp.getRoot().toPath().resolve("custom.jar");
    OverlayJar.Result r = write(upstream(), patched(), out);
    assertEquals(List.of("META-INF/versions/11/p/A.class", "p/A$1.class", "p/A$Inner.class",
        "p/A.class"), sorted(r.replaced));
    assertEquals(List.of("p/A.class", "p/Hook.class"), r.added);
    assertEquals("the added unit is listed after the replaced entries",
        "p/Hook.class", r.fromSeries().get(r.fromSeries().size() - 1));
    assertEquals(new TreeSet<>(List.of("META-INF/versions/11/p/A.class", "p/A$1.class",
        "p/A$Inner.class", "p/A.class", "p/Hook.class")), new TreeSet<>(r.fromSeries()));
    try (JarFile jar = new JarFile(out.toFile())) {
      assertNull("stale nested class of a replaced unit", jar.getEntry("p/A$Inner.class"));
      assertNull("stale anonymous class", jar.getEntry("p/A$1.class"));
      assertNull("multi-release copy of a replaced unit", jar.getEntry("META-INF/versions/11/p/A.class"));
      assertNull("signature that no longer matches", jar.getEntry("META-INF/UPSTREAM.SF"));
      assertNull(jar.getEntry("META-INF/UPSTREAM.RSA"));
      assertNotNull(jar.getEntry("p/B.class"));
      assertNotNull(jar.getEntry("p/Hook.class"));
      assertEquals("data", new String(jar.getInputStream(jar.getEntry("p/data.txt")).readAllBytes(),
          StandardCharsets.UTF_8));
      assertEquals("0001-a.patch", jar.getManifest().getMainAttributes().getValue("Forkset-Patches"));
      assertEquals("upstream", jar.getManifest().getMainAttributes().getValue("Created-By"));
      assertEquals("the manifest is the first entry, as JarInputStream needs",
          "META-INF/MANIFEST.MF", jar.entries().nextElement().getName());
    }
  }

  @Test
  public void overlay_refusesAMultiReleaseCopyOfAPatchedClass_namingItAndTheVersions()
      throws Exception {
    Path up = upstream();
    try (JarFile jar = new JarFile(up.toFile())) {
      assertEquals(List.of("META-INF/versions/11/p/A.class"), OverlayJar.versionedCopies(jar, UNITS));
      assertEquals(List.of(), OverlayJar.versionedCopies(jar, List.of("p/B")));
      OverlayMojo.refuseVersionedCopies(jar, up.toFile(), List.of("p/B"));
      try {
        OverlayMojo.refuseVersionedCopies(jar, up.toFile(), UNITS);
        fail("a multi-release copy of p/A was accepted");
      } catch (org.apache.maven.plugin.MojoFailureException e) {
        assertTrue(e.getMessage(), e.getMessage().startsWith("upstream.jar has multi-release"
            + " copies of classes the series patches:\n  META-INF/versions/11/p/A.class\n"));
        assertTrue(e.getMessage(), e.getMessage().contains("does not declare Multi-Release"));
        assertTrue(e.getMessage(), e.getMessage().contains("Keep the series out of these classes"));
      }
    }
    Map<String, byte[]> entries = new TreeMap<>();
    try (JarFile jar = new JarFile(up.toFile())) {
      for (java.util.jar.JarEntry e : Collections.list(jar.entries())) {
        entries.put(e.getName(), jar.getInputStream(e).readAllBytes());
      }
    }
    entries.put("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\n"
        .getBytes(StandardCharsets.UTF_8));
    Path mr = Compiled.zip(tmp.getRoot().toPath().resolve("mr/upstream.jar"), entries);
    try (JarFile jar = new JarFile(mr.toFile())) {
      OverlayMojo.refuseVersionedCopies(jar, mr.toFile(), UNITS);
      fail("a multi-release copy of p/A was accepted");
    } catch (org.apache.maven.plugin.MojoFailureException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("the JVM loads these copies, not the patched class"));
    }
  }

  @Test
  public void write_givesEveryEntryTheOutputTimestamp() throws Exception {
    Path out = tmp.getRoot().toPath().resolve("custom.jar");
    write(upstream(), patched(), out);
    LocalDateTime fixed = LocalDateTime.ofInstant(TIMESTAMP, ZoneOffset.UTC);
    try (JarFile jar = new JarFile(out.toFile())) {
      for (java.util.Enumeration<java.util.jar.JarEntry> e = jar.entries(); e.hasMoreElements();) {
        java.util.jar.JarEntry entry = e.nextElement();
        assertEquals(entry.getName(), fixed, entry.getTimeLocal());
        assertNull(entry.getName() + " has no extended timestamp", entry.getCreationTime());
      }
    }
  }

  @Test
  public void write_isByteIdentical_whateverTheClassFileTimesTheTimeZoneAndTheWalkOrder()
      throws Exception {
    Path upstream = upstream();
    Path classes = patched();
    Path first = tmp.getRoot().toPath().resolve("first.jar");
    write(upstream, classes, first);

    Path copy = tmp.newFolder().toPath();
    List<String> names = new ArrayList<>(Compiled.classes(classes));
    Collections.reverse(names);
    for (String name : names) {
      Path to = copy.resolve(name);
      Files.createDirectories(to.getParent());
      Files.copy(classes.resolve(name), to);
      Files.setLastModifiedTime(to, FileTime.fromMillis(946_684_800_000L));
    }
    Path second = tmp.getRoot().toPath().resolve("second.jar");
    TimeZone zone = TimeZone.getDefault();
    try {
      TimeZone.setDefault(TimeZone.getTimeZone(
          zone.getRawOffset() == 0 ? "Pacific/Kiritimati" : "UTC"));
      Thread.sleep(2100); // a DOS time field has 2 s steps: a writer that used the clock would differ
      write(upstream, copy, second);
    } finally {
      TimeZone.setDefault(zone);
    }
    assertArrayEquals(Files.readAllBytes(first), Files.readAllBytes(second));
  }

  @Test
  public void write_replacesARewrittenEntryInItsPlace_andAddsOneUpstreamLacks() throws Exception {
    Path out = tmp.getRoot().toPath().resolve("custom.jar");
    TreeMap<String, byte[]> rewritten = new TreeMap<>();
    rewritten.put("p/data.txt", "ours".getBytes(StandardCharsets.UTF_8));
    rewritten.put("z/new.txt", "new".getBytes(StandardCharsets.UTF_8));
    Path upstreamJar = upstream();
    Path classes = patched();
    try (JarFile up = new JarFile(upstreamJar.toFile())) {
      OverlayJar.write(up, classes, new TreeSet<>(Compiled.classes(classes)), UNITS,
          manifest(up), rewritten, TIMESTAMP, out);
    }
    try (JarFile jar = new JarFile(out.toFile())) {
      List<String> names = new ArrayList<>();
      jar.stream().forEach(e -> names.add(e.getName()));
      assertEquals("upstream's entry keeps its place", names.indexOf("p/B.class") + 1,
          names.indexOf("p/data.txt"));
      assertEquals("once", names.lastIndexOf("p/data.txt"), names.indexOf("p/data.txt"));
      assertEquals("ours", new String(jar.getInputStream(jar.getEntry("p/data.txt")).readAllBytes(),
          StandardCharsets.UTF_8));
      assertEquals("an entry upstream lacks comes last", "z/new.txt", names.get(names.size() - 1));
    }
  }

  @Test
  public void outputTimestamp_acceptsIso8601AndEpochSeconds() {
    assertEquals(TIMESTAMP, OverlayJar.outputTimestamp("2026-01-02T03:04:06Z"));
    assertEquals(TIMESTAMP, OverlayJar.outputTimestamp("2026-01-02T04:04:06+01:00"));
    assertEquals(Instant.ofEpochSecond(1_700_000_000L), OverlayJar.outputTimestamp("1700000000"));
  }

  @Test
  public void outputTimestamp_rejectsAMissingOrMalformedValue() {
    for (String bad : new String[] {null, "", "${project.build.outputTimestamp}", "yesterday"}) {
      try {
        OverlayJar.outputTimestamp(bad);
        fail("accepted " + bad);
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("project.build.outputTimestamp"));
      }
    }
  }

  @Test
  public void ofReplacedUnit_matchesNestedAndVersionedClassesOnly() {
    assertTrue(OverlayJar.ofReplacedUnit("p/A$Inner$1.class", UNITS));
    assertTrue(OverlayJar.ofReplacedUnit("META-INF/versions/17/p/A.class", UNITS));
    assertFalse(OverlayJar.ofReplacedUnit("p/AB.class", UNITS));
    assertFalse(OverlayJar.ofReplacedUnit("p/A.java", UNITS));
    assertFalse(OverlayJar.ofReplacedUnit("META-INF/versions/17", UNITS));
  }

  private static List<String> sorted(List<String> l) {
    List<String> s = new ArrayList<>(l);
    Collections.sort(s);
    return s;
  }

}
