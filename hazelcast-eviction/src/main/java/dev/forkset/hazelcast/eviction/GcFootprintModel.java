package dev.forkset.hazelcast.eviction;

import java.util.Locale;

/**
 * The heap bytes an object really occupies on the running JVM, by garbage collector.
 *
 * <ul>
 *   <li><b>G1</b>: an object larger than half a region is humongous and occupies whole
 *       regions (JDK-8027959, "G1 humongous objects"); smaller objects are aligned.</li>
 *   <li><b>ZGC</b> (JDK 17, and the generational ZGC of JDK 21+): small objects (at most
 *       1/8 of the 2 MB small page, 256 KB) and medium objects (at most 1/8 of the medium page,
 *       whose size follows the heap size) are aligned, small ones of 4 KB and more counting 1.2
 *       times for the unused part of their shared pages; a large object gets a page of its own,
 *       rounded up to the 2 MB granule (JEP 333, JEP 439).</li>
 *   <li><b>Shenandoah</b>: an object larger than a region is humongous and occupies whole
 *       regions (ShenandoahHumongousThreshold=100).</li>
 *   <li><b>Parallel, Serial</b>: header and alignment only.</li>
 *   <li><b>Conservative</b> (unknown VM or collector): objects above 256 KB count twice their
 *       size, or their size rounded up to 2 MB if that is more, smaller ones 1.2 times; an upper
 *       bound for every
 *       region-based collector above.</li>
 * </ul>
 */
public final class GcFootprintModel {

  /** The collector families the model knows. */
  public enum Kind {
    G1("g1"), ZGC("zgc"), ZGC_GENERATIONAL("zgc-generational"), SHENANDOAH("shenandoah"),
    PARALLEL("parallel"), SERIAL("serial"), CONSERVATIVE("conservative");

    /** The value of the model property that selects this kind. */
    public final String value;

    Kind(String value) {
      this.value = value;
    }

    /** The kind for a property value, or null. */
    public static Kind of(String value) {
      for (Kind k : values()) {
        if (k.value.equals(value.toLowerCase(Locale.ROOT))) {
          return k;
        }
      }
      return null;
    }
  }

  static final long KB = 1024;
  static final long MB = 1024 * KB;
  /** ZGC granule and small page size. */
  static final long ZGC_GRANULE = 2 * MB;
  /** Largest ZGC small object: 1/8 of a small page. */
  static final long ZGC_SMALL_LIMIT = ZGC_GRANULE / 8;
  /** Small/medium objects on ZGC count 1 + 1/5 of their aligned size (page fill slack). */
  static final int ZGC_PAGE_FILL_SLACK_DIVISOR = 5;
  /** Smallest ZGC object that counts the page fill slack. */
  static final long ZGC_PAGE_FILL_SLACK_MIN = 4 * KB;
  /** Largest object the conservative model aligns only. */
  static final long CONSERVATIVE_SMALL_LIMIT = 256 * KB;

  private final Kind kind;
  private final long regionSize;
  private final long mediumLimit;
  private final int objectHeader;
  private final int arrayHeader;
  private final int referenceSize;
  private final int alignment;
  private final String source;

  GcFootprintModel(Kind kind, long regionSize, long mediumLimit, int objectHeader, int arrayHeader,
      int referenceSize, int alignment, String source) {
    this.kind = kind;
    this.regionSize = regionSize;
    this.mediumLimit = mediumLimit;
    this.objectHeader = objectHeader;
    this.arrayHeader = arrayHeader;
    this.referenceSize = referenceSize;
    this.alignment = alignment;
    this.source = source;
  }

  /** G1 with the given region size and 64-bit compressed-oops layout (12 B header). */
  public static GcFootprintModel g1(long regionSize) {
    return new GcFootprintModel(Kind.G1, regionSize, 0, 12, 16, 4, 8, "given");
  }

  /** ZGC (no compressed oops: 16 B object header, 16 B array header, 8 B references). */
  public static GcFootprintModel zgc(long maxHeap, boolean generational) {
    return new GcFootprintModel(generational ? Kind.ZGC_GENERATIONAL : Kind.ZGC, ZGC_GRANULE,
        zgcMediumLimit(maxHeap), 12, 16, 8, 8, "given");
  }

  /** Shenandoah with the given region size. */
  public static GcFootprintModel shenandoah(long regionSize) {
    return new GcFootprintModel(Kind.SHENANDOAH, regionSize, 0, 12, 16, 4, 8, "given");
  }

  /** Parallel or Serial. */
  public static GcFootprintModel flat(Kind kind) {
    return new GcFootprintModel(kind, 0, 0, 12, 16, 4, 8, "given");
  }

  /** The model for an unknown VM or collector. */
  public static GcFootprintModel conservative() {
    return new GcFootprintModel(Kind.CONSERVATIVE, 0, 0, 16, 24, 8, 8, "given");
  }

  /**
   * Largest ZGC medium object for a heap of {@code maxHeap} bytes: HotSpot sizes the medium
   * page at 3.125% of the heap, clamped to [2 MB, 32 MB] and rounded down to a power of two;
   * medium objects are at most 1/8 of it. A medium page no larger than a small page means no
   * medium objects (0).
   */
  static long zgcMediumLimit(long maxHeap) {
    long unclamped = (long) (maxHeap * 0.03125);
    long clamped = Math.max(ZGC_GRANULE, Math.min(16 * ZGC_GRANULE, unclamped));
    long page = Long.highestOneBit(clamped);
    return page > ZGC_GRANULE ? page / 8 : 0;
  }

