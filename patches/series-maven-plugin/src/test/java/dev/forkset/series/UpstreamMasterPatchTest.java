package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.Test;

/**
 * patches/hbase/upstream-master holds patches in the layout of HBase's master branch, to offer
 * upstream (docs/upstreaming.md): there the RegionServer metrics source and its implementation
 * both live in hbase-hadoop-compat (no hbase-hadoop2-compat). No line builds them; this checks
 * that each applies exactly, blob for blob, to the newest released sources in that layout:
 * hbase-server 3.0.0 and hbase-hadoop-compat 3.0.0-beta-1 (Maven Central has no
 * hbase-hadoop-compat 3.0.0).
 */
public class UpstreamMasterPatchTest {
  private static final Path ROOT = Paths.get(System.getProperty("forkset.root", "../.."));
  private static final Path JARS =
      Paths.get(System.getProperty("upstream.sources", "target/upstream-sources"));
  private static final String[][] MODULES = {
    {"hbase-server", "hbase-server-3.0.0-sources.jar"},
    {"hbase-hadoop-compat", "hbase-hadoop-compat-3.0.0-beta-1-sources.jar"},
  };

  @Test
  public void everyPatch_appliesExactlyToTheReleasedSourcesOfMastersLayout() throws Exception {
    Path dir = ROOT.resolve("patches/hbase/upstream-master");
    List<Path> patches;
    try (Stream<Path> s = Files.list(dir)) {
      patches = s.filter(p -> p.toString().endsWith(".patch")).sorted()
          .collect(Collectors.toList());
    }
    assertTrue("patches in " + dir, !patches.isEmpty());
    Set<String> built = Set.of("hbase-server", "hbase-hadoop-compat");
    for (Path file : patches) {
      Series.Patch patch = Series.Patch.parse(file.getFileName().toString(),
          Files.readAllBytes(file), Set.of("hbase-memstore-fix", "hbase-pmem-cache"));
      int sections = 0;
      List<String> notes = new ArrayList<>();
      for (String[] m : MODULES) {
        Path jar = JARS.resolve(m[1]);
        assertTrue(jar + " is missing: add it to the upstream-sources execution",
            Files.isRegularFile(jar));
        Series.Patch own = Series.ownSections(patch, m[0], built);
        sections += own.files.size();
        try (ZipFile sources = new ZipFile(jar.toFile())) {
          Series.Tree tree = new Series.Tree(sources, m[0] + "/src/main/java/",
              m[0] + "/src/test/java/");
          tree.apply(own); // exact: no offset, the index lines' blobs
          notes.addAll(tree.notes);
        }
      }
      assertEquals(file + ": every section is under hbase-server or hbase-hadoop-compat",
          patch.files.size(), sections);
      assertEquals(file + " is made against exactly these sources", List.of(), notes);
    }
  }
}
