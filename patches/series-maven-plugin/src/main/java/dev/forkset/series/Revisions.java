package dev.forkset.series;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.maven.plugin.MojoFailureException;

/**
 * The version scheme of the custom jars: {@code <upstream version>-fork.<revision>}, where the
 * revision is the last line of the line's {@code revisions} file, a Debian-style changelog that
 * records, for each revision, the SHA-256 of the series it was built from. A series that changes
 * without a new revision fails the build, so a changed jar never keeps its version.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The digest covers the {@code series} file and, in series order, each patch it names
 *       (name, length, bytes): everything that decides the patched sources. Files the series
 *       does not name (tests kept beside the series, stray patches) do not count.
 *   <li>{@code revisions} lines are {@code <n> <sha256> <what changed>}, numbered from 1 without
 *       gaps; '#' starts a comment. It is append-only: a released revision's line never changes.
 * </ol>
 */
final class Revisions {
  /** Name of the file, in the series directory. */
  static final String FILE = "revisions";
  private static final Pattern LINE = Pattern.compile("(\\d+)\\s+([0-9a-f]{64})\\s+(\\S.*)");

  private final Path file;
  private final List<String> digests;

  private Revisions(Path file, List<String> digests) {
    this.file = file;
    this.digests = digests;
  }

  /** Hex SHA-256 of the series file and the patches it names, in order. */
  static String digest(Path seriesDir) throws IOException, MojoFailureException {
    MessageDigest sha = sha256();
    Path series = seriesDir.resolve(Series.SERIES_FILE);
    if (!Files.isRegularFile(series)) {
      throw new MojoFailureException("No series file at " + series + ".");
    }
    update(sha, Series.SERIES_FILE, Files.readAllBytes(series));
    for (String raw : Files.readAllLines(series, StandardCharsets.UTF_8)) {
      String name = raw.replaceAll("#.*", "").trim();
      if (name.isEmpty()) {
        continue;
      }
      Path patch = seriesDir.resolve(name);
      if (!Files.isRegularFile(patch)) {
        throw new MojoFailureException(series + " names " + name + ", but " + patch
            + " does not exist.");
      }
      update(sha, name, Files.readAllBytes(patch));
    }
    return hex(sha.digest());
  }

  private static void update(MessageDigest sha, String name, byte[] content) {
    sha.update((name + "\n" + content.length + "\n").getBytes(StandardCharsets.UTF_8));
    sha.update(content);
  }

  static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every JDK has SHA-256", e);
    }
  }

  static String hex(byte[] bytes) {
    StringBuilder sb = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) {
      sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return sb.toString();
  }

  /** Reads and checks the numbering of a revisions file. */
  static Revisions read(Path file) throws IOException, MojoFailureException {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new MojoFailureException("No revisions file at " + file + ". Each line's series"
          + " directory records its revisions there: '<n> <sha256 of the series> <what changed>'"
          + " per line, starting at 1 (docs/building.md, \"Versions\").");
    }
    List<String> digests = new ArrayList<>();
    int no = 0;
    for (String raw : lines) {
      no++;
      String line = raw.replaceAll("#.*", "").trim();
      if (line.isEmpty()) {
        continue;
      }
      Matcher m = LINE.matcher(line);
      if (!m.matches()) {
        throw new MojoFailureException(file + " line " + no + ": '" + raw + "' is not"
            + " '<n> <sha256 of the series, 64 hex digits> <what changed>'.");
      }
      int n = Integer.parseInt(m.group(1));
      if (n != digests.size() + 1) {
        throw new MojoFailureException(file + " line " + no + ": revision " + n + " follows "
            + (digests.isEmpty() ? "nothing" : "revision " + digests.size()) + "; revisions"
            + " are numbered 1, 2, 3, ... in order, one line each.");
      }
      digests.add(m.group(2));
    }
    if (digests.isEmpty()) {
      throw new MojoFailureException(file + " has no revision. Its first line is '1 <sha256 of"
          + " the series> <what the series holds>'.");
    }
    return new Revisions(file, digests);
  }

  /** The newest revision number. */
  int last() {
    return digests.size();
  }

  /** The series digest recorded for the newest revision. */
  String lastDigest() {
    return digests.get(digests.size() - 1);
  }

  /**
   * Fails unless the newest revision records {@code digest} and {@code version} is
   * {@code upstreamVersion-fork.<newest>}; the message says what to change where.
   */
  void check(String digest, String version, String upstreamVersion, String pom)
      throws MojoFailureException {
    String expected = version(upstreamVersion, last());
    if (!digest.equals(lastDigest())) {
      int next = last() + 1;
      throw new MojoFailureException("The series changed since revision " + last() + " ("
          + file + " records sha256 " + lastDigest() + ", the series now has " + digest + ")."
          + " A changed series must not keep the jar's version " + version + ". To release it,"
          + " append the line\n    " + next + " " + digest + " <what changed>\n  to " + file
          + " and set <version> in " + pom + " to " + version(upstreamVersion, next)
          + " (and the root pom's property naming this version, if there is one:"
          + " ProjectLayoutTest lists it).");
    }
    if (!expected.equals(version)) {
      throw new MojoFailureException("<version> in " + pom + " is " + version + ", but the"
          + " newest revision in " + file + " is revision " + last() + ": set it to "
          + expected + ".");
    }
  }

  /** {@code 2.6.4-fork.3}. */
  static String version(String upstreamVersion, int revision) {
    return upstreamVersion + "-fork." + revision;
  }
}
