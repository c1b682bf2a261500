package dev.forkset.series;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;

/** SHA-256 sums as {@code sha256sum} writes and checks them ({@code sha256sum -c x.sha256}). */
final class Checksums {
  private Checksums() {}

  /** Lower-case hex SHA-256 of a file. */
  static String sha256(Path file) throws IOException {
    MessageDigest sha = Revisions.sha256();
    byte[] buffer = new byte[1 << 16];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n; (n = in.read(buffer)) > 0;) {
        sha.update(buffer, 0, n);
      }
    }
    return Revisions.hex(sha.digest());
  }

  /** Writes {@code <file>.sha256} beside the file ("hash  name", as sha256sum) and returns it. */
  static Path write(Path file) throws IOException {
    Path sum = file.resolveSibling(file.getFileName() + ".sha256");
    Files.write(sum, (sha256(file) + "  " + file.getFileName() + "\n")
        .getBytes(StandardCharsets.US_ASCII));
    return sum;
  }
}
