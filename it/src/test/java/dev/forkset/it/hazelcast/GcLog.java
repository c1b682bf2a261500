package dev.forkset.it.hazelcast;

import dev.forkset.it.harness.MemberProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A G1 member's GC log (the harness writes it with {@code -Xlog:gc*}), read for the humongous
 * regions G1 reports after a full GC: the {@code gc+heap} line "GC(n) Humongous regions:
 * before->after" of that collection.
 */
final class GcLog {
  private static final Pattern SYSTEM_GC = Pattern.compile("GC\\((\\d+)\\) Pause Full \\(System\\.gc\\(\\)\\)");
  private static final Pattern HUMONGOUS =
      Pattern.compile("GC\\((\\d+)\\) Humongous regions: (\\d+)->(\\d+)");

  private final MemberProcess member;

  GcLog(MemberProcess member) {
    this.member = member;
  }

  /**
   * Runs a full GC in the member (System.gc through JMX) and returns the humongous regions G1
   * reports after it. Waits until the log holds that collection's line: a System.gc full GC with
   * an id above every one logged before the call.
   */
  int humongousAfterFullGc() throws Exception {
    int before = lastSystemGc(text());
    member.heapUsedAfterFullGc();
    return EvictionWaits.until(member.name() + ": the GC log reports the humongous regions after"
        + " the full GC that followed GC(" + before + ") (" + member.gcLogFile() + ")",
        () -> after(text(), before), n -> n >= 0);
  }

  private String text() throws IOException {
    return new String(Files.readAllBytes(member.gcLogFile()), StandardCharsets.UTF_8);
  }

  /** The id of the last System.gc full GC in {@code log}, -1 if none. */
  private static int lastSystemGc(String log) {
    Matcher m = SYSTEM_GC.matcher(log);
    int last = -1;
    while (m.find()) {
      last = Math.max(last, Integer.parseInt(m.group(1)));
    }
    return last;
  }

  /**
   * The humongous regions after the first System.gc full GC with an id above {@code before},
   * -1 while its line is not in the log.
   */
  private static int after(String log, int before) {
    int id = -1;
    Matcher m = SYSTEM_GC.matcher(log);
    while (m.find()) {
      int n = Integer.parseInt(m.group(1));
      if (n > before) {
        id = n;
        break;
      }
    }
    if (id < 0) {
      return -1;
    }
    Matcher h = HUMONGOUS.matcher(log);
    while (h.find()) {
      if (Integer.parseInt(h.group(1)) == id) {
        return Integer.parseInt(h.group(3));
      }
    }
    return -1;
  }
}
