package dev.forkset.series;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import javassist.bytecode.AccessFlag;
import javassist.bytecode.ClassFile;
import javassist.bytecode.MethodInfo;

/**
 * The type hierarchy of one jar's classes, read from the class files (outside
 * {@code META-INF/versions/}), to find the classes an abstract method added to a type leaves
 * without an implementation: those throw {@code AbstractMethodError} when it is called on them.
 *
 * <p>Resolution follows the JVM's selection, simplified: a class implements {@code m} if it or a
 * superclass declares a non-abstract, non-static {@code m} with the same descriptor, or a
 * superinterface declares a default {@code m}. Supertypes outside the jar (the JDK, other jars)
 * are not seen; they could only supply an implementation, so a class listed through such a type
 * is listed because its implementation cannot be found in the jar.
 */
final class Implementors {
  private static final class Type {
    String superclass;
    List<String> interfaces = new ArrayList<>();
    boolean isInterface;
    boolean isAbstract;
    /** name + descriptor -> access flags. */
    Map<String, Integer> methods = new HashMap<>();
  }

  private final Map<String, Type> types = new HashMap<>();

  private Implementors() {}

  /** Reads every class of {@code jar} outside META-INF/versions. */
  static Implementors of(File jar) throws IOException {
    return of(List.of(jar));
  }

  /**
   * One hierarchy over several jars (the jars of one line's modules), a class name taken from the
   * first jar that has it.
   */
  static Implementors of(List<File> jars) throws IOException {
    Implementors h = new Implementors();
    for (File jar : jars) {
      h.read(jar);
    }
    return h;
  }

  private void read(File jar) throws IOException {
    Implementors h = this;
    try (JarFile j = new JarFile(jar)) {
      Enumeration<JarEntry> entries = j.entries();
      while (entries.hasMoreElements()) {
        JarEntry e = entries.nextElement();
        if (!e.getName().endsWith(".class") || e.getName().startsWith("META-INF/")
            || e.getName().endsWith("module-info.class")) {
          continue;
        }
        ClassFile cf;
        try (InputStream in = j.getInputStream(e)) {
          cf = new ClassFile(new DataInputStream(in));
        }
        Type t = new Type();
        t.superclass = cf.getSuperclass();
        for (String i : cf.getInterfaces()) {
          t.interfaces.add(i);
        }
        t.isInterface = cf.isInterface();
        t.isAbstract = cf.isAbstract();
        for (MethodInfo m : cf.getMethods()) {
          t.methods.put(m.getName() + m.getDescriptor(), m.getAccessFlags());
        }
        h.types.putIfAbsent(cf.getName(), t);
      }
    }
  }

  /** The classes read, dotted names. */
  Set<String> names() {
    return types.keySet();
  }

  /**
   * The abstract methods (name + descriptor, keyed by the dotted name of the interface or
   * abstract class that declares them) of this hierarchy's types that were not abstract in the
   * same type of {@code upstream}: new, or a default or concrete method made abstract. Types new
   * in this hierarchy are left out (no implementor was compiled without them), so are synthetic
   * methods.
   */
  Map<String, List<String>> abstractAdditions(Implementors upstream) {
    Map<String, List<String>> out = new java.util.TreeMap<>();
    for (Map.Entry<String, Type> e : types.entrySet()) {
      Type was = upstream.types.get(e.getKey());
      if (was == null || !(e.getValue().isInterface || e.getValue().isAbstract)) {
        continue;
      }
      for (Map.Entry<String, Integer> m : e.getValue().methods.entrySet()) {
        int flags = m.getValue();
        Integer before = was.methods.get(m.getKey());
        if ((flags & AccessFlag.ABSTRACT) != 0 && (flags & AccessFlag.SYNTHETIC) == 0
            && (before == null || (before & AccessFlag.ABSTRACT) == 0)) {
          out.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(m.getKey());
        }
      }
    }
    out.values().forEach(java.util.Collections::sort);
    return out;
  }

  /**
   * Whether {@code cls} (a dotted name) is a class of this hierarchy, not an interface, a subtype
   * of {@code type}.
   */
  boolean isImplementor(String cls, String type) {
    Type t = types.get(cls);
    return t != null && !t.isInterface && !cls.equals(type) && subtypeOf(cls, type);
  }

