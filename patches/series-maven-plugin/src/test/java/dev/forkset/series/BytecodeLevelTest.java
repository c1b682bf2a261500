package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeSet;
import java.util.jar.JarFile;
import org.apache.maven.plugin.MojoFailureException;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class BytecodeLevelTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private static final Map<String, String> UPSTREAM = Compiled.sources(
      "p/A.java", "package p; public class A { class Inner {} }",
      "p/B.java", "package p; public class B {}");

  private Path upstreamJar(int release) throws Exception {
    return Compiled.jar(tmp.getRoot().toPath().resolve("up-" + release + ".jar"), release, UPSTREAM);
  }

  private Path recompiled(int release, String... pathAndContent) throws Exception {
    Path out = tmp.newFolder().toPath();
    Compiled.compile(out, release, Compiled.sources(pathAndContent));
    return out;
  }

  @Test
  public void major_readsTheClassFileHeader() throws Exception {
    Path classes = recompiled(11, "p/A.java", "package p; public class A {}");
    assertEquals(55, BytecodeLevel.major(Files.readAllBytes(classes.resolve("p/A.class"))));
    assertEquals("Java 8 (class-file major 52)", BytecodeLevel.describe(52));
  }

  @Test
  public void major_rejectsSomethingThatIsNoClassFile() {
    try {
      BytecodeLevel.major(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
      fail("not a class file");
    } catch (IllegalArgumentException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("CAFEBABE"));
    }
  }

  @Test
  public void check_passesWhenEveryReplacedClassKeepsTheUpstreamLevel() throws Exception {
    Path classes = recompiled(8, "p/A.java", "package p; public class A { class Inner {} int x; }",
        "p/New.java", "package p; class New {}");
    try (JarFile up = new JarFile(upstreamJar(8).toFile())) {
      BytecodeLevel.check(up, classes, new TreeSet<>(Compiled.classes(classes)), "upstream.release",
          "pom.xml");
    }
  }

  @Test
  public void check_failsNamingTheClass_whenAReplacedClassIsNewerThanUpstream() throws Exception {
    Path classes = recompiled(11, "p/A.java", "package p; public class A { class Inner {} }");
    try (JarFile up = new JarFile(upstreamJar(8).toFile())) {
      BytecodeLevel.check(up, classes, new TreeSet<>(Compiled.classes(classes)), "upstream.release",
          "patches/x/1.0/pom.xml");
      fail("release 11 classes replace release 8 ones");
    } catch (MojoFailureException e) {
      String m = e.getMessage();
      assertTrue(m, m.contains("p/A.class is Java 11 (class-file major 55)"));
      assertTrue(m, m.contains("p/A$Inner.class"));
      assertTrue(m, m.contains("upstream class it replaces is Java 8 (class-file major 52)"));
      assertTrue(m, m.contains("Set upstream.release to 8 in patches/x/1.0/pom.xml"));
    }
  }

  @Test
  public void check_failsWhenAReplacedClassIsOlderThanUpstream() throws Exception {
    Path classes = recompiled(8, "p/A.java", "package p; public class A { class Inner {} }");
    try (JarFile up = new JarFile(upstreamJar(11).toFile())) {
      BytecodeLevel.check(up, classes, new TreeSet<>(Compiled.classes(classes)), "upstream.release",
          "pom.xml");
      fail("release 8 classes replace release 11 ones");
    } catch (MojoFailureException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("Set upstream.release to 11"));
    }
  }

  @Test
  public void check_holdsAClassThatUpstreamLacksToTheLevelOfTheUpstreamJar() throws Exception {
    Path classes = recompiled(11, "p/New.java", "package p; class New {}");
    try (JarFile up = new JarFile(upstreamJar(8).toFile())) {
      BytecodeLevel.check(up, classes, new TreeSet<>(Compiled.classes(classes)), "upstream.release",
          "pom.xml");
      fail("a new class above the upstream jar's level");
    } catch (MojoFailureException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("p/New.class is Java 11"));
      assertTrue(e.getMessage(), e.getMessage().contains("newest class of the upstream jar is Java 8"));
    }
  }

  @Test
  public void upstreamLevel_ignoresMultiReleaseCopies() throws Exception {
    Path jar = tmp.getRoot().toPath().resolve("mr.jar");
    Path v8 = recompiled(8, "p/A.java", "package p; public class A {}");
    Path v11 = recompiled(11, "p/A.java", "package p; public class A {}");
    Compiled.zip(jar, new java.util.TreeMap<>(Map.of(
        "p/A.class", Files.readAllBytes(v8.resolve("p/A.class")),
        "META-INF/versions/11/p/A.class", Files.readAllBytes(v11.resolve("p/A.class")))));
    try (JarFile up = new JarFile(jar.toFile())) {
      assertEquals(52, BytecodeLevel.newestBaseClass(up));
    }
  }
}
