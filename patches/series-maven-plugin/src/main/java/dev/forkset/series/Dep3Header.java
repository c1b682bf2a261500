package dev.forkset.series;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The message of a patch: who, when, what and the DEP-3 fields
 * (https://dep-team.pages.debian.net/deps/dep3/) that say where it stands upstream.
 *
 * <p>A patch is a {@code git format-patch} mail:
 *
 * <pre>
 * From 5c1e...40 hex... Mon Sep 17 00:00:00 2001
 * From: A Developer &lt;dev@example.org&gt;
 * Date: Tue, 4 Nov 2025 10:00:00 +0000
 * Subject: [PATCH] HBASE-NNNNN One line that could be the upstream commit title
 *
 * Why the change is needed, in as many paragraphs as it takes (the DEP-3 Description).
 *
 * Upstream: HBASE-NNNNN | hazelcast/hazelcast#NNNNN | none
 * Forwarded: no | not-needed | https://...
 * Module: hbase-memstore-fix | hbase-pmem-cache | hazelcast-eviction | none
 * Max-Offset: 0            (optional: lines a hunk may move; fuzz is never allowed)
 * Applied-Upstream: 2.1.3  (optional: the upstream release that has the change; series:status
 *                          compares the patched files with it)
 * ---
 *  diffstat
 *
 * diff --git a/... b/...
 * index &lt;40 hex&gt;..&lt;40 hex&gt; 100644
 * </pre>
 *
 * The mail's Subject is the DEP-3 Subject, the body before the last paragraph its Description,
 * and the last paragraph of the body (git's trailer block) holds the other fields, as DEP-3
 * allows for pseudo-headers. {@code git am} keeps all of it in the commit message.
 *
 * <p>The old form, DEP-3 fields first, a blank line, then a diff, is still read ({@link #form()}
 * says which) so that {@code series:convert} can turn it into a mail; the build refuses it.
 */
public final class Dep3Header {
  /** Fields every patch must carry. */
  public static final String[] REQUIRED = {"Subject", "Upstream", "Forwarded", "Module"};
  /** Fields of this project that may appear only once. */
  private static final Set<String> SINGLE =
      Set.of("Subject", "Description", "Upstream", "Forwarded", "Module", "Max-Offset",
          "Applied-Upstream");

  /** The two ways a patch file can be written. */
  public enum Form {
    /** {@code git format-patch} output with the DEP-3 fields in the message: the only form built. */
    MAIL,
    /** DEP-3 fields, a blank line, a diff: the old form, read only to be converted. */
    DEP3_FIRST
  }

  static final Pattern MBOX_FROM =
      Pattern.compile("^From ([0-9a-f]{40}) Mon Sep 17 00:00:00 2001$");
  private static final Pattern FIELD = Pattern.compile("^([A-Za-z][A-Za-z0-9-]*):(?:[ \\t]+(.*))?$");
  private static final Pattern UPSTREAM =
      Pattern.compile("none|[A-Z][A-Z0-9]+-\\d+|[\\w.-]+/[\\w.-]+#\\d+");
  private static final Pattern FORWARDED = Pattern.compile("no|not-needed|https?://\\S+");
  /** DEP-3's Applied-Upstream: the release first, then optionally ", " and a URL or commit:id. */
  private static final Pattern APPLIED_UPSTREAM = Pattern.compile("(\\d[\\w.-]*)(, \\S+)?");
  private static final Pattern ENCODED_WORD =
      Pattern.compile("=\\?([^?]+)\\?([qQbB])\\?([^?]*)\\?=");

  private final Form form;
  private final Map<String, String> fields;
  private final String author;
  private final String date;
  private final List<String> descriptionLines;
  /** Index of the first line of the diff in the patch's lines. */
  final int diffStart;

  private Dep3Header(Form form, Map<String, String> fields, String author, String date,
      List<String> descriptionLines, int diffStart) {
    this.form = form;
    this.fields = Collections.unmodifiableMap(fields);
    this.author = author;
    this.date = date;
    this.descriptionLines = List.copyOf(descriptionLines);
    this.diffStart = diffStart;
  }

  /** Parses and checks the message of {@code patchName}; {@code modules} are the accepted Module values. */
  public static Dep3Header parse(String patchName, String text, Set<String> modules)
      throws PatchFailure {
    return read(patchName, Text.rawLines(text), modules);
  }

  static Dep3Header read(String patchName, List<String> lines, Set<String> modules)
      throws PatchFailure {
    Dep3Header h = !lines.isEmpty() && MBOX_FROM.matcher(lines.get(0)).matches()
        ? mail(patchName, lines) : dep3First(patchName, lines);
    h.check(patchName, modules);
    return h;
  }

  // --- git format-patch mail ------------------------------------------------------------------

  private static Dep3Header mail(String patch, List<String> lines) throws PatchFailure {
    Map<String, String> headers = new LinkedHashMap<>();
    String last = null;
    int i = 1;
    for (; i < lines.size() && !lines.get(i).isEmpty(); i++) {
      String l = lines.get(i);
      if ((l.startsWith(" ") || l.startsWith("\t")) && last != null) {
        headers.put(last, headers.get(last) + l); // unfold: the line break goes, the blank stays
        continue;
      }
      int colon = l.indexOf(':');
      if (colon <= 0) {
        throw new PatchFailure(patch + ": line " + (i + 1) + ": '" + l + "' is not a mail header"
            + " line. A patch is git format-patch output; see patches/README.md.");
      }
      last = l.substring(0, colon);
      headers.put(last, l.substring(colon + 1).trim());
    }
    for (String required : new String[] {"From", "Date", "Subject"}) {
      if (headers.get(required) == null || headers.get(required).isEmpty()) {
        throw new PatchFailure(patch + ": the mail header has no '" + required + ":' line; git am"
            + " needs From, Date and Subject. Regenerate the patch with git format-patch.");
      }
    }
    String encoding = headers.getOrDefault("Content-Transfer-Encoding", "8bit").toLowerCase(Locale.ROOT);
    if (!encoding.equals("8bit") && !encoding.equals("7bit")) {
      throw new PatchFailure(patch + ": 'Content-Transfer-Encoding: " + encoding + "' is not"
          + " supported; write the patch with git format-patch's defaults (8bit).");
    }
    String subject = decode(patch, headers.get("Subject")).replaceFirst("^(\\[[^\\]]*\\]\\s*)+", "");
    String author = decode(patch, headers.get("From"));
    int bodyStart = i + 1;
    int separator = -1;
    for (int k = bodyStart; k < lines.size(); k++) {
      if (lines.get(k).equals("---")) {
        separator = k;
        break;
      }
      if (lines.get(k).startsWith("diff --git ")) {
        break;
      }
    }
    if (separator < 0) {
      throw new PatchFailure(patch + ": the message is not ended by a '---' line before the diff,"
          + " as git format-patch writes it; see patches/README.md.");
    }
    int diffStart = separator + 1;
    for (; diffStart < lines.size() && !lines.get(diffStart).startsWith("diff --git "); diffStart++) {
      String l = lines.get(diffStart);
      if (!l.isEmpty() && !l.startsWith(" ")) {
        throw new PatchFailure(patch + ": line " + (diffStart + 1) + ": '" + l + "' between '---'"
            + " and the diff is not part of a diffstat. Regenerate the patch (series:refresh).");
      }
    }
    List<String> body = new ArrayList<>(lines.subList(bodyStart, separator));
    trimBlank(body);
    int lastParagraph = body.lastIndexOf("") + 1;
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("Subject", subject);
    readFields(patch, body.subList(lastParagraph, body.size()), bodyStart + lastParagraph, fields,
        true);
    List<String> description = new ArrayList<>(body.subList(0, lastParagraph));
    trimBlank(description);
    if (!fields.containsKey("Description") && !description.isEmpty()) {
      fields.put("Description", String.join("\n", description));
    }
    return new Dep3Header(Form.MAIL, fields, author, headers.get("Date"), description, diffStart);
  }

  /** Reads {@code Field: value} lines (continuations start with a blank) into {@code fields}. */
  private static void readFields(String patch, List<String> lines, int firstLine,
      Map<String, String> fields, boolean trailer) throws PatchFailure {
    String last = null;
    for (int k = 0; k < lines.size(); k++) {
      String l = lines.get(k);
      if ((l.startsWith(" ") || l.startsWith("\t")) && last != null) {
        fields.put(last, fields.get(last) + "\n" + l.trim());
        continue;
      }
      Matcher m = FIELD.matcher(l);
      if (!m.matches()) {
        throw new PatchFailure(patch + ": line " + (firstLine + k + 1) + ": '" + l + "' is not"
            + " 'Field: value'. " + (trailer
                ? "The last paragraph of the message holds the DEP-3 fields (Upstream, Forwarded,"
                    + " Module, optional Max-Offset), one per line; the description goes before it."
                : "A patch starts with DEP-3 fields (" + String.join(", ", REQUIRED)
                    + "), a blank line, then the diff.")
            + " See patches/README.md.");
      }
      last = m.group(1);
      if (trailer && last.equals("Subject")) {
        throw new PatchFailure(patch + ": line " + (firstLine + k + 1) + ": the subject is the"
            + " mail's Subject header, not a field of the message.");
      }
      if (SINGLE.contains(last) && fields.containsKey(last)) {
        throw new PatchFailure(patch + ": line " + (firstLine + k + 1) + ": '" + last + ":' is"
            + " given twice.");
      }
      String value = m.group(2) == null ? "" : m.group(2).trim();
      fields.merge(last, value, (a, b) -> a + "\n" + b);
    }
  }

  private static void trimBlank(List<String> lines) {
    while (!lines.isEmpty() && lines.get(0).trim().isEmpty()) {
      lines.remove(0);
    }
    while (!lines.isEmpty() && lines.get(lines.size() - 1).trim().isEmpty()) {
      lines.remove(lines.size() - 1);
    }
  }

  /** Decodes RFC 2047 encoded words, as git writes non-ASCII names and subjects. */
  static String decode(String patch, String value) throws PatchFailure {
    Matcher m = ENCODED_WORD.matcher(value);
    StringBuilder out = new StringBuilder();
    int end = 0;
    while (m.find()) {
      String between = value.substring(end, m.start());
      if (!(end > 0 && between.trim().isEmpty())) { // blanks between encoded words vanish
        out.append(between);
      }
      byte[] bytes;
      if (m.group(2).equalsIgnoreCase("b")) {
        bytes = Base64.getDecoder().decode(m.group(3));
      } else {
        java.io.ByteArrayOutputStream q = new java.io.ByteArrayOutputStream();
        String s = m.group(3);
        for (int k = 0; k < s.length(); k++) {
          char c = s.charAt(k);
          if (c == '_') {
            q.write(' ');
          } else if (c == '=' && k + 2 < s.length()) {
            q.write(Integer.parseInt(s.substring(k + 1, k + 3), 16));
            k += 2;
          } else {
            q.write(c);
          }
        }
        bytes = q.toByteArray();
      }
      Charset charset = Charset.forName(m.group(1));
      out.append(charset.equals(StandardCharsets.UTF_8)
          ? Text.utf8(bytes, patch + ": mail header") : new String(bytes, charset));
      end = m.end();
    }
    return out.append(value.substring(end)).toString();
  }

  // --- the old form: DEP-3 fields first ----------------------------------------------------------

  private static Dep3Header dep3First(String patch, List<String> lines) throws PatchFailure {
    int end = 0;
    while (end < lines.size() && !lines.get(end).isEmpty() && !diffStarts(lines, end)
        && !lines.get(end).equals("---")) {
      end++;
    }
    Map<String, String> fields = new LinkedHashMap<>();
    readFields(patch, lines.subList(0, end), 0, fields, false);
    int diffStart = end;
    while (diffStart < lines.size() && !diffStarts(lines, diffStart)) {
      diffStart++;
    }
    List<String> description = new ArrayList<>();
    String d = fields.get("Description");
    if (d != null) {
      for (String l : d.split("\n", -1)) {
        description.add(l.equals(".") ? "" : l); // DEP-3 writes an empty line as ' .'
      }
    }
    List<String> more = new ArrayList<>(lines.subList(Math.min(end, diffStart), diffStart));
    more.removeIf(l -> l.equals("---"));
    trimBlank(more);
    if (!more.isEmpty()) {
      description.add("");
      description.addAll(more); // free-form text after the fields continues the description
    }
    trimBlank(description);
    return new Dep3Header(Form.DEP3_FIRST, fields, null, null, description, diffStart);
  }

  private static boolean diffStarts(List<String> lines, int i) {
    String l = lines.get(i);
    String next = i + 1 < lines.size() ? lines.get(i + 1) : "";
    return l.startsWith("diff --git ") || (l.startsWith("--- ") && next.startsWith("+++ "))
        || (l.startsWith("diff ") && next.startsWith("--- "));
  }

  // --- checks ----------------------------------------------------------------------------------

  private void check(String patchName, Set<String> modules) throws PatchFailure {
    for (String required : REQUIRED) {
      String value = fields.get(required);
      if (value == null || value.isEmpty()) {
        throw new PatchFailure(patchName + ": " + (form == Form.MAIL && !required.equals("Subject")
            ? "the last paragraph of the message has no '" + required + ":' field"
            : "header has no '" + required + ":' field") + ". Every patch needs "
            + String.join(", ", REQUIRED) + "; see patches/README.md.");
      }
    }
    check(patchName, "Upstream", fields.get("Upstream"), UPSTREAM,
        "an issue id such as HBASE-21738 or hazelcast/hazelcast#15715, or 'none'");
    check(patchName, "Forwarded", fields.get("Forwarded"), FORWARDED,
        "'no', 'not-needed' or the URL of the upstream pull request or JIRA attachment");
    String module = fields.get("Module");
    if (!module.equals("none") && !modules.contains(module)) {
      throw new PatchFailure(patchName + ": 'Module: " + module + "' is not a module of this"
          + " project. Use one of " + modules + " or 'none'.");
    }
    String applied = fields.get("Applied-Upstream");
    if (applied != null && !APPLIED_UPSTREAM.matcher(applied).matches()) {
      throw new PatchFailure(patchName + ": 'Applied-Upstream: " + applied + "' must start with"
          + " the upstream release that has the change, such as 'Applied-Upstream: 2.1.3'"
          + " (optionally followed by ', ' and the URL or commit:<id> of the upstream commit):"
          + " series:status compares the patched files with that release's sources.");
    }
    String offset = fields.get("Max-Offset");
    if (offset != null && !offset.matches("\\d{1,4}")) {
      throw new PatchFailure(patchName + ": 'Max-Offset: " + offset + "' must be a number of"
          + " lines (0 = hunks must apply exactly where the diff says).");
    }
  }

  private static void check(String patch, String field, String value, Pattern accepted, String hint)
      throws PatchFailure {
    if (!accepted.matcher(value.toLowerCase(Locale.ROOT).equals("none") ? "none" : value).matches()) {
      throw new PatchFailure(patch + ": '" + field + ": " + value + "' is not valid; use " + hint + ".");
    }
  }

  /** Which form the patch is written in. */
  public Form form() {
    return form;
  }

  public String subject() {
    return fields.get("Subject");
  }

  public String upstream() {
    return fields.get("Upstream");
  }

  public String forwarded() {
    return fields.get("Forwarded");
  }

  public String module() {
    return fields.get("Module");
  }

  /** The mail's From (decoded), or null in the old form. */
  public String author() {
    return author;
  }

  /** The mail's Date as written, or null in the old form. */
  public String date() {
    return date;
  }

  /** The description: the message body before the fields (blank lines between paragraphs). */
  public List<String> description() {
    return descriptionLines;
  }

  /** The upstream release {@code Applied-Upstream:} names, or null when the field is absent. */
  public String appliedUpstream() {
    String applied = fields.get("Applied-Upstream");
    if (applied == null) {
      return null;
    }
    Matcher m = APPLIED_UPSTREAM.matcher(applied);
    return m.matches() ? m.group(1) : null;
  }

  /** Lines a hunk may have moved since the patch was made; 0 unless the header allows more. */
  public int maxOffset() {
    String offset = fields.get("Max-Offset");
    return offset == null ? 0 : Integer.parseInt(offset);
  }

  /** Subject, Description and the fields of the message, in the order written. */
  public Map<String, String> fields() {
    return fields;
  }
}
