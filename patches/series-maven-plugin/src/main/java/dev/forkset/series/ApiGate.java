package dev.forkset.series;

import japicmp.cmp.JApiCmpArchive;
import japicmp.cmp.JarArchiveComparator;
import japicmp.cmp.JarArchiveComparatorOptions;
import japicmp.filter.ClassFilter;
import japicmp.model.AccessModifier;
import japicmp.model.JApiBehavior;
import japicmp.model.JApiChangeStatus;
import japicmp.model.JApiClass;
import japicmp.model.JApiConstructor;
import japicmp.model.JApiField;
import japicmp.model.JApiImplementedInterface;
import japicmp.model.JApiMethod;
import japicmp.model.JApiModifier;
import java.io.File;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javassist.CtBehavior;
import javassist.CtClass;
import javassist.CtField;
import javassist.CtMethod;
import javassist.Modifier;
import javassist.NotFoundException;
import javassist.bytecode.AccessFlag;

/**
 * The API gate: a custom jar may add to the classes it replaces, never change or remove what
 * they expose, because code that is not recompiled links against them: the upstream classes of
 * the same jar and third-party coprocessors or plugins compiled against the stock release.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Compared with japicmp: the classes of the patched compilation units only (top-level and
 *       named nested classes), members down to package-private, since the other classes of the
 *       same package link to those. Private members, synthetic members (bridges, the
 *       {@code access$NNN} accessors of Java 8 bytecode) and anonymous or local classes
 *       ({@code A$1}) are only reachable from inside the unit, which is replaced as a whole.
 *   <li>Additions only: any removed or modified class header, field, method or constructor is a
 *       violation (return type, parameter list, modifiers, throws clause, field type), whether
 *       or not the JVM would still link it; annotations are not compared.
 *   <li>Abstract additions: an addition is refused when it is a method that is abstract in an
 *       interface or abstract class and was not upstream (new, or a default or concrete method
 *       made abstract). Linking still succeeds, so japicmp counts it binary compatible, but
 *       every implementor compiled without it, in the jar or outside, throws
 *       {@code AbstractMethodError} when it is called. The line names the implementors in the
 *       custom jar left without an implementation ({@link Implementors}). A new superinterface
 *       of such a type is checked the same way for each abstract method it brings that the type
 *       does not implement and did not owe upstream.
 *   <li>Compile-time constants: japicmp does not compare {@code ConstantValue} attributes
 *       (siom79/japicmp#238), yet javac copies a {@code static final} primitive or String
 *       constant into every class that reads it; a changed value would leave the old one in
 *       every caller. Compared here from the class files with javassist.
 * </ol>
 */
final class ApiGate {
  private ApiGate() {}

  /**
   * Returns one line per violation, naming the member, comparing the classes of {@code units}
   * (such as {@code org/apache/hadoop/hbase/regionserver/HRegion}) in the two jars.
   */
  static List<String> check(File upstreamJar, File customJar, List<String> units) {
    JarArchiveComparatorOptions options = new JarArchiveComparatorOptions();
    options.setAccessModifier(AccessModifier.PACKAGE_PROTECTED);
    options.setIncludeSynthetic(false);
    options.setNoAnnotations(true);
    options.getIgnoreMissingClasses().setIgnoreAllMissingClasses(true);
    options.getFilters().getIncludes().add((ClassFilter) c -> ofUnits(c.getName(), units));
    List<JApiClass> classes = new JarArchiveComparator(options).compare(
        new JApiCmpArchive(upstreamJar, "upstream"), new JApiCmpArchive(customJar, "custom"));
    List<String> violations = new ArrayList<>();
    Implementors[] hierarchy = {null};
    for (JApiClass c : classes) {
      if (!ofUnits(c.getFullyQualifiedName(), units)) {
        continue;
      }
      classViolations(c, violations);
      abstractAdditions(c, units, () -> {
        if (hierarchy[0] == null) {
          try {
            hierarchy[0] = Implementors.of(customJar);
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("Cannot read " + customJar, e);
          }
        }
        return hierarchy[0];
      }, violations);
    }
    return violations;
  }

  /**
   * One upstream module of a line: the jar upstream released and the custom jar this build made
   * from the series, or null when the build has not made it (yet).
   */
  static final class ModuleJars {
    final String module;
    final File upstream;
    final File custom;

    ModuleJars(String module, File upstream, File custom) {
      this.module = module;
      this.upstream = upstream;
      this.custom = custom;
    }
  }

