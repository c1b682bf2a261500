package dev.forkset.series;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A line's list of the upstream tests that run against its custom jar: the one place that says
 * which upstream test classes cover the classes a series patches, which module runs them, and
 * what is left out and why. Every module and flavour that runs them reads the list
 * ({@link UpstreamTestsMojo}), so the runs cannot drift apart.
 *
 * <p>The format, one entry per line (a line whose first character that is not a space is '#' is a
 * comment):
 *
 * <pre>
 * &lt;module&gt; &lt;test class or pattern&gt;[#&lt;method&gt;+&lt;method&gt;...]
 *     !&lt;what is left out&gt;  &lt;why&gt;
 * </pre>
 *
 * <p>The class is fully qualified; its simple name may hold {@code *} ({@code
 * org.apache.hadoop.hbase.io.hfile.bucket.Test*}), methods may too. An exclusion, indented under
 * its entry, names a method of the entry's class, or a class (and methods) the entry's pattern
 * matches; its reason, after two or more spaces, is required.
 */
final class UpstreamTests {
  private static final Pattern EXCLUSION_REASON = Pattern.compile("\\s{2,}");

  /** One entry: a class pattern, optionally restricted to methods, with its exclusions. */
  static final class Entry {
    final String module;
    final String packageName; // "" for the default package
    final String simpleName; // may hold '*'
    final String methods; // "" for all, else "m1+m2"
    final List<String> exclusions = new ArrayList<>(); // "Simple" or "Simple#m1+m2"
    final List<String> reasons = new ArrayList<>();

    Entry(String module, String pattern) {
      this.module = module;
      int hash = pattern.indexOf('#');
      String cls = hash < 0 ? pattern : pattern.substring(0, hash);
      this.methods = hash < 0 ? "" : pattern.substring(hash + 1);
      int dot = cls.lastIndexOf('.');
      this.packageName = dot < 0 ? "" : cls.substring(0, dot);
      this.simpleName = cls.substring(dot + 1);
    }

    private Entry(Entry from, String simpleName) {
      this.module = from.module;
      this.packageName = from.packageName;
      this.simpleName = simpleName;
      this.methods = from.methods;
      for (int i = 0; i < from.exclusions.size(); i++) {
        String excluded = from.exclusions.get(i);
        String excludedClass = excluded.contains("#")
            ? excluded.substring(0, excluded.indexOf('#')) : excluded;
        if (glob(simpleName).matcher(excludedClass).matches()
            || glob(excludedClass).matcher(simpleName).matches()) {
          exclusions.add(excluded);
          reasons.add(from.reasons.get(i));
        }
      }
    }

    /** The class pattern in Surefire's path form, such as org/apache/x/TestFoo. */
    String path() {
      return (packageName.isEmpty() ? "" : packageName.replace('.', '/') + "/") + simpleName;
    }

    /** Surefire {@code test} patterns: the entry, then one negated pattern per exclusion. */
    List<String> surefirePatterns() {
      List<String> out = new ArrayList<>();
      out.add(path() + (methods.isEmpty() ? "" : "#" + methods));
      String dir = packageName.isEmpty() ? "" : packageName.replace('.', '/') + "/";
      for (String e : exclusions) {
        out.add("!" + dir + e);
      }
      return out;
    }

    /**
     * This entry narrowed to the classes the user's pattern names (a simple class name, which
     * may hold '*', optionally fully qualified), or null when they share no class.
     */
    Entry narrowedTo(String userClass) {
      String user = userClass;
      int dot = user.lastIndexOf('.');
      if (dot >= 0) {
        if (!user.substring(0, dot).equals(packageName)) {
          return null;
        }
        user = user.substring(dot + 1);
      }
      if (glob(user).matcher(simpleName).matches()) {
        return this; // the user's pattern takes in the whole entry
      }
      if (!user.contains("*") && glob(simpleName).matcher(user).matches()) {
        return new Entry(this, user);
      }
      return null;
    }
  }

  private final List<Entry> entries;

  private UpstreamTests(List<Entry> entries) {
    this.entries = entries;
  }

  static UpstreamTests read(Path file) throws IOException {
    return parse(file.toString(), Files.readAllLines(file, StandardCharsets.UTF_8));
  }

  static UpstreamTests parse(String source, List<String> lines) {
    List<Entry> entries = new ArrayList<>();
    for (int n = 0; n < lines.size(); n++) {
      String raw = lines.get(n);
      String line = raw.trim().startsWith("#") ? "" : raw;
      if (line.trim().isEmpty()) {
        continue;
      }
      String where = source + ":" + (n + 1) + ": ";
      if (Character.isWhitespace(line.charAt(0))) {
        String text = line.trim();
        if (!text.startsWith("!")) {
          throw new IllegalArgumentException(where + "an indented line must be an exclusion,"
              + " '!<method or class>  <why>': " + raw.trim());
        }
        if (entries.isEmpty()) {
          throw new IllegalArgumentException(where + "an exclusion before any entry: " + text);
        }
        String[] parts = EXCLUSION_REASON.split(text.substring(1), 2);
        if (parts.length < 2 || parts[1].trim().isEmpty()) {
          throw new IllegalArgumentException(where + "the exclusion " + text + " gives no"
              + " reason: write it after two spaces, '!<what>  <why>'");
        }
        Entry entry = entries.get(entries.size() - 1);
        String what = parts[0].trim();
        // A bare method name belongs to the entry's class.
        if (!what.contains("#") && !Character.isUpperCase(what.charAt(0))) {
          what = entry.simpleName + "#" + what;
        }
        entry.exclusions.add(what);
        entry.reasons.add(parts[1].trim());
      } else {
        String[] words = line.trim().split("\\s+");
        if (words.length != 2 || !words[1].contains(".")) {
          throw new IllegalArgumentException(where + "an entry is '<module> <fully qualified"
              + " test class>[#methods]': " + raw.trim());
        }
        entries.add(new Entry(words[0], words[1]));
      }
    }
    return new UpstreamTests(Collections.unmodifiableList(entries));
  }

  List<Entry> entries() {
    return entries;
  }

  /**
   * The entries of {@code module} ("*" for all), narrowed to the user's {@code test} patterns
   * when there are any (comma-separated, Surefire's syntax; only their class part is used).
   */
  List<Entry> select(String module, String userTests) {
    List<Entry> out = new ArrayList<>();
    for (Entry e : entries) {
      if (!module.equals("*") && !module.equals(e.module)) {
        continue;
      }
      if (userTests == null || userTests.trim().isEmpty()) {
        out.add(e);
        continue;
      }
      for (String u : userTests.split(",")) {
        String cls = u.trim();
        if (cls.isEmpty() || cls.startsWith("!")) {
          continue;
        }
        cls = cls.contains("#") ? cls.substring(0, cls.indexOf('#')) : cls;
        cls = cls.replace('/', '.').replaceAll("\\.java$", "").replace("**.", "");
        Entry narrowed = e.narrowedTo(cls);
        if (narrowed != null) {
          out.add(narrowed);
          break;
        }
      }
    }
    return out;
  }

  /** Surefire's {@code test} parameter for {@code entries}. */
  static String surefireTest(List<Entry> entries) {
    List<String> patterns = new ArrayList<>();
    for (Entry e : entries) {
      patterns.addAll(e.surefirePatterns());
    }
    return String.join(", ", patterns);
  }

  static Pattern glob(String text) {
    StringBuilder re = new StringBuilder();
    for (char c : text.toCharArray()) {
      re.append(c == '*' ? ".*" : Pattern.quote(String.valueOf(c)));
    }
    return Pattern.compile(re.toString());
  }
}
