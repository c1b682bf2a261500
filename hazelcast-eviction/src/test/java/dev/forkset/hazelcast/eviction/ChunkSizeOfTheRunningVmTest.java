package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;

import dev.forkset.hazelcast.chunked.ChunkSize;
import java.lang.management.ManagementFactory;
import org.junit.Test;

/**
 * The chunking of issue 21 takes the collector from the same model the entry cost estimator
 * selects at member start (GcModelSelector over the running VM), not from a detection of its own.
 */
public class ChunkSizeOfTheRunningVmTest {

  @Test
  public void of_theModelSelectedForThisVm_followsItsCollector() {
    GcAwareEvictionConfig defaults = GcAwareEvictionConfig.read(name -> null);
    GcFootprintModel model = GcModelSelector.select(defaults, VmGc.current()).model;
    ChunkSize chunking = ChunkSize.of(model);
    String vm = model.describe() + "; " + chunking;
    switch (model.kind()) {
      case G1:
        long region = Long.parseLong(ManagementFactory
            .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
            .getVMOption("G1HeapRegionSize").getValue());
        assertEquals(vm, region / 8, chunking.chunkSize());
        assertEquals(vm, region / 2 - model.arrayHeader(), chunking.largestWhole());
        break;
      case ZGC:
      case ZGC_GENERATIONAL:
        assertEquals(vm, 64 * 1024, chunking.chunkSize());
        break;
      case SHENANDOAH:
        assertEquals(vm, model.regionSize() / 4, chunking.chunkSize());
        break;
      default:
        assertFalse(vm, chunking.chunks(Integer.MAX_VALUE));
    }
    System.out.println(vm);
  }
}
