package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.jar.Attributes;
import java.util.jar.Manifest;
import org.junit.Test;

public class JarIdentityTest {
  /** The main attributes of hbase-server-2.1.2.jar as Maven Central has it. */
  private static final String HBASE_212 = "Manifest-Version: 1.0\r\n"
      + "Implementation-Title: Apache HBase - Server\r\n"
      + "Implementation-Version: 2.1.2\r\n"
      + "Archiver-Version: Plexus Archiver\r\n"
      + "Built-By: stack\r\n"
      + "Specification-Vendor: The Apache Software Foundation\r\n"
      + "Specification-Title: Apache HBase - Server\r\n"
      + "Implementation-Vendor-Id: org.apache.hbase\r\n"
      + "Implementation-Vendor: The Apache Software Foundation\r\n"
      + "Created-By: Apache Maven 3.6.0\r\n"
      + "Build-Jdk: 1.8.0_191\r\n"
      + "Specification-Version: 2.1\r\n"
      + "Implementation-URL: http://hbase.apache.org/hbase-build-configuration/hbase-server\r\n"
      + "\r\n";

  /** The identity entries of hazelcast-5.3.8.jar (an OSGi bundle). */
  private static final String HAZELCAST_538 = "Manifest-Version: 1.0\r\n"
      + "Ant-Version: Apache Ant 1.9.14\r\n"
      + "Created-By: Apache Maven Bundle Plugin\r\n"
      + "Bnd-LastModified: 1721221867268\r\n"
      + "Build-Jdk: 1.8.0_412\r\n"
      + "Build-Jdk-Spec: 1.8\r\n"
      + "Built-By: ubuntu\r\n"
      + "Bundle-SymbolicName: com.hazelcast\r\n"
      + "Bundle-Vendor: Hazelcast, Inc.\r\n"
      + "Bundle-Version: 5.3.8\r\n"
      + "Export-Package: com.hazelcast.map;version=\"5.3.8\"\r\n"
      + "Implementation-Title: hazelcast\r\n"
      + "Implementation-Vendor: Hazelcast, Inc.\r\n"
      + "Implementation-Version: 5.3.8\r\n"
      + "Specification-Version: 5.3\r\n"
      + "Tool: Bnd-6.3.1.202206071316\r\n"
      + "\r\n";

  private static Attributes main(String manifest) throws Exception {
    return new Manifest(new ByteArrayInputStream(manifest.getBytes(StandardCharsets.UTF_8)))
        .getMainAttributes();
  }

  private static JarIdentity identity(String group, String artifact, String version,
      String upstreamGroup, String upstreamVersion, String release) {
    JarIdentity id = new JarIdentity();
    id.groupId = group;
    id.artifactId = artifact;
    id.version = version;
    id.upstreamGroupId = upstreamGroup;
    id.upstreamArtifactId = artifact;
    id.upstreamVersion = upstreamVersion;
    id.vendor = "forkset";
    id.createdBy = "dev.forkset:series-maven-plugin:1.0.0-SNAPSHOT (series:overlay)";
    id.jdkSpec = "17";
    id.release = release;
    return id;
  }

