package dev.forkset.series;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The DEP-3 style header that opens every patch (https://dep-team.pages.debian.net/deps/dep3/).
 *
 * <pre>
 * Subject: HBASE-21738 One line that could be an upstream commit title
 * Upstream: HBASE-21738 | hazelcast/hazelcast#15715 | none
 * Forwarded: no | https://...
 * Module: hbase-memstore-fix | hbase-pmem-cache | hazelcast-eviction | none
 * Max-Offset: 0            (optional: lines a hunk may move before the build fails)
 * Description: free text   (optional, continuation lines start with a space)
 * </pre>
 *
 * The header ends at the first blank line or at the start of the diff.
 */
public final class Dep3Header {
  /** Fields every patch must carry. */
  public static final String[] REQUIRED = {"Subject", "Upstream", "Forwarded", "Module"};

  private static final Pattern UPSTREAM =
      Pattern.compile("none|[A-Z][A-Z0-9]+-\\d+|[\\w.-]+/[\\w.-]+#\\d+");
  private static final Pattern FORWARDED = Pattern.compile("no|not-needed|https?://\\S+");

  private final Map<String, String> fields;

  private Dep3Header(Map<String, String> fields) {
    this.fields = Collections.unmodifiableMap(fields);
  }

  /** Parses and checks the header of {@code patchName}; {@code modules} are the accepted Module values. */
  public static Dep3Header parse(String patchName, String text, Set<String> modules)
      throws PatchFailure {
    Map<String, String> fields = new LinkedHashMap<>();
    String last = null;
    for (String line : text.split("\n", -1)) {
      if (line.isEmpty() || line.equals("---") || line.startsWith("diff ") || line.startsWith("--- ")) {
        break;
      }
      if ((line.startsWith(" ") || line.startsWith("\t")) && last != null) {
        fields.put(last, fields.get(last) + "\n" + line.trim());
        continue;
      }
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw new PatchFailure(patchName + ": header line '" + line + "' is not 'Field: value'."
            + " A patch starts with DEP-3 fields (" + String.join(", ", REQUIRED)
            + "), a blank line, then the diff; see patches/README.md.");
      }
      last = line.substring(0, colon).trim();
      fields.put(last, line.substring(colon + 1).trim());
    }
    for (String required : REQUIRED) {
      String value = fields.get(required);
      if (value == null || value.isEmpty()) {
        throw new PatchFailure(patchName + ": header has no '" + required + ":' field. Every patch"
            + " needs " + String.join(", ", REQUIRED) + "; see patches/README.md.");
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
    String offset = fields.get("Max-Offset");
    if (offset != null && !offset.matches("\\d{1,4}")) {
      throw new PatchFailure(patchName + ": 'Max-Offset: " + offset + "' must be a number of"
          + " lines (0 = hunks must apply exactly where the diff says).");
    }
    return new Dep3Header(fields);
  }

  private static void check(String patch, String field, String value, Pattern accepted, String hint)
      throws PatchFailure {
    if (!accepted.matcher(value.toLowerCase(Locale.ROOT).equals("none") ? "none" : value).matches()) {
      throw new PatchFailure(patch + ": '" + field + ": " + value + "' is not valid; use " + hint + ".");
    }
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

  /** Lines a hunk may have moved since the patch was made; 0 unless the header allows more. */
  public int maxOffset() {
    String offset = fields.get("Max-Offset");
    return offset == null ? 0 : Integer.parseInt(offset);
  }

  public Map<String, String> fields() {
    return fields;
  }
}
