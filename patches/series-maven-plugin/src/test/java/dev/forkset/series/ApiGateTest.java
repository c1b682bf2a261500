package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class ApiGateTest {
  @ClassRule
  public static final TemporaryFolder TMP = new TemporaryFolder();
  private static Path upstream;

  /** The upstream unit p/A and an untouched neighbour p/B. */
  private static final String A = "package p;\n"
      + "public class A implements Runnable {\n"
      + "  public static final int LIMIT = 10;\n"
      + "  public static final String NAME = \"a\";\n"
      + "  static final long PACKAGE_CONSTANT = 5L;\n"
      + "  private static final int PRIVATE_CONSTANT = 1;\n"
      + "  protected long size;\n"
      + "  private int secret;\n"
      + "  public A() {}\n"
      + "  public long size() { return size; }\n"
      + "  void packageHelper() {}\n"
      + "  private void privateHelper() {}\n"
      + "  public void run() { new Thread(new Runnable() { public void run() {} }); }\n"
      + "  public static class Nested { public void keep() {} }\n"
      + "  private static class Hidden { void gone() {} }\n"
      + "  class Reader { int read() { return secret; } }\n"
      + "}\n";
  private static final String B = "package p; public class B { public void b() {} }";

  private List<String> gate(String newA) throws Exception {
    return gate(newA, B);
  }

  private List<String> gate(String newA, String newB) throws Exception {
    if (upstream == null) {
      upstream = Compiled.jar(TMP.getRoot().toPath().resolve("upstream.jar"), 8,
          Compiled.sources("p/A.java", A, "p/B.java", B));
    }
    Path root = TMP.newFolder().toPath();
    Path neu = Compiled.jar(root.resolve("new.jar"), 8,
        Compiled.sources("p/A.java", newA, "p/B.java", newB));
    return ApiGate.check(upstream.toFile(), neu.toFile(), List.of("p/A"));
  }

  private static void assertOne(List<String> violations, String expected) {
    assertEquals(violations.toString(), 1, violations.size());
    assertTrue(violations.get(0), violations.get(0).contains(expected));
  }

  @Test
  public void check_passes_whenTheSameApiIsRecompiled() throws Exception {
    assertEquals(List.of(), gate(A));
  }

  @Test
  public void check_passes_forAdditionsAndPrivateOrSyntheticChanges() throws Exception {
    String patched = A
        .replace("  private void privateHelper() {}\n", "  private int privateHelper(int x) { return x; }\n")
        .replace("  private static final int PRIVATE_CONSTANT = 1;\n", "  private static final int PRIVATE_CONSTANT = 2;\n")
        .replace("  private static class Hidden { void gone() {} }\n", "")
        .replace("  class Reader { int read() { return secret; } }\n",
            "  class Reader { int read() { return secret + secret2; } }\n  private int secret2;\n")
        .replace("  public void run() {", "  public void added() { new Object() {}; }\n"
            + "  public static final int NEW_LIMIT = 3;\n  public interface Listener {}\n"
            + "  public void run() {");
    assertEquals(List.of(), gate(patched));
  }

  @Test
  public void check_passes_whenASyntheticAccessorGoes() throws Exception {
    // Java 8 bytecode: Reader reading the private field makes A.access$000; it goes with the read.
    assertEquals(List.of(), gate(A.replace("int read() { return secret; }", "int read() { return 0; }")));
  }

  @Test
  public void check_ignoresClassesOutsideThePatchedUnits() throws Exception {
    assertEquals(List.of(), gate(A, "package p; public class B {}"));
  }

  @Test
  public void check_fails_whenAPublicMethodIsRemoved() throws Exception {
    assertOne(gate(A.replace("  public long size() { return size; }\n", "")),
        "method p.A.size() was removed");
  }

  @Test
  public void check_fails_whenAReturnTypeChanges() throws Exception {
    assertOne(gate(A.replace("public long size() { return size; }", "public int size() { return 0; }")),
        "method p.A.size() changed: public long size() -> public int size()");
  }

  @Test
  public void check_fails_whenParametersChange() throws Exception {
    List<String> v = gate(A.replace("public long size() {", "public long size(int unit) {"));
    assertTrue(v.toString(), v.stream().anyMatch(s -> s.contains("method p.A.size() was removed")));
  }

  @Test
  public void check_fails_whenAPackagePrivateMethodGoes_becauseNeighboursLinkToIt() throws Exception {
    assertOne(gate(A.replace("  void packageHelper() {}\n", "")),
        "method p.A.packageHelper() was removed");
  }

  @Test
  public void check_fails_whenAConstantValueChanges_becauseCallersInlinedIt() throws Exception {
    assertOne(gate(A.replace("LIMIT = 10;", "LIMIT = 20;")),
        "field p.A.LIMIT: compile-time constant changed from 10 to 20");
    assertOne(gate(A.replace("NAME = \"a\";", "NAME = \"b\";")),
        "field p.A.NAME: compile-time constant changed from \"a\" to \"b\"");
    assertOne(gate(A.replace("PACKAGE_CONSTANT = 5L;", "PACKAGE_CONSTANT = 6L;")),
        "field p.A.PACKAGE_CONSTANT: compile-time constant changed from 5 to 6");
  }

  @Test
  public void check_fails_whenAConstantStopsBeingOne() throws Exception {
    assertOne(gate(A.replace("public static final int LIMIT = 10;",
            "public static final int LIMIT = Integer.getInteger(\"limit\", 10);")),
        "field p.A.LIMIT: was the compile-time constant 10 and is no longer a constant");
  }

  @Test
  public void check_fails_whenAFieldChanges() throws Exception {
    assertOne(gate(A.replace("protected long size;", "protected int size;")), "field p.A.size changed");
    assertOne(gate(A.replace("protected long size;", "protected final long size = 0;")),
        "field p.A.size changed");
  }

  @Test
  public void check_fails_whenTheClassHeaderChanges() throws Exception {
    assertOne(gate(A.replace("public class A implements Runnable {", "public final class A implements Runnable {")),
        "class p.A changed: final");
    List<String> v = gate(A.replace("public class A implements Runnable {", "public class A {")
        .replace("  public void run() { new Thread", "  public void run2() { new Thread"));
    assertTrue(v.toString(), v.stream().anyMatch(s -> s.contains("class p.A no longer implements java.lang.Runnable")));
  }

  @Test
  public void check_fails_whenANestedClassOrItsMemberGoes() throws Exception {
    assertOne(gate(A.replace("public void keep() {}", "")), "method p.A$Nested.keep() was removed");
    assertOne(gate(A.replace("  public static class Nested { public void keep() {} }\n", "")),
        "class p.A$Nested was removed");
  }

  @Test
  public void check_fails_whenAConstructorGoes() throws Exception {
    assertOne(gate(A.replace("  public A() {}\n", "  public A(int x) {}\n")),
        "constructor p.A() was removed");
  }

  /**
   * An interface p.I with a default method, its implementors (direct, through a superclass,
   * through a subinterface, one abstract) and p.Own, whose unit the series recompiles.
   */
  private static final String I = "package p; public interface I { void a(); default void d() {} }";
  private static final String IMPLEMENTORS = "package p;\n"
      + "public class Impl implements I { public void a() {} }\n"
      + "class Sub extends Impl {}\n"
      + "interface J extends I {}\n"
      + "abstract class ViaJ implements J {}\n"
      + "class Full implements I { public void a() {} public void b(int x) {} }\n"
      + "class Unrelated { public void b(int x) {} }\n";

  /**
   * A custom jar as overlay makes it: {@code upstream}'s classes, with {@code units} compiled
   * alone (against nothing else) in place of theirs, the others as upstream compiled them.
   */
  private static Path overlaid(Path upstream, Path jar, java.util.Map<String, String> units)
      throws Exception {
    java.util.Map<String, byte[]> entries = new java.util.TreeMap<>();
    try (java.util.zip.ZipFile up = new java.util.zip.ZipFile(upstream.toFile())) {
      for (java.util.zip.ZipEntry e : java.util.Collections.list(up.entries())) {
        entries.put(e.getName(), up.getInputStream(e).readAllBytes());
      }
    }
    entries.putAll(Compiled.entries(8, units));
    return Compiled.zip(jar, entries);
  }

  private List<String> gateOnInterface(String newI, String newOwn) throws Exception {
    Path root = TMP.newFolder().toPath();
    String own = "package p; public class Own implements I { public void a() {} }";
    Path up = Compiled.jar(root.resolve("up.jar"), 8,
        Compiled.sources("p/I.java", I, "p/Impl.java", IMPLEMENTORS, "p/Own.java", own));
    Path neu = overlaid(up, root.resolve("new.jar"),
        Compiled.sources("p/I.java", newI, "p/Own.java", newOwn));
    return ApiGate.check(up.toFile(), neu.toFile(), List.of("p/I", "p/Own"));
  }

  @Test
  public void check_fails_whenAnInterfaceGetsAnAbstractMethod_namingTheImplementorsLeftWithout()
      throws Exception {
    assertEquals(List.of("method p.I.b(int) was added as abstract to interface p.I; left without"
            + " an implementation in the jar (not recompiled): p.Impl, p.Sub, p.ViaJ (abstract)"),
        gateOnInterface(I.replace("void a();", "void a(); void b(int x);"),
            "package p; public class Own implements I { public void a() {} public void b(int x) {} }"));
  }

  @Test
  public void check_passes_whenTheNewInterfaceMethodIsDefault() throws Exception {
    assertEquals(List.of(), gateOnInterface(
        I.replace("void a();", "void a(); default void b(int x) {} static void s() {}"),
        "package p; public class Own implements I { public void a() {} public void b(int x) {} }"));
  }

  @Test
  public void check_fails_whenADefaultMethodBecomesAbstract() throws Exception {
    assertEquals(List.of("method p.I.d() became abstract in interface p.I; left without an"
            + " implementation in the jar (not recompiled): p.Full, p.Impl, p.Sub, p.ViaJ (abstract)"),
        gateOnInterface(I.replace("default void d() {}", "void d();"),
            "package p; public class Own implements I { public void a() {} public void d() {} }"));
  }

  @Test
  public void check_fails_whenAnAbstractClassGetsAnAbstractMethod() throws Exception {
    Path root = TMP.newFolder().toPath();
    String base = "package p; public abstract class Base { public abstract void a(); }";
    String subs = "package p;\n"
        + "public class Leaf extends Base { public void a() {} }\n"
        + "class Covered extends Base { public void a() {} protected long m() { return 0; } }\n";
    Path up = Compiled.jar(root.resolve("up.jar"), 8,
        Compiled.sources("p/Base.java", base, "p/Leaf.java", subs));
    Path neu = overlaid(up, root.resolve("new.jar"), Compiled.sources("p/Base.java",
        base.replace("public abstract void a();",
            "public abstract void a(); protected abstract long m(); protected long n() { return 1; }")));
    assertEquals(List.of("method p.Base.m() was added as abstract to abstract class p.Base; left"
            + " without an implementation in the jar (not recompiled): p.Leaf"),
        ApiGate.check(up.toFile(), neu.toFile(), List.of("p/Base")));
  }

  @Test
  public void check_fails_forANewAbstractMethodEvenWhenEveryImplementorInTheJarIsRecompiled()
      throws Exception {
    // Implementors outside the jar (coprocessors, plugins) still break.
    Path root = TMP.newFolder().toPath();
    String s = "package p; public interface S { long size(); }";
    String impl = "package p; public class SImpl implements S { public long size() { return 0; } }";
    Path up = Compiled.jar(root.resolve("up.jar"), 8,
        Compiled.sources("p/S.java", s, "p/SImpl.java", impl));
    Path neu = Compiled.jar(root.resolve("new.jar"), 8, Compiled.sources(
        "p/S.java", s.replace("long size();", "long size(); void inc(long d);"),
        "p/SImpl.java", impl.replace("return 0; }", "return 0; } public void inc(long d) {}")));
    assertEquals(List.of("method p.S.inc(long) was added as abstract to interface p.S; no class of"
            + " the jar is left without an implementation"),
        ApiGate.check(up.toFile(), neu.toFile(), List.of("p/S", "p/SImpl")));
  }

  @Test
  public void check_fails_whenAnInterfaceGetsASuperinterfaceWithAbstractMethods() throws Exception {
    Path root = TMP.newFolder().toPath();
    String k = "package p; public interface K extends L { void k(); default void kd() {} }\n"
        + "interface L { void l(); void a(); }";
    Path up = Compiled.jar(root.resolve("up.jar"), 8, Compiled.sources("p/I.java", I,
        "p/Impl.java", IMPLEMENTORS, "p/K.java", k,
        "p/Own.java", "package p; public class Own implements I { public void a() {} }"));
    Path neu = overlaid(up, root.resolve("new.jar"), Compiled.sources(
        "p/I.java", I.replace("public interface I {", "public interface I extends K {")
            .replace("void a();", "void a(); default void l() {}"),
        "p/Own.java", "package p; public class Own implements I { public void a() {}"
            + " public void k() {} }",
        "p/K.java", k));
    // a() was owed before; l() has a default in I now; k() is new and has none.
    assertEquals(List.of("interface p.I now extends p.K, whose abstract method k() it does not"
            + " implement; left without an implementation in the jar (not recompiled): p.Full,"
            + " p.Impl, p.Sub, p.ViaJ (abstract)"),
        ApiGate.check(up.toFile(), neu.toFile(), List.of("p/I", "p/Own")));
  }

  @Test
  public void check_fails_whenAnAbstractClassGetsAnInterfaceItDoesNotImplement() throws Exception {
    Path root = TMP.newFolder().toPath();
    String base = "package p; public abstract class Base { public abstract void a(); }";
    String subs = "package p;\n"
        + "public class Leaf extends Base { public void a() {} }\n"
        + "interface Sized { long size(); }\n";
    Path up = Compiled.jar(root.resolve("up.jar"), 8,
        Compiled.sources("p/Base.java", base, "p/Leaf.java", subs));
    Path neu = overlaid(up, root.resolve("new.jar"), Compiled.sources("p/Base.java",
        base.replace("public abstract class Base {", "public abstract class Base implements Sized {"),
        "p/Sized.java", "package p; interface Sized { long size(); }"));
    assertEquals(List.of("abstract class p.Base now implements p.Sized, whose abstract method"
            + " size() it does not implement; left without an implementation in the jar (not"
            + " recompiled): p.Leaf"),
        ApiGate.check(up.toFile(), neu.toFile(), List.of("p/Base")));
  }

  /**
   * Two modules of one line: p (the interface p.I, as hbase-hadoop-compat declares
   * MetricsRegionServerSource) and q (its implementor q.Impl and an abstract q.Base, as
   * hbase-hadoop2-compat implements it), compiled together and packed one jar per package.
   */
  private static final String API = "package p; public interface I { void a(); }";
  private static final String IMPL = "package q;\n"
      + "public class Impl implements p.I { public void a() {} }\n"
      + "abstract class Base implements p.I {}\n"
      + "class Unrelated { public void a() {} }\n";

  /** The classes of {@code sources} under {@code pkg}/, compiled together, as one jar. */
  private static Path moduleJar(Path jar, String pkg, java.util.Map<String, String> sources)
      throws Exception {
    java.util.Map<String, byte[]> entries = Compiled.entries(8, sources);
    entries.keySet().removeIf(name -> !name.startsWith(pkg + "/"));
    return Compiled.zip(jar, entries);
  }

  /**
   * The gate across p and q with custom jars made from {@code newApi} and from {@code newImpl}
   * compiled against {@code implAgainst} (the stock interface when q's line does not see p's).
   */
  private List<String> acrossJars(String newApi, String newImpl, String implAgainst, String own)
      throws Exception {
    Path root = TMP.newFolder().toPath();
    java.util.Map<String, String> up = Compiled.sources("p/I.java", API, "q/Impl.java", IMPL);
    return ApiGate.acrossJars(List.of(
        new ApiGate.ModuleJars("p", moduleJar(root.resolve("p-1.jar"), "p", up).toFile(),
            moduleJar(root.resolve("p-1-fork.1.jar"), "p",
                Compiled.sources("p/I.java", newApi)).toFile()),
        new ApiGate.ModuleJars("q", moduleJar(root.resolve("q-1.jar"), "q", up).toFile(),
            moduleJar(root.resolve("q-1-fork.1.jar"), "q",
                Compiled.sources("p/I.java", implAgainst, "q/Impl.java", newImpl)).toFile())),
        own);
  }

  @Test
  public void acrossJars_fails_whenAnotherModulesImplementorLacksTheNewMethod() throws Exception {
    List<String> expected = List.of(
        "method p.I.b(long) was added as abstract to interface p.I (p-1-fork.1.jar); its"
            + " implementor q.Base (abstract) in q-1.jar has no implementation in q-1-fork.1.jar",
        "method p.I.b(long) was added as abstract to interface p.I (p-1-fork.1.jar); its"
            + " implementor q.Impl in q-1.jar has no implementation in q-1-fork.1.jar");
    String api = API.replace("void a();", "void a(); void b(long d);");
    // Checked in either module's line: whichever the build makes last sees both custom jars.
    assertEquals(expected, acrossJars(api, IMPL, API, "p"));
    assertEquals(expected, acrossJars(api, IMPL, API, "q"));
  }

  @Test
  public void acrossJars_passes_whenTheCustomJarOfTheImplementorsLineImplementsIt()
      throws Exception {
    String api = API.replace("void a();", "void a(); void b(long d);");
    assertEquals(List.of(), acrossJars(api,
        IMPL.replace("public void a() {} }\nabstract", "public void a() {} public void b(long d) {} }\n"
            + "abstract").replace("abstract class Base implements p.I {}",
            "abstract class Base implements p.I { public void b(long d) {} }"), api, "q"));
  }

  @Test
  public void acrossJars_passes_whenTheNewMethodIsDefault() throws Exception {
    assertEquals(List.of(),
        acrossJars(API.replace("void a();", "void a(); default void b(long d) {}"), IMPL, API, "q"));
  }

  @Test
  public void acrossJars_waits_forTheOtherCustomJar() throws Exception {
    // The declaring line, built first, cannot see the implementors' custom jar: their line checks.
    Path root = TMP.newFolder().toPath();
    java.util.Map<String, String> up = Compiled.sources("p/I.java", API, "q/Impl.java", IMPL);
    java.util.Map<String, String> neu = Compiled.sources("p/I.java",
        API.replace("void a();", "void a(); void b(long d);"));
    assertEquals(List.of(), ApiGate.acrossJars(List.of(
        new ApiGate.ModuleJars("p", moduleJar(root.resolve("p.jar"), "p", up).toFile(),
            moduleJar(root.resolve("p-fork.jar"), "p", neu).toFile()),
        new ApiGate.ModuleJars("q", moduleJar(root.resolve("q.jar"), "q", up).toFile(), null)),
        "p"));
  }
}
