package dev.forkset.series;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;

/**
 * What a custom jar says it is, in its manifest and in the upstream artifact's
 * {@code META-INF/maven/<groupId>/<artifactId>/pom.properties}: the custom version, who built it
 * and with which JDK, while what upstream said stays readable under {@code Forkset-Upstream-*}.
 *
 * <p>Main attributes that state the implementation's identity or describe the build that wrote
 * the jar ({@link #REWRITTEN}) are upstream's no longer: each upstream value moves to
 * {@code Forkset-Upstream-<name>}, and the identity ones get this build's values. Nothing here is
 * a build-time value (no date, user, host, or JDK patch release): {@code Build-Jdk-Spec} is the
 * JDK's specification version ("17"), the same on every 17.0.x, as maven-archiver writes it.
 * {@code Specification-*}, {@code Implementation-Title}, {@code Bundle-SymbolicName},
 * {@code Bundle-Name} and the OSGi package versions stay upstream's: the custom jar implements
 * the same specification and exports the same API (the API gate checks it).
 */
final class JarIdentity {
  /** Why a line's jar is experimental and until when; absent on the other lines. */
  static final String EXPERIMENTAL_ATTRIBUTE = "Forkset-Experimental";
  /** The javac {@code --release} of the recompiled classes (the upstream jar's level). */
  static final String RELEASE_ATTRIBUTE = "Forkset-Javac-Release";
  /** The custom jar's Maven coordinates. */
  static final String ARTIFACT_ATTRIBUTE = "Forkset-Artifact";
  /** Prefix under which an upstream value of a {@link #REWRITTEN} attribute is kept. */
  static final String UPSTREAM_PREFIX = "Forkset-Upstream-";

  /**
   * Upstream attributes this class takes over: the implementation's version and vendor, and
   * everything that describes upstream's build (tool, user, JDK, time). In this order the
   * upstream values are written, as {@code Forkset-Upstream-<name>}.
   */
  static final List<String> REWRITTEN = List.of(
      "Implementation-Version", "Implementation-Vendor", "Implementation-Vendor-Id",
      "Implementation-URL", "Bundle-Version", "Bundle-Vendor",
      "Created-By", "Originally-Created-By", "Built-By", "Build-Jdk", "Build-Jdk-Spec",
      "Archiver-Version", "Ant-Version", "Tool", "Bnd-LastModified");

  String groupId;
  String artifactId;
  /** The custom version, {@code <upstream>-fork.<revision>}. */
  String version;
  String upstreamGroupId;
  String upstreamArtifactId;
  String upstreamVersion;
  /** Implementation-Vendor, Built-By and Bundle-Vendor of the custom jar: the project. */
  String vendor;
  /** Created-By: the tool that wrote the jar, with its version. */
  String createdBy;
  /** The specification version of the JDK that compiled the patched classes ("17"). */
  String jdkSpec;
  /** javac --release of the patched classes. */
  String release;
  /** Why the jar is experimental and until when, or null/blank for a released line. */
  String experimental;

  boolean isExperimental() {
    return experimental != null && !experimental.isBlank() && !experimental.startsWith("${");
  }

  /** Rewrites {@code main} (a copy of upstream's main attributes) to say what the jar is. */
  void apply(Attributes main) {
    List<String[]> upstream = new ArrayList<>();
    for (String name : REWRITTEN) {
      Object value = main.remove(new Attributes.Name(name));
      if (value != null) {
        upstream.add(new String[] {name, value.toString()});
      }
    }
    boolean osgi = upstream.stream().anyMatch(a -> a[0].equals("Bundle-Version"));
    main.putValue("Implementation-Version", version);
    main.putValue("Implementation-Vendor", vendor);
    main.putValue("Implementation-Vendor-Id", groupId);
    if (osgi) {
      main.putValue("Bundle-Version", osgiVersion(version));
      main.putValue("Bundle-Vendor", vendor);
    }
    main.putValue("Created-By", createdBy);
    main.putValue("Built-By", vendor);
    main.putValue("Build-Jdk-Spec", jdkSpec);
    main.putValue(RELEASE_ATTRIBUTE, release);
    main.putValue(ARTIFACT_ATTRIBUTE, groupId + ":" + artifactId + ":" + version);
    if (isExperimental()) {
      main.putValue(EXPERIMENTAL_ATTRIBUTE, experimental.strip().replaceAll("\\s+", " "));
    }
    for (String[] a : upstream) {
      main.putValue(UPSTREAM_PREFIX + a[0], a[1]);
    }
  }

