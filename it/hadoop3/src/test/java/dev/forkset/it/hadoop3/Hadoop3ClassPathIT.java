package dev.forkset.it.hadoop3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.junit.Test;

/**
 * The Hadoop 3 flavour's tests run what hbase-2.6.4-hadoop3-bin's lib/ holds: HRegion from the
 * custom hbase-server-2.6.4-hadoop3 jar, every other HBase artifact at 2.6.4-hadoop3, Hadoop 3,
 * and the module jars; no Hadoop 2 flavour jar anywhere on the class path.
 */
public class Hadoop3ClassPathIT {
  @Test
  public void classPath_isTheHadoop3FlavourWithTheCustomJarFirst() throws Exception {
    String version = System.getProperty("forkset.hbase.version");
    assertTrue("forkset.hbase.version=" + version, version.endsWith("-hadoop3"));

    Path hregion = Paths.get(HRegion.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    assertEquals(Paths.get(System.getProperty("forkset.hbase.custom.jar")).toRealPath(),
        hregion.toRealPath());
    try (JarFile jar = new JarFile(hregion.toFile())) {
      assertEquals("org.apache.hbase:hbase-server:" + version,
          jar.getManifest().getMainAttributes().getValue("Forkset-Upstream"));
    }

    assertEquals(version, org.apache.hadoop.hbase.util.VersionInfo.getVersion());
    String hadoop = org.apache.hadoop.util.VersionInfo.getVersion();
    assertTrue("Hadoop " + hadoop, hadoop.startsWith("3."));

    List<String> wrongFlavour = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Paths.get(entry).getFileName().toString();
      // hbase-annotations has no -hadoop3 build; its tests jar only holds category markers.
      if (name.startsWith("hbase-") && name.endsWith(".jar") && !name.contains("-hadoop3")
          && !name.startsWith("hbase-shaded-") && !name.startsWith("hbase-unsafe-")
          && !name.startsWith("hbase-noop-htrace-")
          && !name.startsWith("hbase-annotations-")
          && !name.startsWith("hbase-memstore-fix-") && !name.startsWith("hbase-pmem-cache-")) {
        wrongFlavour.add(entry);
      }
      if (name.matches("hadoop-.*-2\\.\\d+\\.\\d+.*\\.jar")) {
        wrongFlavour.add(entry);
      }
    }
    assertEquals("Hadoop 2 flavour jars on the class path", List.of(), wrongFlavour);

    Class.forName("dev.forkset.hbase.memstore.MemstoreFixConfig");
    Class.forName("dev.forkset.hbase.pmem.PmemCacheConfig");
  }
}
