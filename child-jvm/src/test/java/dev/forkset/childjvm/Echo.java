package dev.forkset.childjvm;

import java.util.concurrent.TimeUnit;

/**
 * A child for {@link ChildJvmTest}: prints "ready", then answers each line it is sent: "echo x"
 * with "echoed x", "exit n" by exiting with n, "hook" by registering a shutdown hook that prints
 * "hook ran", "spawn" by starting a grandchild Echo and printing its pid.
 */
public final class Echo {
  private Echo() {}

  public static void main(String[] args) throws Exception {
    System.out.println("ready " + String.join(" ", args));
    System.out.flush();
    while (true) {
      String line = ChildMain.nextLine(1, TimeUnit.HOURS);
      if (line == null) {
        continue;
      }
      if (line.startsWith("echo ")) {
        System.out.println("echoed " + line.substring(5));
      } else if (line.startsWith("exit ")) {
        System.exit(Integer.parseInt(line.substring(5)));
      } else if (line.equals("hook")) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("hook ran")));
        System.out.println("hooked");
      } else if (line.equals("spawn")) {
        ChildJvm grandchild = ChildJvm.builder("grandchild", Echo.class.getName())
            .classPathOfThisJvm().dir(java.nio.file.Paths.get(args[0])).start();
        grandchild.awaitLineStartingWith("ready", 60, TimeUnit.SECONDS);
        System.out.println("grandchild " + grandchild.pid());
      }
      System.out.flush();
    }
  }
}
