package dev.forkset.hbase21;

import dev.forkset.childjvm.ChildMain;
import java.util.concurrent.TimeUnit;

/**
 * A child for {@link CommandChannelTest} that speaks the 2.1.2 children's protocol: answers its
 * start with {@code @@ 0 ok}, then each command {@code <delay ms> <word>}, in turn, after that
 * delay, with {@code @@ <n> ok word=<word>}.
 */
public final class SlowAnswers {
  private SlowAnswers() {}

  public static void main(String[] args) throws Exception {
    System.out.println("@@ 0 ok");
    System.out.flush();
    long n = 0;
    while (true) {
      String line = ChildMain.nextLine(1, TimeUnit.HOURS);
      if (line == null) {
        continue;
      }
      n++;
      String[] w = line.trim().split(" ");
      Thread.sleep(Long.parseLong(w[0]));
      System.out.println("@@ " + n + " ok word=" + w[1]);
      System.out.flush();
    }
  }
}