  /**
   * An OSGi version for a Maven version {@code 5.7.0-fork.3}: {@code 5.7.0.fork-3} (major,
   * minor, micro, then a qualifier of letters, digits, '-' and '_'), which orders after the
   * upstream 5.7.0 and before 5.7.1, as the Maven version does.
   */
  static String osgiVersion(String mavenVersion) {
    String[] parts = mavenVersion.split("-", 2);
    String[] numbers = parts[0].split("\\.");
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      out.append(i > 0 ? "." : "").append(i < numbers.length ? numbers[i] : "0");
    }
    if (parts.length > 1) {
      out.append('.').append(parts[1].replaceAll("[^A-Za-z0-9_-]", "-"));
    }
    return out.toString();
  }

  /** The upstream artifact's pom.xml entry, which {@link #pomXml} rewrites. */
  String pomXmlEntry() {
    return "META-INF/maven/" + upstreamGroupId + "/" + upstreamArtifactId + "/pom.xml";
  }

  /**
   * Upstream's pom.xml with the project's version set to the custom version (SBOM tools such as
   * syft read the version there, not in pom.properties): the project's own {@code <version>}
   * element, the first one outside {@code <parent>}, is replaced; a pom that inherits its version
   * from its parent gets one after the project's {@code <artifactId>}. Only the head of the pom,
   * before its properties, dependencies and build, is searched for the project's version. Everything else stays
   * byte for byte, so the dependencies a scanner reads are upstream's.
   * @throws IllegalArgumentException when the pom has no project {@code <artifactId>}
   */
  byte[] pomXml(byte[] upstream) {
    String pom = new String(upstream, StandardCharsets.UTF_8);
    int parentStart = pom.indexOf("<parent>");
    int parentEnd = parentStart < 0 ? -1 : pom.indexOf("</parent>", parentStart);
    int artifact = outside(pom, "<artifactId>", parentStart, parentEnd);
    if (artifact < 0) {
      throw new IllegalArgumentException("no project <artifactId> in " + pomXmlEntry());
    }
    int afterArtifact = pom.indexOf("</artifactId>", artifact) + "</artifactId>".length();
    // The project's own version comes before the sections that hold other versions.
    int sections = pom.length();
    for (String section : new String[] {"<properties>", "<dependencyManagement>",
        "<dependencies>", "<build>", "<profiles>", "<modules>", "<reporting>"}) {
      int at = outside(pom, section, parentStart, parentEnd);
      if (at >= 0) {
        sections = Math.min(sections, at);
      }
    }
    int own = outside(pom, "<version>", parentStart, parentEnd);
    if (own > sections) {
      own = -1;
    }
    String comment = "<!-- " + groupId + ":" + artifactId + ":" + version + ", built by "
        + vendor + " from " + upstreamGroupId + ":" + upstreamArtifactId + ":" + upstreamVersion
        + " and a patch series -->";
    String out;
    if (own >= 0 && pom.startsWith("<version>" + upstreamVersion + "</version>", own)) {
      int end = own + ("<version>" + upstreamVersion + "</version>").length();
      out = pom.substring(0, own) + "<version>" + version + "</version>" + comment
          + pom.substring(end);
    } else {
      out = pom.substring(0, afterArtifact) + "<version>" + version + "</version>" + comment
          + pom.substring(afterArtifact);
    }
    return out.getBytes(StandardCharsets.UTF_8);
  }

  /** The first {@code tag} outside [parentStart, parentEnd], or -1. */
  private static int outside(String pom, String tag, int parentStart, int parentEnd) {
    int i = pom.indexOf(tag);
    while (i >= 0 && parentStart >= 0 && i > parentStart && i < parentEnd) {
      i = pom.indexOf(tag, i + 1);
    }
    return i;
  }

  /** The upstream artifact's pom.properties entry, which {@link #pomProperties()} replaces. */
  String pomPropertiesEntry() {
    return "META-INF/maven/" + upstreamGroupId + "/" + upstreamArtifactId + "/pom.properties";
  }

  /**
   * The replacement of upstream's pom.properties: the upstream groupId and artifactId (what the
   * code is, so that scanners still match the upstream project's advisories) with the custom
   * version, which Maven and most scanners order after the upstream release and before the next
   * one; a comment names the custom artifact and the upstream version. No date comment, unlike
   * {@code Properties.store}.
   */
  byte[] pomProperties() {
    String text = "# " + groupId + ":" + artifactId + ":" + version + ", built by " + vendor
        + " from " + upstreamGroupId + ":" + upstreamArtifactId + ":" + upstreamVersion
        + " and a patch series (META-INF/MANIFEST.MF)\n"
        + "artifactId=" + upstreamArtifactId + "\n"
        + "groupId=" + upstreamGroupId + "\n"
        + "version=" + version + "\n";
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }
}
