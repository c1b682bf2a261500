package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.childjvm.ChildJvm;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
      EvictionBySizeOnOneMemberTest.class.getName(),
      MapWithoutEvictionOnOneMemberTest.class.getName(),
      "dev.forkset.hazelcast.chunked.ChunkedDataTest",
      "dev.forkset.hazelcast.chunked.ChunkedDataBuilderTest",
      "dev.forkset.hazelcast.chunked.ChunkSizeTest",
      "dev.forkset.hazelcast.chunked.StreamingDeserializerTest",
      ChunkSizeOfTheRunningVmTest.class.getName());

  @Test
  public void moduleTests_onJdk8_againstTheOldestLinesCustomJar() throws Exception {
    Jdk jdk8 = Jdks.jdk8();
    Path oldestJar = Paths.get(required("forkset.hazelcast.oldest.custom.jar"));
    assertTrue(oldestJar + " exists", Files.isRegularFile(oldestJar));
    List<Path> classPath = new ArrayList<>();
    classPath.add(Paths.get("target", "classes"));
    classPath.add(Paths.get("target", "test-classes"));
    classPath.add(oldestJar);
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Paths.get(entry).getFileName().toString();
      if (name.startsWith("junit-") || name.startsWith("hamcrest-")) {
        classPath.add(Paths.get(entry));
      }
    }
    try (ChildJvm junit = ChildJvm.builder("module-on-jdk8", "org.junit.runner.JUnitCore")
        .jdk(jdk8).jvmArgs("-Xmx512m").systemProperty("hazelcast.phone.home.enabled", "false")
        .systemProperty("hazelcast.logging.type", "none").classPath(classPath).args(TESTS)
        .dir(Paths.get("target")).start()) {
      int exit = junit.waitFor(4, TimeUnit.MINUTES);
      String output = junit.logText();
      assertEquals("JUnit on " + jdk8 + " with " + oldestJar.getFileName() + ":\n" + output, 0,
          exit);
      assertTrue("ran on JDK 8:\n" + output, output.contains(" java=1.8."));
      assertTrue(output, output.contains("OK ("));
    }
  }

  private static String required(String property) {
    String v = System.getProperty(property);
    assertTrue("system property " + property + " is set (run through Maven)",
        v != null && !v.isEmpty() && !v.startsWith("${"));
    return v;
  }
}
