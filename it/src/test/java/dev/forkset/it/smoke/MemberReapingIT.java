package dev.forkset.it.smoke;

import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** A member outlives neither a killed test JVM: it halts when its parent disappears. */
public class MemberReapingIT {

  @Test
  public void killedTestJvm_takesItsMembersWithIt() throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + "/bin/java");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    for (String key : System.getProperties().stringPropertyNames()) {
      if (key.startsWith("forkset.")) {
        cmd.add("-D" + key + "=" + System.getProperty(key));
      }
    }
    cmd.add(OrphanLauncher.class.getName());
    Process launcher = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    long memberPid = -1;
    StringBuilder out = new StringBuilder();
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        out.append(line).append('\n');
        if (line.startsWith("MEMBER_PID=")) {
          memberPid = Long.parseLong(line.substring("MEMBER_PID=".length()));
          break;
        }
      }
      assertTrue("launcher started a member:\n" + out, memberPid > 0);
      Optional<ProcessHandle> member = ProcessHandle.of(memberPid);
      assertTrue("member is running before the kill", member.isPresent() && member.get().isAlive());

      launcher.destroyForcibly(); // SIGKILL: no shutdown hook runs in the launcher
      assertTrue(launcher.waitFor(30, TimeUnit.SECONDS));

      long deadline = System.currentTimeMillis() + 30_000;
      while (member.get().isAlive() && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
      assertTrue("member pid " + memberPid + " still alive 30 s after its parent was killed",
          !member.get().isAlive());
    } finally {
      launcher.destroyForcibly();
      if (memberPid > 0) {
        ProcessHandle.of(memberPid).ifPresent(ProcessHandle::destroyForcibly);
      }
    }
  }
}