  GcFootprintModel withLayout(int objectHeader, int arrayHeader, int referenceSize, int alignment,
      String source) {
    return new GcFootprintModel(kind, regionSize, mediumLimit, objectHeader, arrayHeader,
        referenceSize, alignment, source);
  }

  public Kind kind() {
    return kind;
  }

  /** Region size (G1, Shenandoah), granule (ZGC), or 0. */
  public long regionSize() {
    return regionSize;
  }

  public int objectHeader() {
    return objectHeader;
  }

  public int arrayHeader() {
    return arrayHeader;
  }

  public int referenceSize() {
    return referenceSize;
  }

  public int alignment() {
    return alignment;
  }

  /** The heap bytes an object of {@code bytes} bytes (header included) occupies. */
  public long footprint(long bytes) {
    long aligned = align(bytes, alignment);
    switch (kind) {
      case G1:
        return bytes > regionSize / 2 ? align(bytes, regionSize) : aligned;
      case SHENANDOAH:
        return bytes > regionSize ? align(bytes, regionSize) : aligned;
      case ZGC:
      case ZGC_GENERATIONAL:
        if (bytes <= ZGC_SMALL_LIMIT) {
          // Small objects of some KB share 2 MB pages with the garbage of the puts around them;
          // ZGC reports whole pages as used, and such pages of a filled map stay about 1/6 empty
          // (EvictionBench: 10 KB values take 1.2 x their aligned size in heap-after-GC). Tiny
          // objects pack densely and medium ones fill their own pages: no slack for them.
          return bytes >= ZGC_PAGE_FILL_SLACK_MIN ? aligned + aligned / ZGC_PAGE_FILL_SLACK_DIVISOR
              : aligned;
        }
        if (bytes <= mediumLimit) {
          return aligned;
        }
        return align(bytes, ZGC_GRANULE);
      case CONSERVATIVE:
        return bytes <= CONSERVATIVE_SMALL_LIMIT ? aligned + aligned / ZGC_PAGE_FILL_SLACK_DIVISOR
            : Math.max(2 * aligned, align(bytes, ZGC_GRANULE));
      default:
        return aligned;
    }
  }

  /** Footprint of a {@code byte[]} of {@code length}. */
  public long byteArray(long length) {
    return footprint(arrayHeader + length);
  }

  /** Footprint of a plain object with {@code fieldBytes} of fields. */
  public long object(long fieldBytes) {
    return footprint(objectHeader + fieldBytes);
  }

  /** Smallest object size that the model rounds beyond alignment, or -1 if none. */
  public long roundingThreshold() {
    switch (kind) {
      case G1:
        return regionSize / 2 + 1;
      case SHENANDOAH:
        return regionSize + 1;
      case ZGC:
      case ZGC_GENERATIONAL:
        return Math.max(ZGC_SMALL_LIMIT, mediumLimit) + 1;
      case CONSERVATIVE:
        return CONSERVATIVE_SMALL_LIMIT + 1;
      default:
        return -1;
    }
  }

  static long align(long bytes, long to) {
    return to <= 1 ? bytes : ((bytes + to - 1) / to) * to;
  }

  /** One line for the start log and the JMX attribute. */
  public String describe() {
    StringBuilder b = new StringBuilder(kind.value);
    switch (kind) {
      case G1:
        b.append(", region ").append(size(regionSize)).append(" (").append(source)
            .append("), objects > ").append(size(regionSize / 2))
            .append(" are humongous and occupy whole regions");
        break;
      case SHENANDOAH:
        b.append(", region ").append(size(regionSize)).append(" (").append(source)
            .append("), objects > ").append(size(regionSize))
            .append(" are humongous and occupy whole regions");
        break;
      case ZGC:
      case ZGC_GENERATIONAL:
        b.append(", small <= ").append(size(ZGC_SMALL_LIMIT)).append(", medium <= ")
            .append(mediumLimit == 0 ? "(none)" : size(mediumLimit))
            .append(", small objects >= 4 KB count 1.2 x (page fill)")
            .append(", larger objects rounded up to the ").append(size(ZGC_GRANULE))
            .append(" granule (").append(source).append(')');
        break;
      case CONSERVATIVE:
        b.append(", objects > ").append(size(CONSERVATIVE_SMALL_LIMIT))
            .append(" count max(2 x size, size rounded up to 2 MB), smaller ones 1.2 x size");
        break;
      default:
        b.append(", header and alignment only (").append(source).append(')');
    }
    b.append("; object header ").append(objectHeader).append(" B, array header ")
        .append(arrayHeader).append(" B, reference ").append(referenceSize)
        .append(" B, alignment ").append(alignment).append(" B");
    return b.toString();
  }

  static String size(long bytes) {
    if (bytes >= MB && bytes % MB == 0) {
      return bytes / MB + " MB";
    }
    if (bytes >= KB && bytes % KB == 0) {
      return bytes / KB + " KB";
    }
    return bytes + " B";
  }

  @Override
  public String toString() {
    return describe();
  }
}
