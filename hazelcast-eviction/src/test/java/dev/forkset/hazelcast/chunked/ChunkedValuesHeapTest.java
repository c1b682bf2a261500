package dev.forkset.hazelcast.chunked;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.forkset.childjvm.ChildJvm;
import dev.forkset.hazelcast.eviction.GcFootprintModel;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;

/**
 * Issue 21, point 3 for the layout alone: the modelled cost of a chunked value is within 10% of
 * the heap it occupies (heap used after a full GC, per value, in a JVM of the seed's shape).
 * The HeapData numbers of the same run are printed for the docs; on G1 (whose used() counts a
 * humongous object's regions whole) the chunked value must also take clearly less heap.
 */
public class ChunkedValuesHeapTest {
  private static final int MB = 1024 * 1024;
  private static final Pattern PER_VALUE = Pattern.compile("PER_VALUE (\\d+)");

  private static long perValue(String name, String layout, int count, int size, int chunkSize,
      String... gcFlags) throws Exception {
    try (ChildJvm probe = ChildJvm.builder("chunked-heap-" + name + "-" + layout,
        ChunkedHeapProbe.class.getName()).heap("256m").jvmArgs(gcFlags).classPathOfThisJvm()
        .args(layout, String.valueOf(count), String.valueOf(size), String.valueOf(chunkSize))
        .dir(Paths.get("target")).start()) {
      assertEquals(probe.logText(), 0, probe.waitFor(2, TimeUnit.MINUTES));
      Matcher m = PER_VALUE.matcher(probe.logText());
      assertTrue(probe.logText(), m.find());
      return Long.parseLong(m.group(1));
    }
  }

  private static long[] assertModelWithinTenPercent(String name, GcFootprintModel model, int size,
      String... gcFlags) throws Exception {
    ChunkSize chunking = ChunkSize.of(model);
    assertTrue(chunking.chunks(size));
    int count = 20;
    long chunkedReal = perValue(name, "chunked", count, size, chunking.chunkSize(), gcFlags);
    long heapReal = perValue(name, "heap", count, size, chunking.chunkSize(), gcFlags);
    long modelled = chunking.modelledCost(size);
    double error = (modelled - chunkedReal) / (double) chunkedReal;
    System.out.printf("%s, %d B values: chunked real %d B, modelled %d B (error %.1f%%);"
        + " HeapData real (used after GC) %d B, modelled %d B%n", name, size, chunkedReal,
        modelled, 100 * error, heapReal, chunking.heapDataCost(size));
    assertTrue(name + ": modelled " + modelled + " B, real " + chunkedReal + " B",
        Math.abs(error) <= 0.10);
    return new long[] {chunkedReal, heapReal};
  }

  @Test
  public void modelledCost_g1FourMbRegionsFiveMbValues_isWithinTenPercentOfTheHeap()
      throws Exception {
    long[] real = assertModelWithinTenPercent("g1-4m", GcFootprintModel.g1(4 * MB), 5 * MB,
        "-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m");
    assertTrue("chunked " + real[0] + " B, one array " + real[1] + " B", real[0] < 0.7 * real[1]);
  }

  @Test
  public void modelledCost_g1JustOverHalfARegion_isWithinTenPercentOfTheHeap() throws Exception {
    long[] real = assertModelWithinTenPercent("g1-4m", GcFootprintModel.g1(4 * MB),
        2 * MB + 1024, "-XX:+UseG1GC", "-XX:G1HeapRegionSize=4m");
    assertTrue("chunked " + real[0] + " B, one array " + real[1] + " B", real[0] < 0.55 * real[1]);
  }

  @Test
  public void modelledCost_zgcFiveMbValues_isWithinTenPercentOfTheHeap() throws Exception {
    assertModelWithinTenPercent("zgc", GcFootprintModel.zgc(256L * MB, false), 5 * MB,
        "-XX:+UseZGC");
  }
}
