package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.Test;

/** The operator's table of settings in docs/hazelcast-eviction.md is the one the code has. */
public class SettingsDocTest {
  private static final Path DOC = Paths.get("..", "docs", "hazelcast-eviction.md");

  /** The "Settings" table as {@link GcAwareEvictionConfig#settings()} renders it. */
  static String table() {
    StringBuilder b = new StringBuilder();
    b.append("| setting | default | accepted | meaning |\n|---|---|---|---|\n");
    for (GcAwareEvictionConfig.Setting s : GcAwareEvictionConfig.settings()) {
      b.append("| `").append(s.name).append("` | `").append(s.defaultValue).append("` | ")
          .append(s.accepted).append(" | ").append(s.doc).append(" |\n");
    }
    return b.toString();
  }

  @Test
  public void settingsTable_inTheModuleDoc_matchesTheCode() throws IOException {
    String doc = new String(Files.readAllBytes(DOC), StandardCharsets.UTF_8);
    String expected = table();
    assertTrue(DOC + " has no \"## Settings\" section; add one with:\n\n" + expected,
        doc.contains("\n## Settings\n"));
    assertTrue(DOC + ": the Settings table differs from GcAwareEvictionConfig.settings();"
        + " replace it by:\n\n" + expected, doc.contains("\n" + expected));
  }
}
