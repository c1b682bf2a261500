package dev.forkset.childjvm;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class ChildJvmTest {
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  private ChildJvm echo(String... args) throws Exception {
    return started(echoJvm(args));
  }

  private ChildJvm.Builder echoJvm(String... args) {
    return ChildJvm.builder("echo", Echo.class.getName()).classPathOfThisJvm().heap("64m")
        .dir(tmp.getRoot().toPath()).args(args);
  }

  private static ChildJvm started(ChildJvm.Builder jvm) throws Exception {
    ChildJvm child = jvm.start();
    child.awaitLineStartingWith("ready", 60, TimeUnit.SECONDS);
    return child;
  }

  /**
   * Echo under a shell that forks it and waits (the command after it keeps the shell from
   * exec'ing the JVM): a wrapper with a process of its own, as strace is.
   */
  private ChildJvm wrappedEcho() throws Exception {
    return started(echoJvm().wrapper("sh", "-c", "\"$@\"; exit $?", "sh"));
  }

  /** The JVM's own pid, from the line ChildMain prints before the main class runs. */
  private static long jvmPid(ChildJvm child) throws Exception {
    Matcher m = Pattern.compile(Pattern.quote(ChildMain.STARTED_PREFIX) + "(\\d+) ")
        .matcher(child.logText());
    assertTrue(child.logText(), m.find());
    return Long.parseLong(m.group(1));
  }

  @Test
  public void start_printsThePidAndJavaBeforeTheMainClassRuns() throws Exception {
    try (ChildJvm child = echo("a", "b")) {
      String log = child.logText();
      assertTrue(log, log.startsWith("$ " + Jdk.current().java()));
      assertTrue(log, log.contains(ChildMain.STARTED_PREFIX + child.pid() + " java="));
      assertTrue(log, log.contains("ready a b"));
    }
  }

  @Test
  public void send_reachesTheChild_andAwaitReadsTheAnswersInOrder() throws Exception {
    try (ChildJvm child = echo(tmp.getRoot().getPath())) {
      child.send("echo 1");
      child.send("echo 2");
      assertEquals("echoed 1", child.awaitLineStartingWith("echoed", 30, TimeUnit.SECONDS));
      assertEquals("echoed 2", child.awaitLineStartingWith("echoed", 30, TimeUnit.SECONDS));
    }
  }

  @Test
  public void await_failsAtOnceWithTheExitStatus_whenTheChildDies() throws Exception {
    try (ChildJvm child = echo()) {
      child.send("exit 3");
      long start = System.nanoTime();
      try {
        child.awaitLineStartingWith("never", 10, TimeUnit.MINUTES);
        fail("awaited a line from a dead child");
      } catch (AssertionError e) {
        assertTrue(e.getMessage(), e.getMessage().contains("exited with 3"));
      }
      assertTrue("failed only after the timeout",
          System.nanoTime() - start < TimeUnit.MINUTES.toNanos(1));
    }
  }

  @Test
  public void terminate_runsTheShutdownHooks() throws Exception {
    try (ChildJvm child = echo()) {
      child.send("hook");
      child.awaitLineStartingWith("hooked", 30, TimeUnit.SECONDS);
      assertEquals(ChildJvm.EXIT_SIGTERM, child.terminate(60, TimeUnit.SECONDS));
      assertTrue(child.logText(), child.logText().contains("hook ran"));
    }
  }

  @Test
  public void kill9_skipsTheShutdownHooks() throws Exception {
    try (ChildJvm child = echo()) {
      child.send("hook");
      child.awaitLineStartingWith("hooked", 30, TimeUnit.SECONDS);
      assertEquals(ChildJvm.EXIT_SIGKILL, child.kill9());
      assertFalse(child.logText(), child.logText().contains("hook ran"));
    }
  }

  @Test
  public void kill9_underAWrapper_killsTheJvmBeforeItReturns() throws Exception {
    try (ChildJvm child = wrappedEcho()) {
      long jvm = jvmPid(child);
      assertNotEquals("the JVM runs in a process of its own", child.pid(), jvm);
      child.send("hook");
      child.awaitLineStartingWith("hooked", 30, TimeUnit.SECONDS);
      assertEquals(ChildJvm.EXIT_SIGKILL, child.kill9());
      assertFalse("the JVM " + jvm + " outlived kill9", ChildJvm.running(jvm));
      assertFalse(child.logText(), child.logText().contains("hook ran"));
    }
  }

  @Test
  public void terminate_underAWrapper_runsTheJvmsShutdownHooks() throws Exception {
    try (ChildJvm child = wrappedEcho()) {
      long jvm = jvmPid(child);
      child.send("hook");
      child.awaitLineStartingWith("hooked", 30, TimeUnit.SECONDS);
      assertEquals(ChildJvm.EXIT_SIGTERM, child.terminate(60, TimeUnit.SECONDS));
      assertFalse("the JVM " + jvm + " outlived terminate", ChildJvm.running(jvm));
      assertTrue(child.logText(), child.logText().contains("hook ran"));
    }
  }

  @Test
  public void grandchild_haltsWhenItsParentIsKilled9() throws Exception {
    long grandchild = -1;
    try {
      try (ChildJvm child = echo(tmp.getRoot().getPath())) {
        child.send("spawn");
        Matcher m = child.await(Pattern.compile("^grandchild (\\d+)$"), 120, TimeUnit.SECONDS);
        grandchild = Long.parseLong(m.group(1));
        assertTrue(ChildJvm.running(grandchild));
        child.kill9();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (ChildJvm.running(grandchild) && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertFalse("the grandchild " + grandchild + " outlived its parent",
          ChildJvm.running(grandchild));
    } finally {
      // Nothing else would reap it if the watchdog failed: it is not this JVM's child.
      if (grandchild > 0 && ChildJvm.running(grandchild)) {
        new ProcessBuilder("kill", "-KILL", Long.toString(grandchild)).start().waitFor();
      }
    }
    String log = new String(java.nio.file.Files.readAllBytes(
        tmp.getRoot().toPath().resolve("grandchild.log")), "UTF-8");
    assertTrue(log, log.contains("the parent JVM is gone"));
  }

  @Test
  public void runsOnJdk8_withItsOwnGcLogSyntax() throws Exception {
    Jdk jdk8 = Jdks.jdk8();
    Path gc = tmp.getRoot().toPath().resolve("gc.log");
    try (ChildJvm child = ChildJvm.builder("echo8", Echo.class.getName()).jdk(jdk8)
        .classPathOfThisJvm().inheritOpens().gcLog(gc).dir(tmp.getRoot().toPath()).start()) {
      child.awaitLineStartingWith("ready", 60, TimeUnit.SECONDS);
      assertTrue(child.logText(), child.logText().contains(" java=1.8."));
    }
    // JDK 8 refuses -Xlog and --add-opens at start: the child started with its own syntax.
    assertTrue(gc + " missing", gc.toFile().exists());
  }
}
