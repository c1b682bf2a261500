package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

public class ForceLedgerTest {

  @Test
  public void sync_forcesOnlyWhenAWriteEndedSinceTheLastForce() throws IOException {
    ForceLedger ledger = new ForceLedger();
    AtomicInteger forces = new AtomicInteger();
    ledger.sync(forces::incrementAndGet);
    assertEquals("nothing written", 0, forces.get());
    ledger.written();
    ledger.written();
    ledger.sync(forces::incrementAndGet);
    ledger.sync(forces::incrementAndGet);
    assertEquals(1, forces.get());
    ledger.written();
    ledger.sync(forces::incrementAndGet);
    assertEquals(2, forces.get());
  }

  @Test
  public void mayHaveLost_theWritesAFailedForceCoveredAndNoEarlierForceHad() throws IOException {
    ForceLedger ledger = new ForceLedger();
    long a = ledger.written();
    ledger.sync(() -> { });
    long b = ledger.written();
    long c = ledger.written();
    try {
      ledger.sync(() -> {
        throw new IOException("EIO");
      });
      fail("a failed force was not reported");
    } catch (IOException expected) {
      assertEquals("EIO", expected.getMessage());
    }
    long d = ledger.written();
    ledger.sync(() -> { }); // what a retried fsync does after a failed write-back: returns 0
    assertFalse("forced before the failure", ledger.mayHaveLost(a, a));
    assertTrue(ledger.mayHaveLost(b, b));
    assertTrue(ledger.mayHaveLost(c, c));
    assertTrue("a range reaching into the lost writes", ledger.mayHaveLost(a, b));
    assertFalse("written after the failure, forced after it", ledger.mayHaveLost(d, d));
  }

  @Test
  public void sync_afterAFailure_forcesNothingForTheLostWritesAlone() throws IOException {
    ForceLedger ledger = new ForceLedger();
    ledger.written();
    try {
      ledger.sync(() -> {
        throw new IllegalStateException("unchecked, as JDK 13+ force throws");
      });
      fail("a failed force was not reported");
    } catch (IOException expected) {
      assertTrue(expected.getCause() instanceof IllegalStateException);
    }
    AtomicInteger forces = new AtomicInteger();
    ledger.sync(forces::incrementAndGet);
    assertEquals("a force that could confirm nothing", 0, forces.get());
    ledger.written();
    ledger.sync(forces::incrementAndGet);
    assertEquals(1, forces.get());
  }
}
