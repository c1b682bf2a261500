package dev.forkset.it.hadoop3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * What an operator receives in target/dist/ (the last module of the reactor checks it, once
 * every line and module has put its jars there): per folder one custom jar of the folder's
 * upstream version with its SBOM and replaced-class list, a .sha256 beside every jar that
 * {@code sha256sum -c} accepts, and the module jars of the HBase default line and its Hadoop 3
 * flavour.
 */
public class DistFolderIT {
  private static final String EXPERIMENTAL_SUFFIX = "-experimental";
  private static final Pattern CUSTOM =
      Pattern.compile("(hbase-server|hbase-hadoop-compat|hbase-hadoop2-compat|hazelcast)-(.+)"
          + "-fork\\.(\\d+)\\.jar");

  private static Path dist() {
    String dir = System.getProperty("forkset.dist.dir");
    assertTrue("forkset.dist.dir=" + dir, dir != null && Files.isDirectory(Paths.get(dir)));
    return Paths.get(dir);
  }

  private static List<Path> list(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().collect(Collectors.toList());
    }
  }

  @Test
  public void everyFolder_holdsOneCustomJarWithItsSbomListAndChecksums() throws Exception {
    List<Path> folders = list(dist());
    assertTrue("target/dist has the lines' folders: " + folders, folders.size() >= 6);
    // The 3.0.0 line is experimental (patches/hbase/3.0.0/pom.xml, line.experimental).
    assertTrue("hbase-3.0.0 is marked experimental: " + folders,
        Files.isDirectory(dist().resolve("hbase-3.0.0" + EXPERIMENTAL_SUFFIX))
            && !Files.exists(dist().resolve("hbase-3.0.0")));
    for (Path folder : folders) {
      String folderName = folder.getFileName().toString();
      boolean experimentalFolder = folderName.endsWith(EXPERIMENTAL_SUFFIX);
      String version = folderName.replaceFirst("^(hbase|hazelcast)-", "")
          .replaceFirst(Pattern.quote(EXPERIMENTAL_SUFFIX) + "$", "");
      List<String> custom = new ArrayList<>();
      for (Path f : list(folder)) {
        String name = f.getFileName().toString();
        if (name.endsWith(".jar")) {
          assertChecksum(f);
          Matcher m = CUSTOM.matcher(name);
          if (m.matches()) {
            custom.add(name);
            assertEquals(folder + ": " + name + " is built from the folder's upstream version",
                version, m.group(2));
            String base = name.substring(0, name.length() - ".jar".length());
            String sbom = new String(Files.readAllBytes(folder.resolve(base + ".cdx.json")),
                StandardCharsets.UTF_8);
            assertTrue(base + ".cdx.json is CycloneDX", sbom.contains("\"bomFormat\" : \"CycloneDX\""));
            String jarVersion = m.group(2) + "-fork." + m.group(3);
            assertTrue(base + ".cdx.json names the jar", sbom.contains("@" + jarVersion + "?type=jar"));
            assertTrue(base + ".cdx.json names the upstream artifact",
                sbom.contains("/" + m.group(1) + "@" + version + "?type=jar\""));
            assertTrue(base + ".cdx.json carries the jar's SHA-256",
                sbom.contains("\"content\" : \"" + sha256(f) + "\""));
            assertIdentity(f, m.group(1), version, jarVersion, experimentalFolder);
            List<String> replaced = Files.readAllLines(folder.resolve(base + ".replaced-classes.txt"));
            assertFalse(base + ".replaced-classes.txt lists the replaced classes", replaced.isEmpty());
          }
        }
      }
      for (String legal : new String[] {"LICENSE", "NOTICE"}) {
        assertTrue(folder + " carries " + legal, Files.isRegularFile(folder.resolve(legal)));
      }
      assertTrue(folder + "/LICENSE is the Apache License 2.0", new String(
          Files.readAllBytes(folder.resolve("LICENSE")), StandardCharsets.UTF_8)
          .contains("Apache License"));
      // One custom jar per upstream artifact the folder's series changes (older versions are
      // removed): hbase-server or hazelcast, and for the 2.6.4 and 2.1.2 series
      // hbase-hadoop-compat and hbase-hadoop2-compat too, of the same revision.
      java.util.Set<String> artifacts = new java.util.TreeSet<>();
      java.util.Set<String> forks = new java.util.TreeSet<>();
      for (String name : custom) {
        Matcher m = CUSTOM.matcher(name);
        assertTrue(m.matches());
        assertTrue(folder + " holds one " + m.group(1) + " jar: " + custom, artifacts.add(m.group(1)));
        forks.add(m.group(3));
      }
      assertEquals(folder + ": its custom jars are of one revision: " + custom, 1, forks.size());
      boolean withCompat = folderName.startsWith("hbase-2.6.4") || folderName.equals("hbase-2.1.2");
      assertEquals(folder + ": " + custom, withCompat
          ? java.util.Set.of("hbase-server", "hbase-hadoop-compat", "hbase-hadoop2-compat")
          : java.util.Set.of(folderName.startsWith("hbase-") ? "hbase-server" : "hazelcast"),
          artifacts);
    }
    for (String line : new String[] {"hazelcast-5.7.0", "hazelcast-5.3.8"}) {
      List<String> names = list(dist().resolve(line)).stream()
          .map(p -> p.getFileName().toString()).collect(Collectors.toList());
      assertTrue(line + " has the hazelcast-eviction jar: " + names, names.stream()
          .anyMatch(n -> n.startsWith("hazelcast-eviction-") && n.endsWith(".jar")));
    }
    for (String line : new String[] {"hbase-2.6.4", "hbase-2.6.4-hadoop3"}) {
      List<String> names = list(dist().resolve(line)).stream()
          .map(p -> p.getFileName().toString()).collect(Collectors.toList());
      // The memstore fix lives in the custom hbase-server jar; its module jar (settings and
      // their check) is not deployed.
      assertTrue(line + " has no memstore module jar: " + names,
          names.stream().noneMatch(n -> n.startsWith("hbase-memstore-fix-")));
      assertTrue(line + " has the pmem module jar: " + names,
          names.stream().anyMatch(n -> n.startsWith("hbase-pmem-cache-") && n.endsWith(".jar")));
    }
  }

  /**
   * The custom jar says what it is (manifest and the upstream artifact's pom.properties): the
   * fork version, the project as builder and vendor, the JDK's specification version and the
   * javac release, never a JDK patch release; upstream's values under Forkset-Upstream-*; and
   * Forkset-Experimental exactly when the folder is marked experimental.
   */
  private static void assertIdentity(Path jar, String artifact, String upstreamVersion,
      String jarVersion, boolean experimentalFolder) throws IOException {
    try (JarFile file = new JarFile(jar.toFile())) {
      Attributes main = file.getManifest().getMainAttributes();
      String name = jar.getFileName().toString();
      assertEquals(name, jarVersion, main.getValue("Implementation-Version"));
      assertEquals(name, "forkset", main.getValue("Implementation-Vendor"));
      assertEquals(name, "forkset", main.getValue("Built-By"));
      assertTrue(name + " Created-By: " + main.getValue("Created-By"),
          main.getValue("Created-By").startsWith("dev.forkset:series-maven-plugin:"));
      assertTrue(name + " Build-Jdk-Spec: " + main.getValue("Build-Jdk-Spec"),
          main.getValue("Build-Jdk-Spec").matches("\\d+"));
      assertTrue(name + " Forkset-Javac-Release: " + main.getValue("Forkset-Javac-Release"),
          main.getValue("Forkset-Javac-Release").matches("8|11|17|21"));
      assertEquals(name + " has no JDK patch release", null, main.getValue("Build-Jdk"));
      assertEquals(name, upstreamVersion, main.getValue("Forkset-Upstream-Implementation-Version"));
      assertTrue(name, main.getValue("Forkset-Upstream-Implementation-Vendor") != null);
      assertEquals(name + ": Forkset-Experimental iff its folder is marked experimental",
          experimentalFolder, main.getValue("Forkset-Experimental") != null);
      String group = artifact.equals("hazelcast") ? "com.hazelcast" : "org.apache.hbase";
      Properties pom = new Properties();
      try (InputStream in = file.getInputStream(file.getEntry(
          "META-INF/maven/" + group + "/" + artifact + "/pom.properties"))) {
        pom.load(in);
      }
      assertEquals(name + " pom.properties", jarVersion, pom.getProperty("version"));
      assertEquals(name + " pom.properties", group, pom.getProperty("groupId"));
      java.util.zip.ZipEntry pomXml = file.getEntry(
          "META-INF/maven/" + group + "/" + artifact + "/pom.xml");
      if (pomXml != null) {
        try (InputStream in = file.getInputStream(pomXml)) {
          String xml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
          assertTrue(name + " pom.xml names the fork version",
              xml.contains("<version>" + jarVersion + "</version>"));
        }
      }
    }
  }

  private static void assertChecksum(Path jar) throws Exception {
    Path sum = jar.resolveSibling(jar.getFileName() + ".sha256");
    assertTrue(jar + " has a .sha256", Files.isRegularFile(sum));
    assertEquals(sum + " is what sha256sum -c reads",
        sha256(jar) + "  " + jar.getFileName() + "\n",
        new String(Files.readAllBytes(sum), StandardCharsets.US_ASCII));
  }

  private static String sha256(Path file) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buf = new byte[1 << 16];
      for (int n; (n = in.read(buf)) > 0;) {
        sha.update(buf, 0, n);
      }
    }
    StringBuilder sb = new StringBuilder();
    for (byte b : sha.digest()) {
      sb.append(String.format("%02x", b));
    }
    return sb.toString();
  }
}
