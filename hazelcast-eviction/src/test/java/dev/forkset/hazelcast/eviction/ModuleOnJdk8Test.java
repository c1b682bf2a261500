package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.Assume;
import org.junit.Test;

/**
 * The module jar is Java 8 bytecode so that it runs on a Hazelcast 5.3.8 member on JDK 8. This
 * test runs the module's classes as built, with a selection of its tests, in a JDK 8 JVM against
 * the 5.3.8 custom jar (no 5.7.0 class on the class path): the unit tests of the collaborators
 * and the tests that start a real member in that JVM.
 *
 * <p>Left out: tests that use the 5.7.0 test kit (TestHazelcastInstanceFactory) or types that
 * are not public on 5.3.8 (SimpleRecord). A member-JVM IT runs a 5.3.8 member on JDK 8 too.
 */
public class ModuleOnJdk8Test {
  static final List<String> TESTS = Arrays.asList(
      GcAwareEvictionConfigTest.class.getName(),
      GcFootprintModelTest.class.getName(),
      MapFootprintTest.class.getName(),
      PartitionThreadsTest.class.getName(),
      SampledDomainTest.class.getName(),
      EvictionLoopTest.class.getName(),
      ContinuationsTest.class.getName(),
      EvictionPoolTest.class.getName(),
      EvictionBySizeOnOneMemberTest.class.getName());

  @Test
  public void moduleTests_onJdk8_againstTheOldestLinesCustomJar() throws Exception {
    Path java = Paths.get(required("forkset.jdk8.home"), "bin", "java");
    if (!Files.isExecutable(java)) {
      String hint = "No JDK 8 at " + java.getParent().getParent() + ": run .ci/install-jdk8, or"
          + " pass -Dforkset.jdk8.home=<a JDK 8>.";
      if (System.getenv("FORKSET_REQUIRE_JDKS") != null) {
        fail(hint + " (FORKSET_REQUIRE_JDKS is set)");
      }
      Assume.assumeTrue(hint, false);
    }
    Path oldestJar = Paths.get(required("forkset.hazelcast.oldest.custom.jar"));
    assertTrue(oldestJar + " exists", Files.isRegularFile(oldestJar));
    List<String> classPath = new ArrayList<>();
    classPath.add(Paths.get("target", "classes").toAbsolutePath().toString());
    classPath.add(Paths.get("target", "test-classes").toAbsolutePath().toString());
    classPath.add(oldestJar.toString());
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Paths.get(entry).getFileName().toString();
      if (name.startsWith("junit-") || name.startsWith("hamcrest-")) {
        classPath.add(entry);
      }
    }
    // -XshowSettings:properties prints the JVM's java.specification.version before the tests run
    List<String> command = new ArrayList<>(Arrays.asList(java.toString(), "-Xmx512m",
        "-XshowSettings:properties",
        "-Dhazelcast.phone.home.enabled=false", "-Dhazelcast.logging.type=none",
        "-cp", String.join(File.pathSeparator, classPath), "org.junit.runner.JUnitCore"));
    command.addAll(TESTS);
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread reader = new Thread(() -> copy(process.getInputStream(), out));
    reader.start();
    boolean exited = process.waitFor(4, TimeUnit.MINUTES);
    if (!exited) {
      process.destroyForcibly();
    }
    reader.join(10_000);
    String output = new String(out.toByteArray(), StandardCharsets.UTF_8);
    assertTrue("the JDK 8 run did not end within 4 minutes:\n" + output, exited);
    assertEquals("JUnit on " + java + " with " + oldestJar.getFileName() + ":\n" + output, 0,
        process.exitValue());
    assertTrue("ran on JDK 8:\n" + output, output.contains("java.specification.version = 1.8"));
    assertTrue(output, output.contains("OK ("));
  }

  private static void copy(InputStream in, ByteArrayOutputStream out) {
    byte[] buffer = new byte[8192];
    try {
      for (int n; (n = in.read(buffer)) > 0; ) {
        synchronized (out) {
          out.write(buffer, 0, n);
        }
      }
    } catch (java.io.IOException ignored) {
      // the process ended
    }
  }

  private static String required(String property) {
    String v = System.getProperty(property);
    assertTrue("system property " + property + " is set (run through Maven)",
        v != null && !v.isEmpty() && !v.startsWith("${"));
    return v;
  }
}
