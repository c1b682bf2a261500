package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.cyclonedx.Version;
import org.cyclonedx.model.Bom;
import org.cyclonedx.model.Component;
import org.cyclonedx.model.Patch;
import org.cyclonedx.parsers.JsonParser;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class SbomTest {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private Sbom.Input input() throws Exception {
    Path root = tmp.getRoot().toPath();
    Map<String, byte[]> up = new TreeMap<>(Map.of("p/A.class", new byte[] {1}));
    Map<String, byte[]> custom = new TreeMap<>(Map.of("p/A.class", new byte[] {2}));
    Sbom.Input in = new Sbom.Input();
    in.customGav = "dev.forkset.hbase:hbase-server:2.6.4-fork.3";
    in.customJar = Compiled.zip(root.resolve("custom.jar"), custom);
    in.upstreamGav = "org.apache.hbase:hbase-server:2.6.4";
    in.upstreamJar = Compiled.zip(root.resolve("upstream.jar"), up);
    in.seriesSha256 = "ab".repeat(32);
    in.revision = 3;
    in.replacedClasses = List.of("p/A.class", "p/A$1.class");
    in.timestamp = Instant.parse("2026-01-01T00:00:00Z");
    in.toolVersion = "1.0.0-SNAPSHOT";
    in.patches = List.of(
        new Sbom.PatchRef("0001-a.patch", "HBASE-21738", "hbase-memstore-fix", "Size memstores in O(1)",
            "patches/hbase/2.6.4/0001-a.patch", "diff --git a/x b/x\n"),
        new Sbom.PatchRef("0002-b.patch", "hazelcast/hazelcast#15715", "none", "Hook",
            "patches/hbase/2.6.4/0002-b.patch", "diff\n"),
        new Sbom.PatchRef("0003-c.patch", "none", "none", "Local only",
            "patches/hbase/2.6.4/0003-c.patch", "diff\n"));
    return in;
  }

  @Test
  public void json_isAValidCycloneDx16Bom() throws Exception {
    byte[] json = Sbom.json(input()).getBytes(StandardCharsets.UTF_8);
    JsonParser parser = new JsonParser();
    assertEquals(List.of(), parser.validate(json, Version.VERSION_16));
  }

  @Test
  public void json_namesTheCustomJarTheUpstreamArtifactAndThePatches() throws Exception {
    Sbom.Input in = input();
    Bom bom = new JsonParser().parse(Sbom.json(in).getBytes(StandardCharsets.UTF_8));
    Component jar = bom.getMetadata().getComponent();
    assertEquals("pkg:maven/dev.forkset.hbase/hbase-server@2.6.4-fork.3?type=jar", jar.getPurl());
    assertEquals(Checksums.sha256(in.customJar), jar.getHashes().get(0).getValue());
    assertEquals("Apache-2.0", jar.getLicenses().getLicenses().get(0).getId());

    Component upstream = jar.getPedigree().getAncestors().getComponents().get(0);
    assertEquals("pkg:maven/org.apache.hbase/hbase-server@2.6.4?type=jar", upstream.getPurl());
    assertEquals(Checksums.sha256(in.upstreamJar), upstream.getHashes().get(0).getValue());

    List<Patch> patches = jar.getPedigree().getPatches();
    assertEquals(3, patches.size());
    assertEquals(Patch.Type.UNOFFICIAL, patches.get(0).getType());
    assertEquals("patches/hbase/2.6.4/0001-a.patch", patches.get(0).getDiff().getUrl());
    assertEquals("base64", patches.get(0).getDiff().getText().getEncoding());
    assertEquals("diff --git a/x b/x\n", new String(java.util.Base64.getDecoder().decode(
        patches.get(0).getDiff().getText().getText()), StandardCharsets.UTF_8));
    assertEquals("HBASE-21738", patches.get(0).getResolves().get(0).getId());
    assertEquals("https://issues.apache.org/jira/browse/HBASE-21738",
        patches.get(0).getResolves().get(0).getSource().getUrl().toString());
    assertEquals("https://github.com/hazelcast/hazelcast/issues/15715",
        patches.get(1).getResolves().get(0).getSource().getUrl().toString());
    assertTrue("no upstream issue, nothing resolved", patches.get(2).getResolves() == null
        || patches.get(2).getResolves().isEmpty());

    String props = jar.getProperties().stream().map(p -> p.getName() + "=" + p.getValue())
        .collect(java.util.stream.Collectors.joining(", "));
    assertTrue(props, props.contains("forkset:replaced-class") && props.contains("p/A$1.class"));
    assertTrue(props, props.contains("ab".repeat(32)));
  }

  @Test
  public void json_isTheSameOnEveryBuild() throws Exception {
    assertEquals(Sbom.json(input()), Sbom.json(input()));
  }

  @Test
  public void sha256_matchesSha256sum() throws Exception {
    Path f = tmp.newFile("x").toPath();
    Files.write(f, "abc".getBytes(StandardCharsets.US_ASCII));
    assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        Checksums.sha256(f));
    Path sum = Checksums.write(f);
    assertEquals("x.sha256", sum.getFileName().toString());
    assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  x\n",
        new String(Files.readAllBytes(sum), StandardCharsets.US_ASCII));
  }
}
