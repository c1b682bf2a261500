package dev.forkset.hbase.pmem;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which completed writes of one cache file (or one mapping) a force has made durable, and which a
 * failed force may have lost.
 *
 * <p>Implementation notes:
 * <ol>
 *   <li>Every completed write takes the next number ({@link #written}); a force covers every write
 *       numbered up to the count it read before it started, because those writes had ended.
 *   <li>A failed force cannot be undone by forcing again: Linux reports a writeback error once
 *       per open file (errseq), and the pages whose write-back failed are marked clean, so the
 *       next fsync or msync of the shared descriptor returns 0 with those bytes not on the
 *       device. The writes a failed force covered and no earlier force had made durable are
 *       therefore remembered as possibly lost ({@link #mayHaveLost}), and whoever made one of
 *       them must hear it at its own sync, even when a later force succeeds. Kept as one
 *       interval (failures are rare; a wider interval only fails more batches, which costs
 *       cache misses, never a wrong byte).
 *   <li>Forces of one ledger are serialized, so a sync returns only after a force that began
 *       after its writes ended, by it or by a concurrent sync.
 * </ol>
 */
final class ForceLedger {
  /** Forces what was written; the file's or the mapping's own force. */
  interface Force {
    void force() throws IOException;
  }

  private final AtomicLong writes = new AtomicLong();
  /** Guarded by this: the highest write number a successful force covered. */
  private long forced;
  /** Guarded by this: writes in [lostFrom, lostTo] may have been lost (empty when from > to). */
  private long lostFrom = Long.MAX_VALUE;
  private long lostTo = Long.MIN_VALUE;

  /** Records a completed write; its number. */
  long written() {
    return writes.incrementAndGet();
  }

  /**
   * Forces, with {@code force}, when a write ended after the last force began; the writes it
   * covers become durable, or, if it fails, possibly lost.
   * @throws IOException when the force fails
   */
  synchronized void sync(Force force) throws IOException {
    long upTo = writes.get();
    if (upTo <= Math.max(forced, lostTo)) {
      return;
    }
    try {
      force.force();
      forced = upTo;
    } catch (IOException | RuntimeException | InternalError e) {
      // InternalError: the JVM's report of a fault (SIGBUS) inside a memory access.
      lostFrom = Math.min(lostFrom, Math.max(forced, lostTo) + 1);
      lostTo = upTo;
      throw e instanceof IOException ? (IOException) e : new IOException(e.toString(), e);
    }
  }

  /** Whether a write numbered from {@code from} to {@code to} may have been lost. */
  synchronized boolean mayHaveLost(long from, long to) {
    return from <= lostTo && to >= lostFrom;
  }
}
