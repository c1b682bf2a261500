package dev.forkset.hbase21;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

import dev.forkset.childjvm.ChildJvm;
import java.io.IOException;
import java.util.Collections;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class CommandChannelTest {
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void call_afterACallWhoseWaitTimedOut_getsItsOwnAnswer() throws Exception {
    try (ChildJvm child = ChildJvm.builder("slow", SlowAnswers.class.getName())
        .classPathOfThisJvm().heap("64m").dir(tmp.getRoot().toPath()).start()) {
      CommandChannel channel = new CommandChannel(child, tmp.getRoot().toPath().resolve("none"));
      channel.answer(0, 60_000, "start");
      try {
        channel.call(100, "2000 late");
        fail("the answer came within 100 ms of a command that takes 2 s");
      } catch (IOException expected) {
        // the wait timed out; the child answers later
      }
      assertEquals(Collections.singletonMap("word", "mine"), channel.call(60_000, "0 mine"));
      assertEquals(Collections.singletonMap("word", "next"), channel.call(60_000, "0 next"));
    }
  }
}
