package dev.forkset.series;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the git binary in one repository, isolated from the user's and the system's git
 * configuration (no autocrlf, no signing, no diff or format settings), so that what it writes
 * depends only on the repository and the arguments.
 *
 * <ol>
 *   <li>Configuration: {@code GIT_CONFIG_NOSYSTEM}, {@code GIT_CONFIG_GLOBAL} and {@code HOME}
 *       point at an empty folder; inherited {@code GIT_*} variables (a hook's {@code GIT_DIR})
 *       are dropped.
 *   <li>Commits made here have a fixed committer ({@link #NAME}, {@link #EMAIL}); with the
 *       author date as committer date ({@code git am --committer-date-is-author-date}) the same
 *       patches on the same base give the same commit ids anywhere.
 *   <li>Each command has a time limit, so a git waiting for input cannot hang the build.
 * </ol>
 */
final class Git {
  static final String NAME = "forkset series";
  static final String EMAIL = "series@forkset.invalid";
  private static final long TIMEOUT_MINUTES = 10;

  private final Path dir;
  private final Path home;

  /** Git in {@code dir}; {@code home} is an empty scratch folder used as HOME. */
  Git(Path dir, Path home) {
    this.dir = dir;
    this.home = home;
  }

  Path dir() {
    return dir;
  }

  /** What a git command printed and how it ended. */
  static final class Outcome {
    final int exit;
    final String out;
    final String err;

    Outcome(int exit, String out, String err) {
      this.exit = exit;
      this.out = out;
      this.err = err;
    }
  }

  /** Runs git with {@code args}; fails with git's message unless it exits with 0. Returns stdout. */
  String run(String... args) throws PatchFailure, IOException {
    return run(Map.of(), args);
  }

  String run(Map<String, String> env, String... args) throws PatchFailure, IOException {
    Outcome o = exec(env, args);
    if (o.exit != 0) {
      throw new PatchFailure("git " + String.join(" ", args) + " (in " + dir + ") failed with exit"
          + " code " + o.exit + ":\n" + indent(o.err.isEmpty() ? o.out : o.err));
    }
    return o.out;
  }

  /** Something that writes a command's standard input. */
  interface Input {
    void writeTo(java.io.OutputStream out) throws IOException, PatchFailure;
  }

  Outcome exec(Map<String, String> env, String... args) throws PatchFailure, IOException {
    return exec(env, null, args);
  }

  /** Runs git with {@code input} on its standard input; fails unless it exits with 0. */
  String feed(Input input, String... args) throws PatchFailure, IOException {
    Outcome o = exec(Map.of(), input, args);
    if (o.exit != 0) {
      throw new PatchFailure("git " + String.join(" ", args) + " (in " + dir + ") failed with exit"
          + " code " + o.exit + ":\n" + indent(o.err.isEmpty() ? o.out : o.err));
    }
    return o.out;
  }

  private Outcome exec(Map<String, String> env, Input input, String... args)
      throws PatchFailure, IOException {
    List<String> command = new ArrayList<>();
    command.add("git");
    command.addAll(Arrays.asList(args));
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
    Map<String, String> e = pb.environment();
    e.keySet().removeIf(k -> k.startsWith("GIT_"));
    e.put("HOME", home.toString());
    e.put("XDG_CONFIG_HOME", home.toString());
    e.put("GIT_CONFIG_NOSYSTEM", "1");
    e.put("GIT_CONFIG_GLOBAL", home.resolve("gitconfig").toString());
    e.put("GIT_TERMINAL_PROMPT", "0");
    e.put("GIT_COMMITTER_NAME", NAME);
    e.put("GIT_COMMITTER_EMAIL", EMAIL);
    e.put("LC_ALL", "C");
    e.put("TZ", "UTC");
    e.putAll(env);
    Path out = Files.createTempFile(home, "out", ".txt");
    Path err = Files.createTempFile(home, "err", ".txt");
    try {
      if (input == null) {
        pb.redirectInput(ProcessBuilder.Redirect.from(nullFile()));
      }
      pb.redirectOutput(out.toFile());
      pb.redirectError(err.toFile());
      Process p;
      try {
        p = pb.start();
      } catch (IOException notFound) {
        throw new PatchFailure("Cannot run git (" + notFound.getMessage() + "). The series goals"
            + " export, refresh and convert use the git binary: install git 2.x and put it on the"
            + " PATH. (Building the jars does not need git.)");
      }
      if (input != null) {
        try (java.io.OutputStream in = new java.io.BufferedOutputStream(p.getOutputStream(), 1 << 16)) {
          input.writeTo(in);
        } catch (IOException broken) {
          // git stopped reading: its exit code and message below say why
        }
      }
      try {
        if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
          p.destroyForcibly();
          throw new PatchFailure("git " + String.join(" ", args) + " (in " + dir + ") did not end"
              + " within " + TIMEOUT_MINUTES + " minutes; stopped it.");
        }
      } catch (InterruptedException ie) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
        throw new IOException("Interrupted while git ran", ie);
      }
      return new Outcome(p.exitValue(), new String(Files.readAllBytes(out), StandardCharsets.UTF_8),
          new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  private static java.io.File nullFile() {
    return new java.io.File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
  }

  static String indent(String text) {
    StringBuilder b = new StringBuilder();
    for (String l : text.strip().split("\n")) {
      b.append("    ").append(l).append('\n');
    }
    return b.toString().stripTrailing();
  }
}
