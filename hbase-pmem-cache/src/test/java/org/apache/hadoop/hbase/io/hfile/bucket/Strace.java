package org.apache.hadoop.hbase.io.hfile.bucket;

import dev.forkset.childjvm.ChildJvm;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Assume;

/**
 * The file-system system calls of a child JVM, traced with strace: which path each open returned
 * an fd for, each rename and each fsync, in order. Tests that use it are skipped where strace is
 * missing or may not trace.
 */
final class Strace {
  private static final Pattern CALL =
      Pattern.compile("^(\\d+)\\s+(\\w+)\\((.*)\\)\\s+=\\s+(-?\\d+)");
  private static final Pattern QUOTED = Pattern.compile("\"([^\"]*)\"");

  /** One traced call: a rename (from, to) or an fsync/fdatasync of path. */
  static final class Event {
    final String call;
    final String path;
    final String to;

    Event(String call, String path, String to) {
      this.call = call;
      this.path = path;
      this.to = to;
    }

    @Override
    public String toString() {
      return call + "(" + path + (to == null ? "" : " -> " + to) + ")";
    }
  }

  private Strace() {}

  /** Runs the child under strace and returns its renames and syncs, with the child's output. */
  static List<Event> run(ChildJvm.Builder jvm, File work, StringBuilder output)
      throws IOException, InterruptedException {
    File trace = new File(work, "strace.txt");
    ChildJvm child;
    try {
      child = jvm.wrapper("strace", "-f", "--seccomp-bpf", "-e",
          "trace=open,openat,rename,renameat,renameat2,fsync,fdatasync", "-o", trace.getPath())
          .start();
    } catch (IOException e) {
      Assume.assumeNoException("strace is not installed", e);
      return null;
    }
    int exit;
    try {
      exit = child.waitFor(180, TimeUnit.SECONDS);
    } finally {
      child.close();
    }
    String printed = child.logText();
    printed = printed.substring(printed.indexOf('\n') + 1); // after the command line
    output.append(printed);
    Assume.assumeFalse("strace cannot trace here: " + printed,
        exit != 0 && printed.startsWith("strace:"));
    List<Event> events = new ArrayList<>();
    Map<String, String> fds = new HashMap<>();
    Map<String, String> unfinished = new HashMap<>();
    for (String raw : Files.readAllLines(trace.toPath(), StandardCharsets.UTF_8)) {
      String line = raw;
      String pid = line.split("\\s+", 2)[0];
      if (line.endsWith("<unfinished ...>")) {
        unfinished.put(pid, line.substring(0, line.length() - "<unfinished ...>".length()));
        continue;
      }
      if (line.contains(" resumed>")) {
        String head = unfinished.remove(pid);
        if (head == null) {
          continue;
        }
        line = head + line.substring(line.indexOf(" resumed>") + 9);
      }
      Matcher m = CALL.matcher(line);
      if (!m.find()) {
        continue;
      }
      String call = m.group(2);
      String args = m.group(3);
      String result = m.group(4);
      List<String> paths = new ArrayList<>();
      Matcher q = QUOTED.matcher(args);
      while (q.find()) {
        paths.add(q.group(1));
      }
      if ((call.equals("open") || call.equals("openat")) && !result.startsWith("-")) {
        fds.put(result, paths.isEmpty() ? "?" : paths.get(0));
      } else if (call.startsWith("rename") && paths.size() == 2 && result.equals("0")) {
        events.add(new Event("rename", paths.get(0), paths.get(1)));
      } else if (call.equals("fsync") || call.equals("fdatasync")) {
        String fd = args.trim();
        events.add(new Event(call, fds.containsKey(fd) ? fds.get(fd) : "fd " + fd, null));
      }
    }
    if (exit != 0) {
      throw new AssertionError("traced child exited with " + exit + ":\n" + printed);
    }
    return events;
  }

  /** Renames under {@code root} that no fsync of the target's directory follows. */
  static List<Event> renamesWithoutDirectorySync(List<Event> events, File root) {
    List<Event> bad = new ArrayList<>();
    for (int i = 0; i < events.size(); i++) {
      Event e = events.get(i);
      if (!e.call.equals("rename") || !e.to.startsWith(root.getPath())) {
        continue;
      }
      String dir = new File(e.to).getParent();
      boolean synced = false;
      for (int j = i + 1; j < events.size() && !synced; j++) {
        synced = !events.get(j).call.equals("rename") && dir.equals(events.get(j).path);
      }
      if (!synced) {
        bad.add(e);
      }
    }
    return bad;
  }
}
