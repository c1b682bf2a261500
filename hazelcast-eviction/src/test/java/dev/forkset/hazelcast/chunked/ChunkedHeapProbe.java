package dev.forkset.hazelcast.chunked;

import com.hazelcast.internal.serialization.Data;
import com.hazelcast.internal.serialization.impl.HeapData;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Child-JVM main of {@link ChunkedValuesHeapTest}: holds {@code count} values of {@code size}
 * bytes, as HeapData or chunked, and prints the heap they occupy per value (heap used after a
 * full GC, filled minus empty: how EvictionBench measures "real heap").
 * Arguments: heap|chunked count size chunkSize.
 */
public final class ChunkedHeapProbe {
  private ChunkedHeapProbe() {
  }

  public static void main(String[] args) {
    boolean chunked = args[0].equals("chunked");
    int count = Integer.parseInt(args[1]);
    int size = Integer.parseInt(args[2]);
    int chunkSize = Integer.parseInt(args[3]);
    byte[] template = new byte[size];
    new Random(61).nextBytes(template);
    List<Data> kept = new ArrayList<>(count);
    long empty = usedAfterFullGc();
    for (int i = 0; i < count; i++) {
      byte[] payload = template.clone();
      payload[8] = (byte) i;
      Data value = new HeapData(payload);
      kept.add(chunked ? ChunkedData.copyOf(value, chunkSize) : value);
    }
    long filled = usedAfterFullGc();
    System.out.println("PER_VALUE " + (filled - empty) / count + " values=" + kept.size());
  }

  private static long usedAfterFullGc() {
    System.gc();
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
