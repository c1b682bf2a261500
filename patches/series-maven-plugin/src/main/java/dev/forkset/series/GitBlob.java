package dev.forkset.series;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Git's object id of a file's content (SHA-1 of {@code "blob <size>\0" + bytes}), as written on
 * the {@code index <old>..<new>} line of a git diff. Lets the pipeline check that a patch was made
 * against exactly the upstream file and that applying it gives exactly the file git produced.
 */
final class GitBlob {
  /** The id of no file: the old side of a new file, the new side of a deleted one. */
  static final String NONE = "0000000000000000000000000000000000000000";

  private GitBlob() {}

  static String id(String content) {
    if (content == null) {
      return NONE;
    }
    byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      sha1.update(("blob " + bytes.length + "\0").getBytes(StandardCharsets.US_ASCII));
      byte[] digest = sha1.digest(bytes);
      StringBuilder hex = new StringBuilder(40);
      for (byte b : digest) {
        hex.append(String.format("%02x", b & 0xff));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is a required JDK algorithm", e);
    }
  }

  /** True when {@code abbreviated} (as on an index line, 7 to 40 hex digits) names {@code content}. */
  static boolean matches(String abbreviated, String content) {
    return id(content).startsWith(abbreviated);
  }
}
