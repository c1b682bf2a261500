package dev.forkset.memstore.agent;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;
import java.security.ProtectionDomain;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * A Java agent that makes every {@code ConcurrentSkipListMap.size()} in the JVM call
 * {@link CslmSizeHook#sizeCalled()} first, so tests can count the calls whatever the JDK: on JDK 8
 * {@code size()} walks the map (O(n)), on JDK 9+ it sums a counter, and the count is the same.
 * {@code -javaagent:hbase-server-2.1.2-fork-cslm-agent.jar} (built by this line's pom).
 *
 * <p>Notes: {@link CslmSizeHook} alone is put on the boot class path so it has one copy that
 * {@code java.util.concurrent} can link to; on JDK 9+ java.base is also made to read the boot
 * loader's unnamed module (through reflection: this class compiles at release 8).
 */
public final class CslmSizeAgent {
  /** System property the agent sets to "true" once the method is instrumented. */
  static final String INSTALLED_PROPERTY = "forkset.cslm.size.agent";
  private static final String HOOK = "dev/forkset/memstore/agent/CslmSizeHook";
  private static final String TARGET = "java/util/concurrent/ConcurrentSkipListMap";

  private CslmSizeAgent() {}

  public static void premain(String args, Instrumentation inst) throws Exception {
    inst.appendToBootstrapClassLoaderSearch(new JarFile(hookJar()));
    Class<?> hook = Class.forName(HOOK.replace('/', '.'), true, null);
    readHookFromJavaBase(inst, hook);
    inst.addTransformer(new Transformer(), true);
    inst.retransformClasses(ConcurrentSkipListMap.class);
    System.setProperty(INSTALLED_PROPERTY, "true");
  }

  /**
   * A temporary jar with only {@link CslmSizeHook}: the boot class path must not get the agent's
   * other classes (they link to ASM, which is on the application class path).
   */
  private static File hookJar() throws IOException {
    File jar = File.createTempFile("cslm-size-hook", ".jar");
    jar.deleteOnExit();
    String entry = HOOK + ".class";
    try (InputStream in = CslmSizeAgent.class.getClassLoader().getResourceAsStream(entry);
        JarOutputStream out = new JarOutputStream(new FileOutputStream(jar))) {
      if (in == null) {
        throw new IOException(entry + " not found beside the agent");
      }
      out.putNextEntry(new JarEntry(entry));
      byte[] buf = new byte[8192];
      for (int n = in.read(buf); n > 0; n = in.read(buf)) {
        out.write(buf, 0, n);
      }
      out.closeEntry();
    }
    return jar;
  }

  /** JDK 9+: java.base reads the module of {@code hook} (the boot loader's unnamed module). */
  private static void readHookFromJavaBase(Instrumentation inst, Class<?> hook) throws Exception {
    Method getModule;
    try {
      getModule = Class.class.getMethod("getModule");
    } catch (NoSuchMethodException jdk8) {
      return;
    }
    Object javaBase = getModule.invoke(ConcurrentSkipListMap.class);
    Object hookModule = getModule.invoke(hook);
    Class<?> moduleClass = Class.forName("java.lang.Module");
    Method redefine = Instrumentation.class.getMethod("redefineModule", moduleClass, Set.class,
        java.util.Map.class, java.util.Map.class, Set.class, java.util.Map.class);
    redefine.invoke(inst, javaBase, Collections.singleton(hookModule), Collections.emptyMap(),
        Collections.emptyMap(), Collections.emptySet(), Collections.emptyMap());
  }

  /** Inserts {@code CslmSizeHook.sizeCalled()} at the start of {@code size()I}. */
  private static final class Transformer implements ClassFileTransformer {
    @Override
    public byte[] transform(ClassLoader loader, String className, Class<?> redefined,
        ProtectionDomain domain, byte[] bytes) {
      if (!TARGET.equals(className)) {
        return null;
      }
      ClassReader reader = new ClassReader(bytes);
      ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
      reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
        @Override
        public MethodVisitor visitMethod(int access, String name, String descriptor,
            String signature, String[] exceptions) {
          MethodVisitor mv = super.visitMethod(access, name, descriptor, signature, exceptions);
          if (!"size".equals(name) || !"()I".equals(descriptor)) {
            return mv;
          }
          return new MethodVisitor(Opcodes.ASM9, mv) {
            @Override
            public void visitCode() {
              super.visitCode();
              super.visitMethodInsn(Opcodes.INVOKESTATIC, HOOK, "sizeCalled", "()V", false);
            }
          };
        }
      }, 0);
      return writer.toByteArray();
    }
  }
}
