package dev.forkset.hbase.memstore;

import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.Test;

/** The settings table of docs/hbase-memstore-fix.md is the one MemstoreFixConfig renders. */
public class SettingsDocTest {

  @Test
  public void docsSettingsTableMatchesTheCode() throws Exception {
    Path doc = Paths.get(System.getProperty("basedir", "."), "..", "docs", "hbase-memstore-fix.md");
    assertTrue(doc + " missing", Files.isRegularFile(doc));
    String text = new String(Files.readAllBytes(doc), StandardCharsets.UTF_8);
    String expected = MemstoreFixConfig.settingsTable();
    if (!text.contains(expected)) {
      fail(doc + " has no settings table, or an outdated one. Put this under \"## Settings\":\n\n"
          + expected);
    }
  }
}
