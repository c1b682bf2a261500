package dev.forkset.series;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.cyclonedx.Version;
import org.cyclonedx.exception.GeneratorException;
import org.cyclonedx.generators.BomGeneratorFactory;
import org.cyclonedx.model.Ancestors;
import org.cyclonedx.model.AttachmentText;
import org.cyclonedx.model.Bom;
import org.cyclonedx.model.Component;
import org.cyclonedx.model.Diff;
import org.cyclonedx.model.Hash;
import org.cyclonedx.model.Issue;
import org.cyclonedx.model.License;
import org.cyclonedx.model.LicenseChoice;
import org.cyclonedx.model.Metadata;
import org.cyclonedx.model.Patch;
import org.cyclonedx.model.Pedigree;
import org.cyclonedx.model.Property;
import org.cyclonedx.model.Source;
import org.cyclonedx.model.metadata.ToolInformation;

/**
 * The CycloneDX 1.6 SBOM of a custom jar: the jar (with its SHA-256) as the BOM's subject, the
 * upstream artifact it derives from as its pedigree's ancestor, every applied patch as an
 * "unofficial" patch with its diff and the upstream issue it resolves, and the replaced classes
 * and the series digest as properties.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Reproducible: the serial number is a name-based UUID of the jar's SHA-256 and the
 *       timestamp is {@code project.build.outputTimestamp}, so the same jar gets the same SBOM.
 *   <li>A patch's diff is embedded base64-encoded: the generator trims plain text, and a patch
 *       must come back byte for byte (trailing newlines, CRLF lines).
 *   <li>Upstream ids map to their trackers: {@code HBASE-n} (any Apache JIRA key) to
 *       issues.apache.org, {@code owner/repo#n} to GitHub; {@code none} and placeholders such as
 *       {@code HBASE-NNNNN} resolve nothing.
 * </ol>
 */
final class Sbom {
  private static final Pattern JIRA = Pattern.compile("[A-Z][A-Z0-9]+-\\d+");
  private static final Pattern GITHUB = Pattern.compile("([\\w.-]+/[\\w.-]+)#(\\d+)");

  /** One applied patch: its file, header fields and text. */
  static final class PatchRef {
    final String name;
    final String upstream;
    final String module;
    final String subject;
    final String path;
    final String text;

    PatchRef(String name, String upstream, String module, String subject, String path,
        String text) {
      this.name = name;
      this.upstream = upstream;
      this.module = module;
      this.subject = subject;
      this.path = path;
      this.text = text;
    }
  }

  /** What the SBOM describes. */
  static final class Input {
    String customGav;
    Path customJar;
    String upstreamGav;
    Path upstreamJar;
    String license = "Apache-2.0";
    String seriesSha256;
    int revision;
    List<PatchRef> patches = new ArrayList<>();
    List<String> replacedClasses = new ArrayList<>();
    Instant timestamp;
    String toolVersion;
  }

  private Sbom() {}

  /** The BOM as pretty-printed JSON. */
  static String json(Input in) throws IOException {
    String jarSha = Checksums.sha256(in.customJar);
    Component jar = component(in.customGav, jarSha);
    LicenseChoice licenses = new LicenseChoice();
    License license = new License();
    license.setId(in.license);
    licenses.addLicense(license);
    jar.setLicenses(licenses);

    Pedigree pedigree = new Pedigree();
    Ancestors ancestors = new Ancestors();
    ancestors.addComponent(component(in.upstreamGav, Checksums.sha256(in.upstreamJar)));
    pedigree.setAncestors(ancestors);
    List<Patch> patches = new ArrayList<>();
    for (PatchRef p : in.patches) {
      patches.add(patch(p));
    }
    pedigree.setPatches(patches);
    pedigree.setNotes("The upstream jar with the classes of the patched compilation units"
        + " recompiled from the upstream sources plus these patches, in this order.");
    jar.setPedigree(pedigree);

    List<Property> props = new ArrayList<>();
    props.add(property("forkset:series-sha256", in.seriesSha256));
    props.add(property("forkset:revision", Integer.toString(in.revision)));
    for (PatchRef p : in.patches) {
      props.add(property("forkset:patch", p.name + "; upstream=" + p.upstream + "; module="
          + p.module + "; " + p.subject));
    }
    for (String c : in.replacedClasses) {
      props.add(property("forkset:replaced-class", c));
    }
    jar.setProperties(props);

    Metadata metadata = new Metadata();
    metadata.setTimestamp(Date.from(in.timestamp));
    metadata.setComponent(jar);
    ToolInformation tools = new ToolInformation();
    Component tool = new Component();
    tool.setType(Component.Type.APPLICATION);
    tool.setGroup("dev.forkset");
    tool.setName("series-maven-plugin");
    tool.setVersion(in.toolVersion);
    tools.setComponents(List.of(tool));
    metadata.setToolChoice(tools);

    Bom bom = new Bom();
    bom.setSerialNumber("urn:uuid:" + UUID.nameUUIDFromBytes(jarSha.getBytes(
        java.nio.charset.StandardCharsets.US_ASCII)));
    bom.setVersion(1);
    bom.setMetadata(metadata);
    try {
      return BomGeneratorFactory.createJson(Version.VERSION_16, bom).toJsonString() + "\n";
    } catch (GeneratorException e) {
      throw new IOException("Cannot write the SBOM of " + in.customJar, e);
    }
  }

  private static Component component(String gav, String sha256) {
    String[] f = gav.split(":");
    Component c = new Component();
    c.setType(Component.Type.LIBRARY);
    c.setGroup(f[0]);
    c.setName(f[1]);
    c.setVersion(f[2]);
    String purl = "pkg:maven/" + f[0] + "/" + f[1] + "@" + f[2] + "?type=jar";
    c.setPurl(purl);
    c.setBomRef(purl);
    c.setHashes(List.of(new Hash(Hash.Algorithm.SHA_256, sha256)));
    return c;
  }

  private static Patch patch(PatchRef p) {
    Patch patch = new Patch();
    patch.setType(Patch.Type.UNOFFICIAL);
    Diff diff = new Diff();
    AttachmentText text = new AttachmentText();
    text.setContentType("text/x-diff");
    text.setEncoding("base64");
    text.setText(java.util.Base64.getEncoder().encodeToString(
        p.text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    diff.setText(text);
    diff.setUrl(p.path);
    patch.setDiff(diff);
    Issue issue = issue(p);
    if (issue != null) {
      patch.setResolves(List.of(issue));
    }
    return patch;
  }

  private static Issue issue(PatchRef p) {
    Source source = new Source();
    Matcher jira = JIRA.matcher(p.upstream);
    Matcher github = GITHUB.matcher(p.upstream);
    if (jira.matches()) {
      source.setName("Apache JIRA");
      source.setUrl(url("https://issues.apache.org/jira/browse/" + p.upstream));
    } else if (github.matches()) {
      source.setName("GitHub");
      source.setUrl(url("https://github.com/" + github.group(1) + "/issues/" + github.group(2)));
    } else {
      return null;
    }
    Issue issue = new Issue();
    issue.setType(Issue.Type.ENHANCEMENT);
    issue.setId(p.upstream);
    issue.setName(p.name);
    issue.setDescription(p.subject);
    issue.setSource(source);
    return issue;
  }

  private static java.net.URL url(String url) {
    try {
      return new java.net.URL(url);
    } catch (java.net.MalformedURLException e) {
      throw new IllegalArgumentException(url, e);
    }
  }

  private static Property property(String name, String value) {
    Property p = new Property();
    p.setName(name);
    p.setValue(value);
    return p;
  }
}
