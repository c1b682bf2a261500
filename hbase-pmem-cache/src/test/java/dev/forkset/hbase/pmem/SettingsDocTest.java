package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;

import org.junit.Test;

/** The "Settings" table of docs/hbase-pmem-cache.md is the one {@link #render()} produces. */
public class SettingsDocTest {

  static String render() {
    StringBuilder sb = new StringBuilder();
    sb.append("| setting | default | accepted | meaning |\n");
    sb.append("|---|---|---|---|\n");
    for (PmemCacheConfig.Setting s : PmemCacheConfig.settings()) {
      sb.append("| `").append(s.name).append("`").append(s.hbaseKey ? " (HBase)" : "")
          .append(" | ").append(s.defaultValue.startsWith("(") ? s.defaultValue
              : "`" + s.defaultValue + "`")
          .append(" | ").append(s.accepted).append(" | ").append(s.doc).append(" |\n");
    }
    return sb.toString();
  }

  static String documented() throws IOException {
    File doc = new File(System.getProperty("basedir", "."), "../docs/hbase-pmem-cache.md");
    List<String> lines = Files.readAllLines(doc.toPath(), StandardCharsets.UTF_8);
    StringBuilder table = new StringBuilder();
    boolean inSection = false;
    for (String line : lines) {
      if (line.startsWith("## ")) {
        inSection = line.equals("## Settings");
        continue;
      }
      if (inSection && line.startsWith("|")) {
        table.append(line).append('\n');
      }
    }
    return table.toString();
  }

  @Test
  public void settingsTable_matchesTheSettingsOfPmemCacheConfig() throws IOException {
    assertEquals("docs/hbase-pmem-cache.md, section \"## Settings\", must hold exactly this"
        + " table:\n" + render(), render(), documented());
  }
}
