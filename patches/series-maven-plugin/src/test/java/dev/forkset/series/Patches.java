package dev.forkset.series;

import java.nio.charset.StandardCharsets;

/** Builds patch files for tests. */
final class Patches {
  static final String ZERO = "0000000000000000000000000000000000000000";

  private Patches() {}

  /** A git format-patch mail with {@code subject}, no upstream issue and no module, around {@code diff}. */
  static byte[] wrap(String subject, String diff) {
    return mail(subject, "Upstream: none\nForwarded: no\nModule: none\n", diff)
        .getBytes(StandardCharsets.UTF_8);
  }

  /** A git format-patch mail: {@code body} is the message after the subject. */
  static String mail(String subject, String body, String diff) {
    return "From " + ZERO + " Mon Sep 17 00:00:00 2001\n"
        + "From: A Developer <dev@example.org>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n"
        + "Subject: [PATCH] " + subject + "\n\n" + body + "---\n" + diff;
  }
}