  @Test
  public void apply_givesTheForkVersionBuilderAndJdk_andKeepsUpstreamsUnderItsPrefix()
      throws Exception {
    Attributes a = main(HBASE_212);
    identity("dev.forkset.hbase", "hbase-server", "2.1.2-fork.3", "org.apache.hbase", "2.1.2", "8")
        .apply(a);
    assertEquals("2.1.2-fork.3", a.getValue("Implementation-Version"));
    assertEquals("forkset", a.getValue("Implementation-Vendor"));
    assertEquals("dev.forkset.hbase", a.getValue("Implementation-Vendor-Id"));
    assertEquals("forkset", a.getValue("Built-By"));
    assertEquals("dev.forkset:series-maven-plugin:1.0.0-SNAPSHOT (series:overlay)",
        a.getValue("Created-By"));
    assertEquals("17", a.getValue("Build-Jdk-Spec"));
    assertEquals("8", a.getValue("Forkset-Javac-Release"));
    assertEquals("dev.forkset.hbase:hbase-server:2.1.2-fork.3", a.getValue("Forkset-Artifact"));
    assertNull("a JDK patch release would make the bytes depend on the build machine",
        a.getValue("Build-Jdk"));
    assertNull(a.getValue("Implementation-URL"));
    assertNull(a.getValue("Archiver-Version"));
    assertNull("not experimental", a.getValue("Forkset-Experimental"));
    // What upstream said stays readable.
    assertEquals("2.1.2", a.getValue("Forkset-Upstream-Implementation-Version"));
    assertEquals("The Apache Software Foundation", a.getValue("Forkset-Upstream-Implementation-Vendor"));
    assertEquals("org.apache.hbase", a.getValue("Forkset-Upstream-Implementation-Vendor-Id"));
    assertEquals("stack", a.getValue("Forkset-Upstream-Built-By"));
    assertEquals("1.8.0_191", a.getValue("Forkset-Upstream-Build-Jdk"));
    assertEquals("Apache Maven 3.6.0", a.getValue("Forkset-Upstream-Created-By"));
    assertEquals("http://hbase.apache.org/hbase-build-configuration/hbase-server",
        a.getValue("Forkset-Upstream-Implementation-URL"));
    // The specification and title are upstream's: the API gate keeps the API the same.
    assertEquals("The Apache Software Foundation", a.getValue("Specification-Vendor"));
    assertEquals("2.1", a.getValue("Specification-Version"));
    assertEquals("Apache HBase - Server", a.getValue("Implementation-Title"));
  }

  @Test
  public void apply_onAnOsgiBundle_setsAnOsgiBundleVersion_andKeepsThePackageVersions()
      throws Exception {
    Attributes a = main(HAZELCAST_538);
    identity("dev.forkset.hazelcast", "hazelcast", "5.3.8-fork.3", "com.hazelcast", "5.3.8", "8")
        .apply(a);
    assertEquals("5.3.8-fork.3", a.getValue("Implementation-Version"));
    assertEquals("5.3.8.fork-3", a.getValue("Bundle-Version"));
    assertEquals("forkset", a.getValue("Bundle-Vendor"));
    assertEquals("forkset", a.getValue("Built-By"));
    assertEquals("5.3.8", a.getValue("Forkset-Upstream-Bundle-Version"));
    assertEquals("Hazelcast, Inc.", a.getValue("Forkset-Upstream-Bundle-Vendor"));
    assertEquals("ubuntu", a.getValue("Forkset-Upstream-Built-By"));
    assertEquals("1721221867268", a.getValue("Forkset-Upstream-Bnd-LastModified"));
    assertNull(a.getValue("Bnd-LastModified"));
    assertNull(a.getValue("Tool"));
    assertEquals("com.hazelcast", a.getValue("Bundle-SymbolicName"));
    assertEquals("com.hazelcast.map;version=\"5.3.8\"", a.getValue("Export-Package"));
  }

  @Test
  public void apply_withoutABundleVersion_addsNoOsgiEntries() throws Exception {
    Attributes a = main(HBASE_212);
    identity("g", "a", "1.0-fork.1", "u", "1.0", "8").apply(a);
    assertNull(a.getValue("Bundle-Version"));
    assertNull(a.getValue("Bundle-Vendor"));
  }

  @Test
  public void osgiVersion_isMajorMinorMicroAndAQualifier() {
    assertEquals("5.7.0.fork-3", JarIdentity.osgiVersion("5.7.0-fork.3"));
    assertEquals("2.6.4.hadoop3-fork-3", JarIdentity.osgiVersion("2.6.4-hadoop3-fork.3"));
    assertEquals("5.7.0", JarIdentity.osgiVersion("5.7"));
  }

  @Test
  public void apply_onAnExperimentalLine_saysWhyOnOneLine() throws Exception {
    Attributes a = main(HBASE_212);
    JarIdentity id = identity("g", "a", "3.0.0-fork.1", "u", "3.0.0", "17");
    id.experimental = "  compiled against pre-releases,\n   until they resolve ";
    assertTrue(id.isExperimental());
    id.apply(a);
    assertEquals("compiled against pre-releases, until they resolve",
        a.getValue("Forkset-Experimental"));
    id.experimental = "";
    assertFalse(id.isExperimental());
    id.experimental = "${line.experimental}";
    assertFalse("an unset property is not a reason", id.isExperimental());
  }