  /**
   * Abstract additions across the jars of one line (a series over several modules): for every
   * method that the custom jar of one module adds as abstract (or makes abstract) to an interface
   * or abstract class that upstream's jar already had, every implementor of that type among the
   * classes of another module's upstream jar must have a body for it in that module's custom
   * jar; one line per implementor that has none, naming the type, the method, the implementor and
   * both jars. {@link #check} names the implementors in the declaring jar itself; these are the
   * ones it cannot see, such as hbase-hadoop2-compat's implementation of an hbase-hadoop-compat
   * interface. Only pairs of modules that involve {@code own} and whose two custom jars exist are
   * compared: the pair is checked by whichever of the two lines the build makes last.
   */
  static List<String> acrossJars(List<ModuleJars> line, String own) throws java.io.IOException {
    List<String> out = new ArrayList<>();
    java.util.Map<File, Implementors> read = new java.util.HashMap<>();
    List<File> customs = new ArrayList<>();
    for (ModuleJars m : line) {
      customs.add(m.custom != null ? m.custom : m.upstream);
    }
    Implementors custom = null;
    for (ModuleJars d : line) {
      if (d.custom == null) {
        continue;
      }
      java.util.Map<String, List<String>> added = null;
      for (ModuleJars y : line) {
        if (y == d || y.custom == null || !(d.module.equals(own) || y.module.equals(own))) {
          continue;
        }
        if (added == null) {
          added = implementors(read, d.custom).abstractAdditions(implementors(read, d.upstream));
          if (added.isEmpty()) {
            break;
          }
        }
        if (custom == null) {
          custom = Implementors.of(customs);
        }
        List<String> classes = new ArrayList<>(implementors(read, y.upstream).names());
        java.util.Collections.sort(classes);
        for (java.util.Map.Entry<String, List<String>> e : added.entrySet()) {
          String type = e.getKey();
          for (String key : e.getValue()) {
            int paren = key.indexOf('(');
            String method = type + "." + key.substring(0, paren)
                + javassist.bytecode.Descriptor.toString(key.substring(paren));
            for (String cls : classes) {
              if (custom.isImplementor(cls, type) && !custom.implementsMethod(cls, key)) {
                out.add("method " + method + " was added as abstract to "
                    + (custom.isInterface(type) ? "interface " : "abstract class ") + type
                    + " (" + d.custom.getName() + "); its implementor " + cls
                    + (custom.isAbstract(cls) ? " (abstract)" : "") + " in " + y.upstream.getName()
                    + " has no implementation in " + y.custom.getName());
              }
            }
          }
        }
      }
    }
    return out;
  }

  private static Implementors implementors(java.util.Map<File, Implementors> read, File jar)
      throws java.io.IOException {
    Implementors h = read.get(jar);
    if (h == null) {
      h = Implementors.of(jar);
      read.put(jar, h);
    }
    return h;
  }

  /**
   * A method that is abstract in the custom jar's interface or abstract class and was not
   * abstract upstream (new, or a default or concrete method made abstract). japicmp classes these
   * as binary compatible (METHOD_ADDED_TO_INTERFACE, METHOD_ABSTRACT_ADDED_TO_CLASS): linking
   * still succeeds, but every implementor compiled without the method throws
   * {@code AbstractMethodError} when it is called. Names the implementors of the custom jar that
   * are left without an implementation (not recompiled, and inheriting none).
   */
  private static void abstractAdditions(JApiClass c, List<String> units,
      java.util.function.Supplier<Implementors> hierarchy, List<String> out) {
    if (!c.getNewClass().isPresent() || !c.getOldClass().isPresent()) {
      return; // a new class has no implementor compiled without it
    }
    CtClass neu = c.getNewClass().get();
    boolean isInterface = neu.isInterface();
    if (!isInterface && !Modifier.isAbstract(neu.getModifiers())) {
      return;
    }
    String name = c.getFullyQualifiedName();
    for (JApiMethod m : c.getMethods()) {
      Optional<CtMethod> now = m.getNewMethod();
      if (!now.isPresent() || synthetic(now.get())
          || !Modifier.isAbstract(now.get().getModifiers())) {
        continue;
      }
      Optional<CtMethod> before = m.getOldMethod();
      String what;
      if (!before.isPresent()) {
        what = " was added as abstract to ";
      } else if (!Modifier.isAbstract(before.get().getModifiers())) {
        what = " became abstract in ";
      } else {
        continue;
      }
      out.add("method " + now.get().getLongName() + what
          + (isInterface ? "interface " : "abstract class ") + name + "; "
          + left(hierarchy.get(), name, now.get().getName(), now.get().getSignature(), units));
    }
    // A new superinterface brings its abstract methods along: those the type does not implement
    // and did not owe upstream (javassist's getMethods() lists the inherited ones too).
    Set<String> owedBefore = new HashSet<>();
    try {
      for (CtMethod m : c.getOldClass().get().getMethods()) {
        owedBefore.add(m.getName() + m.getSignature());
      }
    } catch (RuntimeException e) {
      // a supertype outside the jar: count only what is declared
      for (CtMethod m : c.getOldClass().get().getDeclaredMethods()) {
        owedBefore.add(m.getName() + m.getSignature());
      }
    }
    // From the class files: japicmp lists no superinterfaces of an interface.
    Set<String> before = new HashSet<>(List.of(c.getOldClass().get().getClassFile2().getInterfaces()));
    for (String i : neu.getClassFile2().getInterfaces()) {
      if (before.contains(i)) {
        continue;
      }
      for (String key : hierarchy.get().owedThrough(name, i)) {
        if (!owedBefore.add(key)) {
          continue; // owed upstream, or already named through another new superinterface
        }
        int paren = key.indexOf('(');
        String method = key.substring(0, paren);
        String descriptor = key.substring(paren);
        out.add((isInterface ? "interface " : "abstract class ") + name
            + (isInterface ? " now extends " : " now implements ") + i
            + ", whose abstract method " + method
            + javassist.bytecode.Descriptor.toString(descriptor) + " it does not implement; "
            + left(hierarchy.get(), name, method, descriptor, units));
      }
    }
  }

