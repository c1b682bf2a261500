package dev.forkset.series;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
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
 * &lt;module&gt; &lt;test class or pattern&gt;[#&lt;method&gt;+&lt;method&gt;...] [from &lt;release&gt;]
 *     !&lt;what is left out&gt;  &lt;why&gt;
 * </pre>
 *
 * <p>{@code from <release>} takes the class from that upstream release's tests jar instead of the
 * line's: the version of an upstream test that the release updated for a change the series
 * backports ({@link ReleasedTests}).
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
    final String release; // null: the line's tests jar; else the release whose tests jar has it
    final List<String> exclusions = new ArrayList<>(); // "Simple" or "Simple#m1+m2"
    final List<String> reasons = new ArrayList<>();

    Entry(String module, String pattern, String release) {
      this.module = module;
      this.release = release;
      int hash = pattern.indexOf('#');
      String cls = hash < 0 ? pattern : pattern.substring(0, hash);
      this.methods = hash < 0 ? "" : pattern.substring(hash + 1);
      int dot = cls.lastIndexOf('.');
      this.packageName = dot < 0 ? "" : cls.substring(0, dot);
      this.simpleName = cls.substring(dot + 1);
    }

    private Entry(Entry from, String simpleName, String methods) {
      this.module = from.module;
      this.release = from.release;
      this.packageName = from.packageName;
      this.simpleName = simpleName;
      this.methods = methods;
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

    /** The binary name of a class of this entry's package. */
    String qualified(String simple) {
      return packageName.isEmpty() ? simple : packageName + "." + simple;
    }

    /** The entry as written, for messages. */
    @Override
    public String toString() {
      return module + " " + qualified(simpleName) + (methods.isEmpty() ? "" : "#" + methods)
          + (release == null ? "" : " from " + release);
    }
  }

  /** One class pattern of the user's {@code -Dtest}, with its methods (Surefire's syntax). */
  private static final class UserPattern {
    final Pattern cls; // matches the binary name when qualified, else the simple name
    final boolean qualified;
    final List<String> methods; // empty: all

    UserPattern(String pattern) {
      int hash = pattern.indexOf('#');
      String c = hash < 0 ? pattern : pattern.substring(0, hash);
      c = c.replace('/', '.').replaceAll("\\.(java|class)$", "").replace("**.", "");
      qualified = c.contains(".");
      cls = glob(c);
      methods = hash < 0 || pattern.substring(hash + 1).isEmpty() ? Collections.emptyList()
          : Arrays.asList(pattern.substring(hash + 1).split("\\+"));
    }

    boolean names(Entry e, String simple) {
      return cls.matcher(qualified ? e.qualified(simple) : simple).matches();
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
        if (!(words.length == 2 || words.length == 4 && words[2].equals("from"))
            || !words[1].contains(".")) {
          throw new IllegalArgumentException(where + "an entry is '<module> <fully qualified"
              + " test class>[#methods] [from <release>]': " + raw.trim());
        }
        entries.add(new Entry(words[0], words[1], words.length == 4 ? words[3] : null));
      }
    }
    return new UpstreamTests(Collections.unmodifiableList(entries));
  }

  List<Entry> entries() {
    return entries;
  }

  /** The entries whose classes come from {@code release}'s tests jar (null: the line's). */
  UpstreamTests from(String release) {
    List<Entry> out = new ArrayList<>();
    for (Entry e : entries) {
      if (java.util.Objects.equals(e.release, release)) {
        out.add(e);
      }
    }
    return new UpstreamTests(Collections.unmodifiableList(out));
  }

  /** The entries that name a release, whichever. */
  UpstreamTests released() {
    List<Entry> out = new ArrayList<>();
    for (Entry e : entries) {
      if (e.release != null) {
        out.add(e);
      }
    }
    return new UpstreamTests(Collections.unmodifiableList(out));
  }

  /** The releases that {@code module}'s entries ("*": all) take classes from, in order. */
  Set<String> releases(String module) {
    Set<String> out = new LinkedHashSet<>();
    for (Entry e : entries) {
      if (e.release != null && (module.equals("*") || module.equals(e.module))) {
        out.add(e.release);
      }
    }
    return out;
  }

  /**
   * The entries of {@code module} ("*" for all). With the user's {@code test} patterns
   * (comma-separated, Surefire's syntax), narrowed to what both name: one entry per class of
   * {@code classes} that an entry and a user's pattern both match, with the methods both allow
   * (the entry's exclusions kept), so {@code -Dtest=TestFoo#testBar} runs that one method.
   */
  List<Entry> select(String module, String userTests, TestClasses classes) {
    List<UserPattern> user = new ArrayList<>();
    if (userTests != null) {
      for (String u : userTests.split(",")) {
        String t = u.trim();
        if (!t.isEmpty() && !t.startsWith("!")) {
          user.add(new UserPattern(t));
        }
      }
    }
    List<Entry> out = new ArrayList<>();
    for (Entry e : entries) {
      if (!module.equals("*") && !module.equals(e.module)) {
        continue;
      }
      if (user.isEmpty()) {
        out.add(e);
        continue;
      }
      for (String simple : classes.simpleNames(e.packageName, e.simpleName)) {
        boolean named = false;
        Set<String> userMethods = new LinkedHashSet<>(); // empty once a pattern takes all
        boolean allMethods = false;
        for (UserPattern u : user) {
          if (u.names(e, simple)) {
            named = true;
            allMethods |= u.methods.isEmpty();
            userMethods.addAll(u.methods);
          }
        }
        if (!named) {
          continue;
        }
        String methods;
        if (allMethods) {
          methods = e.methods;
        } else if (e.methods.isEmpty()) {
          methods = String.join("+", userMethods);
        } else {
          List<String> both = new ArrayList<>();
          for (String m : classes.methods(e.qualified(simple))) {
            if (matchesAny(m, Arrays.asList(e.methods.split("\\+")))
                && matchesAny(m, userMethods)) {
              both.add(m);
            }
          }
          if (both.isEmpty()) {
            continue;
          }
          methods = String.join("+", both);
        }
        out.add(new Entry(e, simple, methods));
      }
    }
    return out;
  }

  /**
   * What in {@code module}'s entries ("*": all) names nothing in {@code classes}: an entry with
   * no class, a method pattern with no method, an exclusion that leaves out nothing. Each would
   * let the list say more is run (or left out) than is.
   */
  List<String> problems(String module, TestClasses classes) {
    return problems(module, classes, Collections.singletonList(classes));
  }

  /**
   * The same, with each exclusion looked for in every one of {@code exclusionsIn} (none: not at
   * all) and reported only if it names nothing in any: a list that serves the tests of several
   * lines leaves out a method that only one of them has, such as a test the newer line added.
   */
  List<String> problems(String module, TestClasses classes, List<TestClasses> exclusionsIn) {
    List<String> out = new ArrayList<>();
    for (Entry e : entries) {
      if (!module.equals("*") && !module.equals(e.module)) {
        continue;
      }
      List<String> simples = classes.simpleNames(e.packageName, e.simpleName);
      if (simples.isEmpty()) {
        out.add(e + ": no such test class");
        continue;
      }
      if (!e.methods.isEmpty()) {
        for (String m : e.methods.split("\\+")) {
          if (!anyMethod(e, simples, m, classes)) {
            out.add(e + ": no method " + m);
          }
        }
      }
      for (String x : e.exclusions) {
        String problem = null;
        for (TestClasses in : exclusionsIn) {
          problem = exclusionProblem(e, x, in);
          if (problem == null) {
            break;
          }
        }
        if (problem != null) {
          out.add(problem);
        }
      }
    }
    return out;
  }

  /** What is wrong with the entry's exclusion {@code x} in {@code classes}, or null. */
  private static String exclusionProblem(Entry e, String x, TestClasses classes) {
    int hash = x.indexOf('#');
    String cls = hash < 0 ? x : x.substring(0, hash);
    List<String> excluded = new ArrayList<>();
    for (String simple : classes.simpleNames(e.packageName, e.simpleName)) {
      if (glob(cls).matcher(simple).matches()) {
        excluded.add(simple);
      }
    }
    if (excluded.isEmpty()) {
      return e + ": the exclusion !" + x + " matches none of its classes";
    }
    if (hash >= 0) {
      for (String m : x.substring(hash + 1).split("\\+")) {
        if (!anyMethod(e, excluded, m, classes)) {
          return e + ": the exclusion !" + x + " names no method " + m;
        }
      }
    }
    return null;
  }

  /** Whether a method of one of the entry's classes {@code simples} matches the glob. */
  private static boolean anyMethod(Entry e, List<String> simples, String methodGlob,
      TestClasses classes) {
    for (String simple : simples) {
      if (matchesAny(classes.methods(e.qualified(simple)), methodGlob)) {
        return true;
      }
    }
    return false;
  }

  private static boolean matchesAny(Set<String> names, String glob) {
    Pattern p = glob(glob);
    for (String n : names) {
      if (p.matcher(n).matches()) {
        return true;
      }
    }
    return false;
  }

  private static boolean matchesAny(String name, java.util.Collection<String> globs) {
    for (String g : globs) {
      if (glob(g).matcher(name).matches()) {
        return true;
      }
    }
    return false;
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
