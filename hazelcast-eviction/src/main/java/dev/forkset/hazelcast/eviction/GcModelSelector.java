package dev.forkset.hazelcast.eviction;

/** Picks the footprint model from the property and the running VM. */
final class GcModelSelector {
  /** The model and, for an unknown collector, the warning to log once. */
  static final class Selection {
    final GcFootprintModel model;
    final String warning;

    Selection(GcFootprintModel model, String warning) {
      this.model = model;
      this.warning = warning;
    }
  }

  private GcModelSelector() {
  }

  static Selection select(GcAwareEvictionConfig config, VmGc vm) {
    GcFootprintModel.Kind kind;
    String source;
    if (config.gcModel.equals("auto")) {
      kind = vm.detectKind();
      source = "detected";
      if (kind == null) {
        return new Selection(GcFootprintModel.conservative(),
            "Unknown garbage collector " + vm.collectorNames + ": entry costs use the conservative"
                + " footprint model (" + GcFootprintModel.conservative().describe() + "). Set "
                + GcAwareEvictionConfig.GC_MODEL.name + " to one of "
                + GcAwareEvictionConfig.GC_MODEL.accepted + " to choose one.");
      }
    } else {
      kind = GcFootprintModel.Kind.of(config.gcModel);
      source = "set by " + GcAwareEvictionConfig.GC_MODEL.name;
    }
    GcFootprintModel model;
    String regionSource = config.regionSize > 0 ? "set by " + GcAwareEvictionConfig.REGION_SIZE.name
        : "read from the VM";
    switch (kind) {
      case G1:
        model = GcFootprintModel.g1(config.regionSize > 0 ? config.regionSize : vm.g1RegionSize());
        source = source + ", region " + regionSource;
        break;
      case SHENANDOAH:
        model = GcFootprintModel.shenandoah(
            config.regionSize > 0 ? config.regionSize : vm.shenandoahRegionSize());
        source = source + ", region " + regionSource;
        break;
      case ZGC:
      case ZGC_GENERATIONAL:
        model = GcFootprintModel.zgc(vm.maxHeap, kind == GcFootprintModel.Kind.ZGC_GENERATIONAL);
        break;
      case CONSERVATIVE:
        return new Selection(GcFootprintModel.conservative(), null);
      default:
        model = GcFootprintModel.flat(kind);
    }
    boolean zgc = kind == GcFootprintModel.Kind.ZGC || kind == GcFootprintModel.Kind.ZGC_GENERATIONAL;
    boolean oops = !zgc && vm.flag("UseCompressedOops", true);
    boolean klass = vm.flag("UseCompressedClassPointers", true);
    int align = (int) vm.longOption("ObjectAlignmentInBytes", 8);
    int header = klass ? 12 : 16;
    int arrayHeader = (int) GcFootprintModel.align(header + 4, align);
    return new Selection(model.withLayout(header, arrayHeader, oops ? 4 : 8, align, source), null);
  }
}