  private static String left(Implementors hierarchy, String type, String method,
      String descriptor, List<String> units) {
    List<String> left = hierarchy.without(type, method, descriptor, cls -> ofUnits(cls, units));
    return left.isEmpty() ? "no class of the jar is left without an implementation"
        : "left without an implementation in the jar (not recompiled): " + String.join(", ", left);
  }

  /** p.A or p.A$Named for unit p/A; not p.A$1 or p.A$1Local. */
  static boolean ofUnits(String className, List<String> units) {
    for (String unit : units) {
      String top = unit.replace('/', '.');
      if (className.equals(top)) {
        return true;
      }
      if (className.startsWith(top + "$")) {
        for (String part : className.substring(top.length() + 1).split("\\$")) {
          if (part.isEmpty() || Character.isDigit(part.charAt(0))) {
            return false;
          }
        }
        return true;
      }
    }
    return false;
  }

  private static void classViolations(JApiClass c, List<String> out) {
    String name = c.getFullyQualifiedName();
    if (c.getChangeStatus() == JApiChangeStatus.NEW) {
      return;
    }
    if (c.getChangeStatus() == JApiChangeStatus.REMOVED) {
      out.add("class " + name + " was removed");
      return;
    }
    List<String> header = new ArrayList<>();
    modifier(c.getAccessModifier(), "access", header);
    modifier(c.getFinalModifier(), "final", header);
    modifier(c.getStaticModifier(), "static", header);
    modifier(c.getAbstractModifier(), "abstract", header);
    if (c.getClassType().getChangeStatus() != JApiChangeStatus.UNCHANGED) {
      header.add("kind " + c.getClassType().getOldTypeOptional().map(Object::toString).orElse("?")
          + " -> " + c.getClassType().getNewTypeOptional().map(Object::toString).orElse("?"));
    }
    if (!header.isEmpty()) {
      out.add("class " + name + " changed: " + String.join(", ", header));
    }
    if (c.getSuperclass().getChangeStatus() != JApiChangeStatus.UNCHANGED) {
      out.add("class " + name + " changed its superclass from "
          + c.getSuperclass().getOldSuperclassName().orElse("none") + " to "
          + c.getSuperclass().getNewSuperclassName().orElse("none"));
    }
    for (JApiImplementedInterface i : c.getInterfaces()) {
      if (i.getChangeStatus() == JApiChangeStatus.REMOVED) {
        out.add("class " + name + " no longer implements " + i.getFullyQualifiedName());
      }
    }
    for (JApiConstructor k : c.getConstructors()) {
      behaviour("constructor", k, k.getOldConstructor(), k.getNewConstructor(), out);
    }
    for (JApiMethod m : c.getMethods()) {
      behaviour("method", m, m.getOldMethod(), m.getNewMethod(), out);
    }
    for (JApiField f : c.getFields()) {
      field(name, f, out);
    }
    constants(c, out);
  }

  private static void modifier(JApiModifier<?> m, String what, List<String> out) {
    if (m.getChangeStatus() == JApiChangeStatus.MODIFIED) {
      out.add(what + " " + m.getValueOld() + " -> " + m.getValueNew());
    } else if (m.getChangeStatus() != JApiChangeStatus.UNCHANGED
        && m.getChangeStatus() != JApiChangeStatus.NEW) {
      out.add(what + " " + m.getChangeStatus().name().toLowerCase());
    }
  }