  /** Whether {@code cls} is an interface in this hierarchy. */
  boolean isInterface(String cls) {
    Type t = types.get(cls);
    return t != null && t.isInterface;
  }

  /** Whether {@code cls} is abstract in this hierarchy. */
  boolean isAbstract(String cls) {
    Type t = types.get(cls);
    return t != null && t.isAbstract;
  }

  /** Whether {@code cls} has, or inherits, a body for {@code key} (name + descriptor). */
  boolean implementsMethod(String cls, String key) {
    return implemented(cls, key);
  }

  /**
   * Classes of the jar that are subtypes of {@code type} (a dotted name) and have no
   * implementation of {@code name}{@code descriptor}, sorted, with " (abstract)" after abstract
   * ones (whose subclasses outside the jar break the same way), leaving out those {@code skip}
   * accepts (recompiled classes, which javac checked).
   */
  List<String> without(String type, String name, String descriptor,
      java.util.function.Predicate<String> skip) {
    String key = name + descriptor;
    Set<String> out = new TreeSet<>();
    for (Map.Entry<String, Type> e : types.entrySet()) {
      Type t = e.getValue();
      if (t.isInterface || e.getKey().equals(type) || !subtypeOf(e.getKey(), type)
          || skip.test(e.getKey()) || implemented(e.getKey(), key)) {
        continue;
      }
      out.add(e.getKey() + (t.isAbstract ? " (abstract)" : ""));
    }
    return new ArrayList<>(out);
  }

  /**
   * The abstract methods (name + descriptor) of interface {@code iface} and its superinterfaces
   * that {@code type} neither declares with a body nor inherits one of (from a superclass, or a
   * default method of any of its superinterfaces), sorted.
   */
  List<String> owedThrough(String type, String iface) {
    Set<String> out = new TreeSet<>();
    Set<String> seen = new HashSet<>();
    Deque<String> todo = new ArrayDeque<>(List.of(iface));
    while (!todo.isEmpty()) {
      String i = todo.poll();
      Type t = types.get(i);
      if (!seen.add(i) || t == null) {
        continue;
      }
      for (Map.Entry<String, Integer> m : t.methods.entrySet()) {
        if ((m.getValue() & AccessFlag.ABSTRACT) != 0 && !implemented(type, m.getKey())) {
          out.add(m.getKey());
        }
      }
      todo.addAll(t.interfaces);
    }
    return new ArrayList<>(out);
  }

  private boolean subtypeOf(String cls, String type) {
    Deque<String> todo = new ArrayDeque<>();
    Set<String> seen = new HashSet<>();
    todo.add(cls);
    while (!todo.isEmpty()) {
      String c = todo.poll();
      if (!seen.add(c)) {
        continue;
      }
      if (c.equals(type)) {
        return true;
      }
      Type t = types.get(c);
      if (t == null) {
        continue;
      }
      if (t.superclass != null) {
        todo.add(t.superclass);
      }
      todo.addAll(t.interfaces);
    }
    return false;
  }

  private boolean implemented(String cls, String key) {
    List<String> interfaces = new ArrayList<>();
    for (String c = cls; c != null;) {
      Type t = types.get(c);
      if (t == null) {
        break;
      }
      Integer flags = t.methods.get(key);
      if (flags != null && (flags & (AccessFlag.ABSTRACT | AccessFlag.STATIC)) == 0) {
        return true;
      }
      interfaces.addAll(t.interfaces);
      c = t.superclass;
    }
    Set<String> seen = new HashSet<>();
    Deque<String> todo = new ArrayDeque<>(interfaces);
    while (!todo.isEmpty()) {
      String i = todo.poll();
      Type t = types.get(i);
      if (!seen.add(i) || t == null) {
        continue;
      }
      Integer flags = t.methods.get(key);
      if (flags != null && (flags & (AccessFlag.ABSTRACT | AccessFlag.STATIC)) == 0) {
        return true;
      }
      todo.addAll(t.interfaces);
    }
    return false;
  }
}
