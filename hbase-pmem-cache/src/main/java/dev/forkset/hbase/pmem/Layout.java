package dev.forkset.hbase.pmem;

/**
 * Where each byte of the cache lives: the placement of the cache's logical address space on the
 * cache files. Pure arithmetic, no I/O.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>The address space is cut into segments of the mapping size M. Segment s lives in file
 *       s mod n (n = number of paths, in the order of the ioengine value) at file offset
 *       {@link #HEADER_RESERVE} + (s div n) * M. Consecutive segments alternate between devices,
 *       so each file holds about capacity / n and BucketCache's buckets, spread over the whole
 *       address space, use every device about equally.
 *   <li>Each file starts with {@link #HEADER_RESERVE} bytes for its {@link CacheFileHeader}.
 *       2 MiB keeps every segment 2 MiB aligned in its file, which a DAX filesystem needs to map
 *       it with huge pages.
 *   <li>The last segment is cut to the capacity, rounded up to 4 KiB; no segment crosses a file,
 *       so the cache uses ceil(capacity / M) mappings.
 * </ol>
 */
final class Layout {

  /** Page size that lengths and forced ranges are aligned to. */
  static final int PAGE = 4096;

  /** Bytes at the start of every cache file for its header. */
  static final long HEADER_RESERVE = 2L << 20;

  private final int pathCount;
  private final long capacity;
  private final long mappingSize;
  private final int shift;
  private final int segmentCount;

  Layout(int pathCount, long capacity, long mappingSize) {
    if (pathCount <= 0 || capacity <= 0 || Long.bitCount(mappingSize) != 1) {
      throw new IllegalArgumentException("paths=" + pathCount + ", capacity=" + capacity
          + ", mapping size=" + mappingSize);
    }
    this.pathCount = pathCount;
    this.capacity = capacity;
    this.mappingSize = mappingSize;
    this.shift = Long.numberOfTrailingZeros(mappingSize);
    long segments = (capacity + mappingSize - 1) / mappingSize;
    if (segments > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("capacity " + capacity + " needs too many mappings");
    }
    this.segmentCount = (int) segments;
  }

  int pathCount() {
    return pathCount;
  }

  long capacity() {
    return capacity;
  }

  long mappingSize() {
    return mappingSize;
  }

  int segmentCount() {
    return segmentCount;
  }

  /** The file segment s lives in. */
  int fileOf(int segment) {
    return segment % pathCount;
  }

  /** The offset of segment s in its file. */
  long fileOffset(int segment) {
    return HEADER_RESERVE + (long) (segment / pathCount) * mappingSize;
  }

  /** The length of segment s: the mapping size, the last one cut to the capacity. */
  long segmentLength(int segment) {
    if (segment < segmentCount - 1) {
      return mappingSize;
    }
    long rest = capacity - (long) segment * mappingSize;
    return (rest + PAGE - 1) / PAGE * PAGE;
  }

  /** The length of cache file i: its header and its segments. */
  long fileLength(int file) {
    long length = HEADER_RESERVE;
    for (int s = file; s < segmentCount; s += pathCount) {
      length = fileOffset(s) + segmentLength(s);
    }
    return length;
  }

  /** The segment that holds logical offset x. */
  int segmentOf(long offset) {
    return (int) (offset >>> shift);
  }

  /** The position of logical offset x inside its segment. */
  int offsetInSegment(long offset) {
    return (int) (offset & (mappingSize - 1));
  }

  /** A description that changes whenever a byte would move: stored with the cache's identity. */
  String describe() {
    return "capacity=" + capacity + ";mapping=" + mappingSize + ";paths=" + pathCount
        + ";header=" + HEADER_RESERVE;
  }
}