  @Test
  public void apply_isTheSameOnEveryCall() throws Exception {
    Attributes a = main(HAZELCAST_538);
    Attributes b = main(HAZELCAST_538);
    JarIdentity id = identity("g", "a", "5.3.8-fork.3", "u", "5.3.8", "8");
    id.apply(a);
    id.apply(b);
    assertEquals(bytes(a), bytes(b));
  }

  @Test
  public void pomXml_setsTheProjectsVersionAndLeavesTheParentsAndTheRest() {
    JarIdentity id = identity("dev.forkset.hbase", "hbase-server", "2.1.2-fork.3",
        "org.apache.hbase", "2.1.2", "8");
    assertEquals("META-INF/maven/org.apache.hbase/hbase-server/pom.xml", id.pomXmlEntry());
    String inherited = "<project>\n  <parent>\n    <artifactId>hbase-build-configuration"
        + "</artifactId>\n    <version>2.1.2</version>\n  </parent>\n  <artifactId>hbase-server"
        + "</artifactId>\n  <dependencies><dependency><version>2.1.2</version></dependency>"
        + "</dependencies>\n</project>\n";
    String out = new String(id.pomXml(inherited.getBytes(StandardCharsets.UTF_8)),
        StandardCharsets.UTF_8);
    assertTrue(out, out.contains("<parent>\n    <artifactId>hbase-build-configuration"
        + "</artifactId>\n    <version>2.1.2</version>\n  </parent>"));
    assertTrue(out, out.contains("<artifactId>hbase-server</artifactId><version>2.1.2-fork.3"
        + "</version><!-- dev.forkset.hbase:hbase-server:2.1.2-fork.3, built by forkset from"
        + " org.apache.hbase:hbase-server:2.1.2 and a patch series -->\n"));
    assertTrue(out, out.contains("<dependency><version>2.1.2</version></dependency>"));
    String own = "<project>\n  <groupId>org.apache.hbase</groupId>\n  <artifactId>hbase-server"
        + "</artifactId>\n  <version>2.1.2</version>\n  <name>x</name>\n</project>\n";
    out = new String(id.pomXml(own.getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
    assertEquals(own.replace("<version>2.1.2</version>", "<version>2.1.2-fork.3</version>"
        + "<!-- dev.forkset.hbase:hbase-server:2.1.2-fork.3, built by forkset from"
        + " org.apache.hbase:hbase-server:2.1.2 and a patch series -->"), out);
  }

  @Test
  public void pomProperties_saysTheForkVersionOfTheUpstreamArtifact_withoutADate()
      throws Exception {
    JarIdentity id = identity("dev.forkset.hbase", "hbase-server", "2.6.4-fork.4",
        "org.apache.hbase", "2.6.4", "8");
    assertEquals("META-INF/maven/org.apache.hbase/hbase-server/pom.properties",
        id.pomPropertiesEntry());
    Properties p = new Properties();
    p.load(new ByteArrayInputStream(id.pomProperties()));
    assertEquals("2.6.4-fork.4", p.getProperty("version"));
    assertEquals("org.apache.hbase", p.getProperty("groupId"));
    assertEquals("hbase-server", p.getProperty("artifactId"));
    String text = new String(id.pomProperties(), StandardCharsets.ISO_8859_1);
    assertTrue(text, text.startsWith("# dev.forkset.hbase:hbase-server:2.6.4-fork.4, built by"
        + " forkset from org.apache.hbase:hbase-server:2.6.4"));
    assertEquals("one comment line, no build date", 1, text.lines()
        .filter(l -> l.startsWith("#")).count());
  }

  private static String bytes(Attributes main) throws Exception {
    Manifest m = new Manifest();
    m.getMainAttributes().putAll(main);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    m.write(out);
    return out.toString(StandardCharsets.UTF_8);
  }
}
