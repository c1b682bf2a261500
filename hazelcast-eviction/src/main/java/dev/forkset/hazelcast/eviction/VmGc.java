package dev.forkset.hazelcast.eviction;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * What the running VM says about its collector: the GarbageCollectorMXBean names and the
 * HotSpot flags read through HotSpotDiagnosticMXBean (G1HeapRegionSize, ShenandoahRegionSize,
 * UseCompressedOops, UseCompressedClassPointers, ObjectAlignmentInBytes, ZGenerational).
 */
final class VmGc {
  final List<String> collectorNames;
  final Function<String, String> vmOption;
  final long maxHeap;

  VmGc(List<String> collectorNames, Function<String, String> vmOption, long maxHeap) {
    this.collectorNames = collectorNames;
    this.vmOption = vmOption;
    this.maxHeap = maxHeap;
  }

  /** Reads the running VM. */
  static VmGc current() {
    List<String> names = new ArrayList<>();
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      names.add(gc.getName());
    }
    return new VmGc(names, VmGc::hotspotOption, Runtime.getRuntime().maxMemory());
  }

  private static String hotspotOption(String name) {
    try {
      com.sun.management.HotSpotDiagnosticMXBean bean =
          ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
      return bean == null ? null : bean.getVMOption(name).getValue();
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  String option(String name) {
    return vmOption.apply(name);
  }

  long longOption(String name, long dflt) {
    String v = option(name);
    if (v == null) {
      return dflt;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return dflt;
    }
  }

  boolean flag(String name, boolean dflt) {
    String v = option(name);
    return v == null ? dflt : Boolean.parseBoolean(v.trim());
  }

  /** The collector family from the bean names, or null if none is known. */
  GcFootprintModel.Kind detectKind() {
    boolean z = false;
    boolean zGenerational = false;
    for (String n : collectorNames) {
      if (n.startsWith("G1 ")) {
        return GcFootprintModel.Kind.G1;
      }
      if (n.startsWith("Shenandoah")) {
        return GcFootprintModel.Kind.SHENANDOAH;
      }
      if (n.startsWith("PS ")) {
        return GcFootprintModel.Kind.PARALLEL;
      }
      if (n.equals("Copy") || n.equals("MarkSweepCompact")) {
        return GcFootprintModel.Kind.SERIAL;
      }
      if (n.startsWith("ZGC")) {
        z = true;
        // JDK 21+: "ZGC Minor Cycles"/"ZGC Major Cycles" for generational ZGC,
        // "ZGC Cycles"/"ZGC Pauses" for the single-generation one (the only ZGC of JDK 17).
        if (n.contains("Minor") || n.contains("Major")) {
          zGenerational = true;
        }
      }
    }
    if (z) {
      return zGenerational ? GcFootprintModel.Kind.ZGC_GENERATIONAL : GcFootprintModel.Kind.ZGC;
    }
    return null;
  }

  /** G1 region size as HotSpot chose it, or its ergonomic formula if the flag cannot be read. */
  long g1RegionSize() {
    long v = longOption("G1HeapRegionSize", 0);
    if (v > 0) {
      return v;
    }
    long size = Long.highestOneBit(Math.max(1, maxHeap / 2048));
    return Math.max(GcFootprintModel.MB, Math.min(32 * GcFootprintModel.MB, size));
  }

  /** Shenandoah region size: the flag if set, else HotSpot's formula (heap / 2048, [256 KB, 32 MB]). */
  long shenandoahRegionSize() {
    long v = longOption("ShenandoahRegionSize", 0);
    if (v > 0) {
      return v;
    }
    long size = Long.highestOneBit(Math.max(1, maxHeap / 2048));
    return Math.max(256 * GcFootprintModel.KB, Math.min(32 * GcFootprintModel.MB, size));
  }
}
