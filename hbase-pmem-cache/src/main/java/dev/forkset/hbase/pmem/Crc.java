package dev.forkset.hbase.pmem;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.Checksum;

/**
 * The checksum of a block: CRC32C where the JDK has it (9+, a CPU instruction on x86 and
 * aarch64), CRC32 on JDK 8 (also an intrinsic there). A cache records the algorithm it was
 * formatted with and keeps it; a cache formatted with CRC32C and started on JDK 8 starts cold.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The module is Java 8 bytecode, so {@code java.util.zip.CRC32C} and
 *       {@code Checksum.update(ByteBuffer)} (both 9+) are reached through method handles held in
 *       static finals, which the JIT treats as constants and inlines.
 *   <li>Both update from a ByteBuffer without copying; on a direct (mapped) buffer the JDK
 *       checksums the memory in place.
 * </ol>
 */
abstract class Crc {

  /** Identifier stored in the cache file header. */
  abstract int id();

  abstract String name();

  abstract Checksum create();

  /** Adds the remaining bytes of {@code b} (its position moves to its limit). */
  abstract void update(Checksum c, ByteBuffer b);

  static final Crc CRC32 = new Crc() {
    @Override
    int id() {
      return 1;
    }

    @Override
    String name() {
      return "CRC32";
    }

    @Override
    Checksum create() {
      return new CRC32();
    }

    @Override
    void update(Checksum c, ByteBuffer b) {
      ((CRC32) c).update(b);
    }
  };

  private static final MethodHandle CRC32C_NEW;
  private static final MethodHandle CRC32C_UPDATE;

  static {
    MethodHandle create = null;
    MethodHandle update = null;
    try {
      Class<?> c = Class.forName("java.util.zip.CRC32C");
      MethodHandles.Lookup lookup = MethodHandles.publicLookup();
      create = lookup.findConstructor(c, MethodType.methodType(void.class))
          .asType(MethodType.methodType(Checksum.class));
      update = lookup.findVirtual(c, "update",
          MethodType.methodType(void.class, ByteBuffer.class))
          .asType(MethodType.methodType(void.class, Checksum.class, ByteBuffer.class));
    } catch (ReflectiveOperationException | LinkageError e) {
      create = null;
      update = null;
    }
    CRC32C_NEW = create;
    CRC32C_UPDATE = update;
  }

  static final Crc CRC32C = CRC32C_NEW == null ? null : new Crc() {
    @Override
    int id() {
      return 2;
    }

    @Override
    String name() {
      return "CRC32C";
    }

    @Override
    Checksum create() {
      try {
        return (Checksum) CRC32C_NEW.invokeExact();
      } catch (Throwable t) {
        throw new IllegalStateException("CRC32C", t);
      }
    }

    @Override
    void update(Checksum c, ByteBuffer b) {
      try {
        CRC32C_UPDATE.invokeExact(c, b);
      } catch (Throwable t) {
        throw new IllegalStateException("CRC32C", t);
      }
    }
  };

  /** The algorithm a new cache is formatted with. */
  static Crc fastest() {
    return CRC32C != null ? CRC32C : CRC32;
  }

  /** The algorithm with this identifier, or null when this JDK lacks it or the id is unknown. */
  static Crc forId(int id) {
    if (id == 1) {
      return CRC32;
    }
    if (id == 2) {
      return CRC32C;
    }
    return null;
  }

  /** A name for an identifier read from a header, for messages. */
  static String nameOf(int id) {
    return id == 1 ? "CRC32" : id == 2 ? "CRC32C" : "unknown checksum " + id;
  }
}
