package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.Test;

public class GcFootprintModelTest {
  private static final long MB = 1024 * 1024;

  @Test
  public void g1HumongousAboveHalfRegionTakesWholeRegions() {
    GcFootprintModel g1 = GcFootprintModel.g1(4 * MB);
    assertEquals(8 * MB, g1.byteArray(5 * MB));          // the seed's 5 MB value: 2 regions
    assertEquals(4 * MB, g1.footprint(2 * MB + 1));       // just over half a region
    assertEquals(2 * MB, g1.footprint(2 * MB));           // exactly half: not humongous
    assertEquals(104, g1.footprint(100));                 // alignment only
    assertEquals(4 * MB, GcFootprintModel.g1(MB).byteArray(3 * MB));
    assertEquals(64 * MB, GcFootprintModel.g1(32 * MB).byteArray(33 * MB));
    assertEquals(32 * MB, GcFootprintModel.g1(32 * MB).byteArray(16 * MB + 1));
    assertEquals(16 * MB, GcFootprintModel.g1(32 * MB).byteArray(16 * MB - 16));
  }

  @Test
  public void zgcLargeObjectsRoundToTheGranule() {
    GcFootprintModel z = GcFootprintModel.zgc(256 * MB, false);
    // 256 MB heap: medium page 8 MB, medium objects <= 1 MB
    assertEquals(MB, GcFootprintModel.zgcMediumLimit(256 * MB));
    assertEquals(6 * MB, z.byteArray(5 * MB));
    assertEquals(512 * 1024 + 16, z.byteArray(512 * 1024));   // medium
    assertEquals((10_000 + 16) * 6 / 5, z.byteArray(10_000));   // small >= 4 KB: page fill
    assertEquals(120, z.byteArray(100));   // tiny: aligned
    assertEquals(2 * MB, z.byteArray(MB + 1));                  // large
    assertEquals(4 * MB, GcFootprintModel.zgcMediumLimit(4096 * MB));
    assertEquals(0, GcFootprintModel.zgcMediumLimit(32 * MB));  // no medium pages in tiny heaps
    assertEquals(GcFootprintModel.Kind.ZGC_GENERATIONAL, GcFootprintModel.zgc(MB, true).kind());
  }

  @Test
  public void shenandoahHumongousAboveOneRegion() {
    GcFootprintModel s = GcFootprintModel.shenandoah(MB);
    assertEquals(MB, s.footprint(MB));
    assertEquals(2 * MB, s.footprint(MB + 1));
  }

  @Test
  public void flatAndConservative() {
    assertEquals(5 * MB + 16, GcFootprintModel.flat(GcFootprintModel.Kind.PARALLEL).byteArray(5 * MB));
    GcFootprintModel c = GcFootprintModel.conservative();
    assertEquals(2 * (5 * MB + 24), c.byteArray(5 * MB));
    assertEquals(2 * MB, c.byteArray(300 * 1024));
    // upper bound of every region model for any size
    for (long n = 1024; n < 100 * MB; n = n * 3 / 2) {
      for (long r : new long[] {MB, 4 * MB, 32 * MB}) {
        assertTrue(c.byteArray(n) >= GcFootprintModel.g1(r).byteArray(n));
        assertTrue(c.byteArray(n) >= GcFootprintModel.shenandoah(r).byteArray(n));
      }
      assertTrue(n + "", c.byteArray(n) >= GcFootprintModel.zgc(256 * MB, false).byteArray(n));
    }
  }

  private static VmGc vm(Map<String, String> options, String... names) {
    return new VmGc(Arrays.asList(names), options::get, 256 * MB);
  }

  @Test
  public void detectsCollectorsFromBeanNames() {
    Map<String, String> o = new HashMap<>();
    o.put("G1HeapRegionSize", String.valueOf(4 * MB));
    GcAwareEvictionConfig auto = GcAwareEvictionConfig.read(n -> null);
    GcModelSelector.Selection s = GcModelSelector.select(auto, vm(o, "G1 Young Generation", "G1 Old Generation"));
    assertEquals(GcFootprintModel.Kind.G1, s.model.kind());
    assertEquals(4 * MB, s.model.regionSize());
    assertNull(s.warning);
    assertEquals(GcFootprintModel.Kind.ZGC, GcModelSelector.select(auto, vm(o, "ZGC Cycles", "ZGC Pauses")).model.kind());
    assertEquals(GcFootprintModel.Kind.ZGC_GENERATIONAL,
        GcModelSelector.select(auto, vm(o, "ZGC Minor Cycles", "ZGC Major Cycles")).model.kind());
    assertEquals(GcFootprintModel.Kind.SHENANDOAH,
        GcModelSelector.select(auto, vm(o, "Shenandoah Cycles", "Shenandoah Pauses")).model.kind());
    assertEquals(GcFootprintModel.Kind.PARALLEL, GcModelSelector.select(auto, vm(o, "PS Scavenge", "PS MarkSweep")).model.kind());
    assertEquals(GcFootprintModel.Kind.SERIAL, GcModelSelector.select(auto, vm(o, "Copy", "MarkSweepCompact")).model.kind());
    GcModelSelector.Selection unknown = GcModelSelector.select(auto, vm(o, "Epsilon Heap"));
    assertEquals(GcFootprintModel.Kind.CONSERVATIVE, unknown.model.kind());
    assertNotNull(unknown.warning);
  }

  @Test
  public void propertyOverridesDetection() {
    Map<String, String> props = new HashMap<>();
    props.put("hazelcast.map.eviction.gc.model", "g1");
    props.put("hazelcast.map.eviction.gc.region.size", "32m");
    GcModelSelector.Selection s = GcModelSelector.select(GcAwareEvictionConfig.read(props::get),
        vm(new HashMap<>(), "PS Scavenge"));
    assertEquals(GcFootprintModel.Kind.G1, s.model.kind());
    assertEquals(32 * MB, s.model.regionSize());
    assertTrue(s.model.describe(), s.model.describe().contains("region 32 MB"));
  }

  @Test
  public void g1RegionFromErgonomicsWhenFlagUnreadable() {
    VmGc v = new VmGc(Arrays.asList("G1 Young Generation"), n -> null, 8192 * MB);
    assertEquals(4 * MB, v.g1RegionSize());
    assertEquals(MB, new VmGc(Arrays.asList("G1 Young Generation"), n -> null, 256 * MB).g1RegionSize());
  }

  @Test
  public void detectsTheRunningVm() {
    GcModelSelector.Selection s = GcModelSelector.select(GcAwareEvictionConfig.read(n -> null), VmGc.current());
    assertNotNull(s.model.describe());
  }
}