  private static void behaviour(String kind, JApiBehavior b, Optional<? extends CtBehavior> old,
      Optional<? extends CtBehavior> neu, List<String> out) {
    if (old.map(ApiGate::synthetic).orElse(false) || neu.map(ApiGate::synthetic).orElse(false)) {
      return;
    }
    if (b.getChangeStatus() == JApiChangeStatus.REMOVED) {
      out.add(kind + " " + old.map(CtBehavior::getLongName).orElse(b.getName()) + " was removed");
    } else if (b.getChangeStatus() == JApiChangeStatus.MODIFIED) {
      String before = old.map(ApiGate::describe).orElse("?");
      String after = neu.map(ApiGate::describe).orElse("?");
      if (!before.contains("abstract ") && after.replace("abstract ", "").equals(before)) {
        return; // only made abstract: abstractAdditions names it with the implementors it breaks
      }
      out.add(kind + " " + old.map(CtBehavior::getLongName).orElse(b.getName()) + " changed: "
          + before + " -> " + after + (before.equals(after) ? " (generic signature)" : ""));
    }
  }

  private static String describe(CtBehavior b) {
    StringBuilder sb = new StringBuilder(Modifier.toString(b.getModifiers()
        & ~(Modifier.SYNCHRONIZED | Modifier.NATIVE | Modifier.STRICT)));
    if (sb.length() > 0) {
      sb.append(' ');
    }
    try {
      if (b instanceof CtMethod) {
        sb.append(((CtMethod) b).getReturnType().getName()).append(' ');
      }
    } catch (NotFoundException e) {
      sb.append(javassist.bytecode.Descriptor.toString(b.getSignature())).append(' ');
    }
    String longName = b.getLongName();
    int dot = longName.lastIndexOf('.', longName.indexOf('('));
    sb.append(longName.substring(dot + 1));
    try {
      CtClass[] thrown = b.getExceptionTypes();
      for (int i = 0; i < thrown.length; i++) {
        sb.append(i == 0 ? " throws " : ", ").append(thrown[i].getName());
      }
    } catch (NotFoundException e) {
      // an exception class outside the jar: its name is still in the signature comparison
    }
    return sb.toString();
  }

  /**
   * japicmp's includeSynthetic=false does not hold back a removed synthetic member (such as the
   * {@code access$000} accessor that goes when a nested class stops reading a private field).
   */
  private static boolean synthetic(CtBehavior b) {
    return (b.getMethodInfo2().getAccessFlags() & AccessFlag.SYNTHETIC) != 0;
  }

  private static boolean synthetic(CtField f) {
    return (f.getFieldInfo2().getAccessFlags() & AccessFlag.SYNTHETIC) != 0;
  }

  private static void field(String className, JApiField f, List<String> out) {
    if (f.getOldFieldOptional().map(ApiGate::synthetic).orElse(false)
        || f.getNewFieldOptional().map(ApiGate::synthetic).orElse(false)) {
      return;
    }
    String name = "field " + className + "." + f.getName();
    if (f.getChangeStatus() == JApiChangeStatus.REMOVED) {
      out.add(name + " was removed");
    } else if (f.getChangeStatus() == JApiChangeStatus.MODIFIED) {
      out.add(name + " changed: " + f.getOldFieldOptional().map(ApiGate::describe).orElse("?")
          + " -> " + f.getNewFieldOptional().map(ApiGate::describe).orElse("?"));
    }
  }

  private static String describe(CtField f) {
    String mods = Modifier.toString(f.getModifiers());
    return (mods.isEmpty() ? "" : mods + " ")
        + javassist.bytecode.Descriptor.toClassName(f.getSignature()) + " " + f.getName();
  }

  private static void constants(JApiClass c, List<String> out) {
    if (!c.getOldClass().isPresent() || !c.getNewClass().isPresent()) {
      return;
    }
    CtClass neu = c.getNewClass().get();
    for (CtField old : c.getOldClass().get().getDeclaredFields()) {
      int mods = old.getModifiers();
      if (synthetic(old)) {
        continue;
      }
      Object before = old.getConstantValue();
      if (before == null || Modifier.isPrivate(mods) || !Modifier.isStatic(mods)
          || !Modifier.isFinal(mods)) {
        continue;
      }
      CtField now;
      try {
        now = neu.getDeclaredField(old.getName());
      } catch (NotFoundException e) {
        continue; // reported as removed
      }
      Object after = now.getConstantValue();
      String name = "field " + c.getFullyQualifiedName() + "." + old.getName();
      if (after == null) {
        out.add(name + ": was the compile-time constant " + literal(before)
            + " and is no longer a constant; classes compiled against upstream keep "
            + literal(before) + " inlined");
      } else if (!before.equals(after)) {
        out.add(name + ": compile-time constant changed from " + literal(before) + " to "
            + literal(after) + "; classes compiled against upstream keep " + literal(before)
            + " inlined");
      }
    }
  }

  private static String literal(Object value) {
    return value instanceof String ? "\"" + value + "\"" : String.valueOf(value);
  }
}
