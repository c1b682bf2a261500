package dev.forkset.it.pmem;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * A RegionServer process started by the harness does not outlive a test JVM that is killed
 * (SIGKILL, so no shutdown hook runs): it halts when its stdin pipe from the parent closes.
 */
public class RegionServerReapingIT {

  @Test
  public void killedTestJvm_takesItsRegionServerProcessWithIt() throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + "/bin/java");
    cmd.add("-Xmx256m");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    for (String key : System.getProperties().stringPropertyNames()) {
      if (key.startsWith("forkset.")) {
        cmd.add("-D" + key + "=" + System.getProperty(key));
      }
    }
    cmd.add(OrphanRegionServerLauncher.class.getName());
    Process launcher = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    long rsPid = -1;
    StringBuilder out = new StringBuilder();
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        out.append(line).append('\n');
        if (line.startsWith("REGIONSERVER_PID=")) {
          rsPid = Long.parseLong(line.substring("REGIONSERVER_PID=".length()));
          break;
        }
      }
      assertTrue("launcher started a RegionServer process:\n" + out, rsPid > 0);
      Optional<ProcessHandle> rs = ProcessHandle.of(rsPid);
      assertTrue("RegionServer process is running before the kill",
          rs.isPresent() && rs.get().isAlive());

      launcher.destroyForcibly(); // SIGKILL: no shutdown hook runs in the launcher
      assertTrue(launcher.waitFor(30, TimeUnit.SECONDS));

      long deadline = System.currentTimeMillis() + 30_000;
      while (rs.get().isAlive() && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
      assertFalse("RegionServer pid " + rsPid + " still alive 30 s after its parent was killed",
          rs.get().isAlive());
    } finally {
      launcher.destroyForcibly();
      if (rsPid > 0) {
        ProcessHandle.of(rsPid).ifPresent(ProcessHandle::destroyForcibly);
      }
    }
  }
}
