package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.List;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseIOException;
import org.apache.hadoop.hbase.io.hfile.BlockCacheKey;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The start decisions of a store, and blocks written and checked through it. */
public class PmemStoreTest {
  private static final long MIB = 1L << 20;
  private static final BlockCacheKey KEY = new BlockCacheKey("hfile", 0);

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private File a;
  private File b;

  @Before
  public void setUp() throws IOException {
    a = new File(tmp.newFolder("a"), "cache");
    b = new File(tmp.newFolder("b"), "cache");
  }

  private static PmemCacheConfig config(String io, long capacity, String map) {
    Configuration c = new Configuration(false);
    c.set(PmemCacheConfig.MAPPING_SIZE.name, "2m");
    c.set(PmemCacheConfig.LOCK_WAIT.name, "0");
    return PmemCacheConfig.parse(io, capacity, map, c);
  }

  private PmemStore open() throws IOException {
    return PmemStore.open(config("pmem:" + a + "," + b, 8 * MIB, null));
  }

  /** Writes a 5000-byte block at 1 MiB - 16 (so it crosses into the next mapping). */
  private static long writeBlock(PmemStore s) throws IOException {
    long offset = 2 * MIB - 1024;
    byte[] body = new byte[5000];
    for (int i = 0; i < body.length; i++) {
      body[i] = (byte) (i * 7);
    }
    s.writeBlock(KEY, offset, BlockCheck.HEADER_SIZE + 5000 + 13,
        ByteBuff.wrap(ByteBuffer.wrap(body)), ByteBuffer.wrap(new byte[13]));
    return offset;
  }

  /**
   * A read hands out a copy in the allocator's buffers, here two pooled direct ones (the entry is
   * larger than one), read from the files: the bytes are right, the header is not in them, a
   * later write to the slot does not show through, and releasing the body returns both buffers.
   */
  @Test
  public void readBlock_copiesTheBodyIntoPooledBuffers() throws IOException {
    Configuration conf = new Configuration(false);
    conf.setInt(org.apache.hadoop.hbase.io.ByteBuffAllocator.BUFFER_SIZE_KEY, 4096);
    conf.setInt(org.apache.hadoop.hbase.io.ByteBuffAllocator.MIN_ALLOCATE_SIZE_KEY, 0);
    org.apache.hadoop.hbase.io.ByteBuffAllocator pool =
        org.apache.hadoop.hbase.io.ByteBuffAllocator.create(conf, true);
    PmemStore s = open();
    try {
      long offset = writeBlock(s); // crosses from segment 0 (file a) into segment 1 (file b)
      ByteBuff got = s.readBlock(KEY, offset, BlockCheck.HEADER_SIZE + 5013, pool, false);
      try {
        assertEquals(0, got.position());
        assertEquals(5013, got.remaining());
        assertEquals("buffers taken from the pool", 2, pool.getUsedBufferCount());
        byte[] back = new byte[5013];
        got.get(back);
        for (int i = 0; i < 5000; i++) {
          assertEquals("byte " + i, (byte) (i * 7), back[i]);
        }
        s.write(ByteBuff.wrap(ByteBuffer.wrap(new byte[] {42})),
            offset + BlockCheck.HEADER_SIZE);
        assertEquals("a copy, not a view", 0, got.get(0));
      } finally {
        got.release();
      }
      assertEquals("both buffers back in the pool", 2, pool.getFreeBufferCount());
      // The write of byte 42 above damaged the stored block: the next read refuses it.
      try {
        s.readBlock(KEY, offset, BlockCheck.HEADER_SIZE + 5013, pool, false).release();
        fail("a damaged block was served");
      } catch (HBaseIOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("fails its"));
      }
      assertEquals("a refused read keeps no buffer", 2, pool.getFreeBufferCount());
    } finally {
      s.close();
    }
  }

  /**
   * RPC handlers and prefetch threads get interrupted (a region closing, a cancelled prefetch),
   * and BucketCache's writers at shutdown. A FileChannel read or write by such a thread would
   * close the channel, and closing it drops the lock that keeps a second engine off the files.
   * Reads and writes by a thread interrupted before and during them still succeed, the
   * interrupt stays for the caller, the files stay locked and later reads work: on the caller's
   * thread (channels made uninterruptible) and, where that cannot be done, on the checker
   * threads.
   */
  @Test
  public void blocks_byInterruptedThreads_keepTheLockAndLaterReads() throws Exception {
    // This JVM can make channels uninterruptible (JDK 8, or JDK 9+ with sun.nio.ch exported, as
    // the test JVMs run), so the reads below run on this thread, not on the fallback's.
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(
        tmp.newFile().toPath(), java.nio.file.StandardOpenOption.READ)) {
      assertEquals(null, Uninterruptible.apply(ch));
    }
    interruptedReads();
  }

  @Test
  public void blocks_byInterruptedThreads_withoutUninterruptibleChannels() throws Exception {
    Uninterruptible.unavailableForTests = true;
    try {
      interruptedReads();
    } finally {
      Uninterruptible.unavailableForTests = false;
    }
  }

  private void interruptedReads() throws Exception {
    PmemStore s = open();
    try {
      long offset = writeBlock(s);
      int len = BlockCheck.HEADER_SIZE + 5013;
      Thread.currentThread().interrupt();
      writeBlock(s);
      assertTrue("the interrupt was lost", Thread.interrupted());
      Thread.currentThread().interrupt();
      s.readBlock(KEY, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
          .release();
      assertTrue("the interrupt was lost", Thread.interrupted());
      java.util.concurrent.atomic.AtomicReference<Throwable> failed =
          new java.util.concurrent.atomic.AtomicReference<>();
      java.util.concurrent.atomic.AtomicInteger reads =
          new java.util.concurrent.atomic.AtomicInteger();
      java.util.concurrent.atomic.AtomicBoolean stop =
          new java.util.concurrent.atomic.AtomicBoolean();
      Thread reader = new Thread(() -> {
        while (!stop.get()) {
          try {
            writeBlock(s);
            s.readBlock(KEY, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP,
                false).release();
            reads.incrementAndGet();
          } catch (Throwable t) {
            failed.set(t);
            return;
          }
        }
      });
      reader.start();
      // Interrupts land before, during and between reads.
      for (int i = 0; i < 2000 && failed.get() == null; i++) {
        reader.interrupt();
        int before = reads.get();
        while (reads.get() == before && failed.get() == null && reader.isAlive()) {
          Thread.yield();
        }
      }
      stop.set(true);
      reader.join(30_000);
      if (failed.get() != null) {
        throw new AssertionError("a read or write by an interrupted thread failed",
            failed.get());
      }
      assertTrue("reads: " + reads.get(), reads.get() >= 2000);
      s.readBlock(KEY, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
          .release();
      s.checkRecovered(KEY, offset, len);
      try (java.nio.channels.FileChannel probe = java.nio.channels.FileChannel.open(a.toPath(),
          java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
        probe.tryLock();
        fail("the store no longer holds the lock of " + a);
      } catch (java.nio.channels.OverlappingFileLockException expected) {
        // this JVM still holds it
      }
    } finally {
      s.close();
    }
  }

  @Test
  public void open_formatsNewFilesAndKeepsTheirEpochOnRestart() throws IOException {
    PmemStore first = open();
    assertEquals("cold", first.stats().getStartMode());
    String epoch = first.stats().getEpoch();
    long offset = writeBlock(first);
    first.close();
    PmemStore second = open();
    try {
      assertEquals("warm", second.stats().getStartMode());
      assertEquals(epoch, second.stats().getEpoch());
      assertEquals("clean", second.stats().getPreviousStop());
      second.checkRecovered(KEY, offset, BlockCheck.HEADER_SIZE + 5013);
    } finally {
      second.close();
    }
  }

  @Test
  public void checks_refuseADamagedBlockAndABlockOfAnotherKey() throws IOException {
    PmemStore s = open();
    try {
      long offset = writeBlock(s);
      int len = BlockCheck.HEADER_SIZE + 5013;
      s.checkRead(KEY, offset, len);
      try {
        s.checkRead(new BlockCacheKey("hfile", 65536), offset, len);
        fail();
      } catch (HBaseIOException expected) {
        assertTrue(expected.getMessage().contains("another key"));
      }
      s.write(ByteBuff.wrap(ByteBuffer.wrap(new byte[] {1})), offset + 3000);
      try {
        s.checkRecovered(KEY, offset, len);
        fail();
      } catch (HBaseIOException expected) {
        assertTrue(expected.getMessage().contains("fails its"));
      }
      assertEquals(1, s.stats().getReadsFailed());
      assertEquals(1, s.stats().getRecoveredBlocksFailed());
    } finally {
      s.close();
    }
  }

  @Test
  public void checks_ofABlockWhosePagesAreGone_failThatBlockAndNotTheJvm()
      throws IOException {
    PmemStore s = open();
    try {
      long gone = writeBlock(s); // its last pages are in segment 1, in file b
      int len = BlockCheck.HEADER_SIZE + 5013;
      BlockCacheKey keptKey = new BlockCacheKey("hfile", 65536);
      long kept = 64 * 1024;
      s.writeBlock(keptKey, kept, len, ByteBuff.wrap(ByteBuffer.wrap(new byte[5000])),
          ByteBuffer.wrap(new byte[13]));
      // What a stock engine opening file b (setLength), or a media error, leaves: pages of the
      // mapping with nothing behind them. Touching one raises SIGBUS.
      try (RandomAccessFile raf = new RandomAccessFile(b, "rw")) {
        raf.setLength(Layout.HEADER_RESERVE);
      }
      for (int round = 0; round < 3; round++) {
        try {
          s.checkRecovered(KEY, gone, len);
          fail("a block with a page gone passed the recovery check");
        } catch (HBaseIOException expected) {
          assertTrue(expected.getMessage(), expected.getMessage().contains("cannot be read"));
        }
        try {
          s.checkRead(KEY, gone, len);
          fail("a block with a page gone passed the read check");
        } catch (HBaseIOException expected) {
          assertTrue(expected.getMessage(), expected.getMessage().contains("cannot be read"));
        }
        try {
          s.readBlock(KEY, gone, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false);
          fail("a block with a page gone was read");
        } catch (HBaseIOException expected) {
          assertTrue(expected.getMessage(), expected.getMessage().contains("cannot be read"));
        }
        s.checkRecovered(keptKey, kept, len);
        s.checkRead(keptKey, kept, len);
        s.readBlock(keptKey, kept, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
            .release();
      }
      assertEquals(3, s.stats().getRecoveredBlocksFailed());
      assertEquals("the checked reads and the copying reads", 6, s.stats().getReadsFailed());
      assertEquals("a cut file is no media error: requireStored refuses writes past its end", 0,
          s.stats().getBadRanges());
    } finally {
      s.close();
    }
  }

  /**
   * A positional write that fails with an I/O error (a media error the device reports on
   * write, no space under a punched hole) costs that block only: it is skipped, not refused (a
   * refusal would hand the slot to every later block of its size), its range is recorded as
   * bad so no later block is written there, and its first read is a miss.
   */
  @Test
  public void writeBlock_failingWithAnIoError_isSkippedAndNotWrittenThereAgain()
      throws IOException {
    PmemStore s = open();
    try {
      long offset = 64 * 1024;
      int len = BlockCheck.HEADER_SIZE + 5013;
      long fileAt = s.layout().fileOffset(0) + offset;
      java.util.concurrent.atomic.AtomicInteger tries =
          new java.util.concurrent.atomic.AtomicInteger();
      s.writer((p, ch, src, pos) -> {
        if (p == 0 && pos < fileAt + len && pos + src.remaining() > fileAt) {
          tries.incrementAndGet();
          throw new IOException("Input/output error");
        }
        return ch.write(src, pos);
      });
      s.writeBlock(KEY, offset, len, ByteBuff.wrap(ByteBuffer.wrap(new byte[5000])),
          ByteBuffer.wrap(new byte[13]));
      assertEquals(1, tries.get());
      assertEquals(1, s.stats().getWritesSkipped());
      assertEquals(1, s.stats().getBadRanges());
      try {
        s.readBlock(KEY, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
            .release();
        fail("a block whose write failed was read");
      } catch (HBaseIOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("no block header"));
      }
      s.writeBlock(new BlockCacheKey("other", 0), offset, len,
          ByteBuff.wrap(ByteBuffer.wrap(new byte[5000])), ByteBuffer.wrap(new byte[13]));
      assertEquals("a write over the bad range was tried", 1, tries.get());
      assertEquals(2, s.stats().getWritesSkipped());
      // Elsewhere the store keeps working.
      long ok = writeBlock(s);
      s.readBlock(KEY, ok, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
          .release();
    } finally {
      s.close();
    }
  }

  /**
   * A block handed over in several buffers is written and summed from those buffers (never read
   * back from the mapping or the file), with positional writes and with writes into the
   * mappings alike.
   */
  @Test
  public void writeBlock_fromSeveralBuffers_isReadBackWhole() throws IOException {
    for (String write : new String[] {"copy", "mapped"}) {
      Configuration c = new Configuration(false);
      c.set(PmemCacheConfig.MAPPING_SIZE.name, "2m");
      c.set(PmemCacheConfig.LOCK_WAIT.name, "0");
      c.set(PmemCacheConfig.WRITE.name, write);
      PmemStore s = PmemStore.open(PmemCacheConfig.parse("pmem:" + a + "," + b, 8 * MIB, null,
          c));
      try {
        byte[] body = new byte[9000];
        new java.util.Random(3).nextBytes(body);
        ByteBuffer first = ByteBuffer.allocateDirect(4000);
        first.put(body, 0, 4000).flip();
        ByteBuffer second = ByteBuffer.wrap(body, 4000, 3000).slice();
        ByteBuffer third = ByteBuffer.allocateDirect(2000);
        third.put(body, 7000, 2000).flip();
        ByteBuff multi = new org.apache.hadoop.hbase.nio.MultiByteBuff(first, second, third);
        long offset = 2 * MIB - 3000; // crosses into the next segment (file b)
        int len = BlockCheck.HEADER_SIZE + 9000 + 7;
        s.writeBlock(KEY, offset, len, multi, ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7}));
        assertEquals(write + ": the source moved", 0, multi.position());
        ByteBuff got = s.readBlock(KEY, offset, len,
            org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false);
        try {
          byte[] back = new byte[9007];
          got.get(back);
          assertArrayEquals(write, body, java.util.Arrays.copyOf(back, 9000));
          assertEquals(write, 7, back[9006]);
        } finally {
          got.release();
        }
      } finally {
        s.close();
      }
    }
  }

  /**
   * A sync forces the files written with positional writes since their last force, each once,
   * and only those. A force that failed is not retried for the writes it covered: a second
   * fsync of the same descriptor returns 0 after a failed write-back (the error is reported
   * once), so a retry could not confirm them; later writes are forced again.
   */
  @Test
  public void sync_forcesTheFilesWrittenOnceEach() throws IOException {
    PmemStore s = open();
    try {
      List<Integer> forced = new java.util.concurrent.CopyOnWriteArrayList<>();
      java.util.concurrent.atomic.AtomicBoolean failing =
          new java.util.concurrent.atomic.AtomicBoolean();
      s.fileForcer((path, ch) -> {
        forced.add(path);
        if (failing.get()) {
          throw new IOException("Input/output error");
        }
        ch.force(false);
      });
      s.sync();
      assertEquals("nothing written", java.util.Collections.emptyList(), forced);
      writeSmallBlock(s, 64 * 1024); // file a
      writeSmallBlock(s, 64 * 1024 + 4096); // file a
      failing.set(true);
      try {
        s.sync();
        fail("a failed force was not reported");
      } catch (IOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("Input/output"));
      }
      assertEquals(java.util.Arrays.asList(0), forced);
      failing.set(false);
      s.sync();
      assertEquals("a force retried for writes a failed force covered",
          java.util.Arrays.asList(0), forced);
      writeBlock(s); // files a and b
      s.sync();
      assertEquals(java.util.Arrays.asList(0, 0, 1), forced);
      s.sync();
      assertEquals("forced again with nothing written", java.util.Arrays.asList(0, 0, 1), forced);
    } finally {
      s.close();
    }
  }

  /**
   * A force that fails covers every write that ended before it, other threads' writes too; the
   * kernel reports the failed write-back once, to that force, and the next fsync returns 0
   * with those pages lost. So a thread whose write such a force covered must not have it
   * confirmed by its own later sync (BucketCache would then put its batch into the backing
   * map and the next checkpoint), even when that sync's force succeeds; its later writes are
   * confirmed again. Before the ledger, the second thread's sync returned normally.
   */
  @Test
  public void sync_ofAWriteAFailedForceCovered_failsEvenWhenTheNextForceSucceeds()
      throws Exception {
    PmemStore s = open();
    java.util.concurrent.ExecutorService other =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      java.util.concurrent.atomic.AtomicBoolean failing =
          new java.util.concurrent.atomic.AtomicBoolean();
      s.fileForcer((path, ch) -> {
        if (failing.get()) {
          throw new IOException("Input/output error");
        }
        ch.force(false); // after a real failed write-back: returns 0, the pages are gone
      });
      other.submit(() -> writeSmallBlock(s, 64 * 1024)).get(); // not synced yet
      writeSmallBlock(s, 128 * 1024);
      failing.set(true);
      try {
        s.sync();
        fail("a failed force was not reported");
      } catch (IOException expected) {
        // this thread's batch is dropped
      }
      failing.set(false);
      try {
        other.submit(() -> {
          s.sync();
          return null;
        }).get();
        fail("the other thread's write, covered by the failed force, was confirmed");
      } catch (java.util.concurrent.ExecutionException expected) {
        assertTrue(expected.getCause().toString(),
            expected.getCause().getMessage().contains("earlier force"));
      }
      other.submit(() -> {
        writeSmallBlock(s, 64 * 1024 + 8192);
        s.sync();
        return null;
      }).get();
      writeSmallBlock(s, 128 * 1024 + 8192);
      s.sync();
    } finally {
      other.shutdownNow();
      s.close();
    }
  }

  /** A 100-byte block of {@code KEY} at {@code offset}. */
  private static Void writeSmallBlock(PmemStore s, long offset) throws IOException {
    s.writeBlock(KEY, offset, BlockCheck.HEADER_SIZE + 100,
        ByteBuff.wrap(ByteBuffer.wrap(new byte[100])), ByteBuffer.allocate(0));
    return null;
  }

  /**
   * A positional write cut short (its first bytes written, then EIO) over an intact entry of
   * another key: the new header over old bytes fails its checksum, so neither block is served;
   * a write that finds no space (ENOSPC, a hole on a full filesystem) is skipped without
   * marking its range bad, so the slot works again once there is space.
   */
  @Test
  public void writeBlock_cutShortOverAnIntactEntry_servesNeitherBlock() throws IOException {
    PmemStore s = open();
    try {
      long offset = 64 * 1024;
      int len = BlockCheck.HEADER_SIZE + 5013;
      byte[] old = new byte[5000];
      java.util.Arrays.fill(old, (byte) 7);
      BlockCacheKey oldKey = new BlockCacheKey("old", 0);
      s.writeBlock(oldKey, offset, len, ByteBuff.wrap(ByteBuffer.wrap(old)),
          ByteBuffer.wrap(new byte[13]));
      java.util.concurrent.atomic.AtomicReference<String> error =
          new java.util.concurrent.atomic.AtomicReference<>("Input/output error");
      s.writer((p, ch, src, pos) -> {
        if (error.get() == null) {
          return ch.write(src, pos);
        }
        ByteBuffer part = src.duplicate();
        part.limit(part.position() + 64);
        ch.write(part, pos); // header and 32 body bytes land
        throw new IOException(error.get());
      });
      s.writeBlock(KEY, offset, len, ByteBuff.wrap(ByteBuffer.wrap(new byte[5000])),
          ByteBuffer.wrap(new byte[13]));
      assertEquals(1, s.stats().getWritesSkipped());
      for (BlockCacheKey k : new BlockCacheKey[] {KEY, oldKey}) {
        try {
          s.readBlock(k, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
              .release();
          fail("a block was served over a write cut short: " + k);
        } catch (HBaseIOException expected) {
          // KEY: fails its checksum; oldKey: another key's header
        }
      }
      long spaceless = 256 * 1024;
      error.set("No space left on device");
      writeSmallBlock(s, spaceless);
      assertEquals(2, s.stats().getWritesSkipped());
      assertEquals("only the EIO range is bad", 1, s.stats().getBadRanges());
      error.set(null);
      writeSmallBlock(s, spaceless);
      s.readBlock(KEY, spaceless, BlockCheck.HEADER_SIZE + 100,
          org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false).release();
    } finally {
      s.close();
    }
  }

  /** Positional reads of the files that fail with EIO where they overlap [from, to) of path. */
  private static Mappings.Reader failingIn(int path, long fileFrom, long fileTo) {
    return (p, ch, dst, pos) -> {
      if (p == path && pos < fileTo && pos + dst.remaining() > fileFrom) {
        throw new IOException("Input/output error");
      }
      return ch.read(dst, pos);
    };
  }

  private static byte[] bytesAt(PmemStore s, long offset, int len) throws IOException {
    byte[] out = new byte[len];
    int at = 0;
    for (ByteBuffer b : s.slices(offset, len)) {
      int n = b.remaining();
      b.get(out, at, n);
      at += n;
    }
    return out;
  }

  /**
   * A badblock (EIO from the read) costs its block, and no write stores into its pages after:
   * BucketCache evicts the block and reuses its slot, and a store into a poisoned page through
   * the mapping raises SIGBUS (a page-cache filesystem must read the page in first; DAX stores
   * do not clear poison), which crashes the JVM (JDK 8) or kills the writer thread (JDK 9+).
   * A block written there is skipped (not stored, its first read a miss, whether checked or
   * a view of the mapping), a raw write is refused, the mapping is not touched, and the other
   * slots keep working.
   */
  @Test
  public void readBlock_hittingAMediaError_skipsLaterBlocksOverThatRange() throws IOException {
    PmemStore s = open();
    try {
      long offset = writeBlock(s); // crosses from file a into file b
      int len = BlockCheck.HEADER_SIZE + 5013;
      BlockCacheKey keptKey = new BlockCacheKey("hfile", 65536);
      long kept = 64 * 1024;
      s.writeBlock(keptKey, kept, len, ByteBuff.wrap(ByteBuffer.wrap(new byte[5000])),
          ByteBuffer.wrap(new byte[13]));
      // One bad page of file a, inside the block's first part (the segment's file offset is
      // the logical offset here: segment 0 starts at the file's header reserve).
      long fileAt = s.layout().fileOffset(0) + (offset + 100);
      s.reader(failingIn(0, fileAt, fileAt + 4096));
      try {
        s.readBlock(KEY, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false);
        fail("a block on a bad page was read");
      } catch (HBaseIOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("cannot be read"));
      }
      byte[] before = bytesAt(s, offset, len);
      // BucketCache reuses the slot for another block: not stored (nor refused, see
      // PmemMediaErrorTest), and its read is a miss, never the old block's bytes.
      BlockCacheKey other = new BlockCacheKey("other", 0);
      s.writeBlock(other, offset, len, ByteBuff.wrap(ByteBuffer.wrap(new byte[5000])),
          ByteBuffer.wrap(new byte[13]));
      // A smaller block placed over only a part of the bad range.
      s.writeBlock(new BlockCacheKey("other", 1), offset + 64, BlockCheck.HEADER_SIZE + 100,
          ByteBuff.wrap(ByteBuffer.wrap(new byte[100])), ByteBuffer.allocate(0));
      // A raw write has no header to tell a skipped write from a stored one: refused.
      try {
        s.write(ByteBuff.wrap(ByteBuffer.wrap(new byte[] {1, 2, 3})), offset + 200);
        fail("a raw write into a bad range was attempted");
      } catch (CacheFileCutException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("media error"));
        assertTrue(expected.getMessage(), expected.getMessage().contains(a.getPath()));
      }
      assertArrayEquals("the mapping over the bad range was written", before,
          bytesAt(s, offset, len));
      s.reader((p, ch, dst, pos) -> ch.read(dst, pos)); // the page readable again (stale bytes)
      try {
        s.readBlock(other, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP,
            false);
        fail("a block that was not stored was read");
      } catch (HBaseIOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("another key"));
      }
      // Nor do the unchecked views of hbase.bucketcache.pmem.read=mapped hand its bytes out.
      try {
        s.blockBody(offset, len);
        fail("a view of a block that was not stored was handed out");
      } catch (HBaseIOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("not stored"));
      }
      assertEquals(1, s.stats().getBadRanges());
      assertEquals(3, s.stats().getWritesSkipped());
      // The other slots: read, rewritten and read again.
      s.readBlock(keptKey, kept, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
          .release();
      long elsewhere = 3 * MIB;
      s.writeBlock(KEY, elsewhere, len, ByteBuff.wrap(ByteBuffer.wrap(new byte[5000])),
          ByteBuffer.wrap(new byte[13]));
      s.readBlock(KEY, elsewhere, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
          .release();
      // A block ending right before the bad range's block is not refused.
      s.writeBlock(keptKey, offset - len, len, ByteBuff.wrap(ByteBuffer.wrap(new byte[5000])),
          ByteBuffer.wrap(new byte[13]));
      assertEquals(1, s.stats().getBadRanges());
    } finally {
      s.close();
    }
  }

  /**
   * A block failing its check (torn, a punched hole, stale) is no media error: its slot is
   * rewritten as any other (a write to a hole allocates a new page), and nothing is recorded.
   */
  @Test
  public void readBlock_failingItsCheck_leavesItsSlotWritable() throws IOException {
    PmemStore s = open();
    try {
      long offset = writeBlock(s);
      int len = BlockCheck.HEADER_SIZE + 5013;
      s.write(ByteBuff.wrap(ByteBuffer.wrap(new byte[] {1})), offset + 3000);
      try {
        s.readBlock(KEY, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false);
        fail("a damaged block was read");
      } catch (HBaseIOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("fails its"));
      }
      assertEquals(0, s.stats().getBadRanges());
      writeBlock(s);
      s.readBlock(KEY, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP, false)
          .release();
    } finally {
      s.close();
    }
  }

  /** Every failed read is counted, after the recovery pass as during it. */
  @Test
  public void readBlock_failures_areCountedOutsideTheRecoveryPass() throws IOException {
    PmemStore s = open();
    try {
      long offset = writeBlock(s);
      int len = BlockCheck.HEADER_SIZE + 5013;
      s.write(ByteBuff.wrap(ByteBuffer.wrap(new byte[] {1})), offset + 3000);
      for (int i = 0; i < 3; i++) {
        try {
          s.readBlock(KEY, offset, len, org.apache.hadoop.hbase.io.ByteBuffAllocator.HEAP,
              false);
          fail("a damaged block was read");
        } catch (HBaseIOException expected) {
          // counted
        }
      }
      assertEquals(3, s.stats().getReadsFailed());
      assertEquals("reads outside the pass are not checks of recovered blocks", 0,
          s.stats().getReadsChecked());
    } finally {
      s.close();
    }
  }

  @Test
  public void checks_byAnInterruptedThread_leaveTheFilesOpenAndLocked() throws IOException {
    PmemStore s = open();
    try {
      long offset = writeBlock(s);
      int len = BlockCheck.HEADER_SIZE + 5013;
      // A cancelled prefetch or a closing region interrupts a reader. Had the check read the
      // file on this thread, the interrupt would close the channel and free the lock.
      // The check may finish on its checker thread before this thread starts waiting (then it
      // returns its result) or after (then this thread stops waiting): either way the interrupt
      // stays set for the caller and the files stay open.
      Thread.currentThread().interrupt();
      try {
        s.checkRecovered(KEY, offset, len);
      } catch (java.io.InterruptedIOException stoppedWaiting) {
        // allowed
      }
      assertTrue("the interrupt was lost", Thread.interrupted());
      s.checkRecovered(KEY, offset, len);
      s.checkRead(KEY, offset, len);
      try (java.nio.channels.FileChannel probe = java.nio.channels.FileChannel.open(a.toPath(),
          java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
        probe.tryLock();
        fail("the store no longer holds the lock of " + a);
      } catch (java.nio.channels.OverlappingFileLockException expected) {
        // this JVM still holds it
      }
    } finally {
      s.close();
    }
  }

  private String coldReasonAfter(Runnable damage) throws IOException {
    PmemStore first = open();
    first.close();
    damage.run();
    PmemStore second = open();
    try {
      assertEquals("cold", second.stats().getStartMode());
      return second.stats().getColdReason();
    } finally {
      second.close();
    }
  }

  @Test
  public void open_startsColdOnZeroedSwappedAndForeignFiles() throws IOException {
    assertTrue(coldReasonAfter(() -> zero(b)).contains("zeroed"));
    assertTrue(coldReasonAfter(() -> {
      File t = new File(tmp.getRoot(), "t");
      assertTrue(a.renameTo(t) && b.renameTo(a) && t.renameTo(b));
    }).contains("swapped"));
    File c = new File(tmp.getRoot(), "c");
    File d = new File(tmp.getRoot(), "d");
    try {
      PmemStore.open(config("pmem:" + c + "," + d, 8 * MIB, null)).close();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    assertTrue(coldReasonAfter(() -> copy(d, b)).contains("another cache"));
  }

  @Test
  public void open_startsColdWhenTheJdkLacksTheCachesChecksum() throws IOException {
    PmemStore first = open();
    long epoch = Long.parseUnsignedLong(first.stats().getEpoch(), 16);
    Layout layout = first.layout();
    first.close();
    // As a cache formatted with CRC32C looks to JDK 8: a checksum this JDK cannot compute.
    for (int i = 0; i < 2; i++) {
      CacheFileHeader h = new CacheFileHeader(i, 2, 99, epoch, layout.capacity(),
          layout.mappingSize(), Layout.HEADER_RESERVE, 0);
      try (RandomAccessFile raf = new RandomAccessFile(i == 0 ? a : b, "rw")) {
        raf.write(h.encode().array());
      }
    }
    PmemStore second = open();
    try {
      assertEquals("cold", second.stats().getStartMode());
      assertTrue(second.stats().getColdReason(),
          second.stats().getColdReason().contains("which this JDK lacks"));
    } finally {
      second.close();
    }
  }

  @Test
  public void open_movesAMapOfOtherFilesAsideUnreadAndStaysWarm() throws IOException {
    File map = new File(tmp.getRoot(), "map");
    PmemStore.open(config("pmem:" + a + "," + b, 8 * MIB, map.getPath())).close();
    byte[] foreign = {'V', '2', 'U', 'F', 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 4,
        0x32, 2, 9, 9};
    Files.write(map.toPath(), foreign);
    PmemStore s = PmemStore.open(config("pmem:" + a + "," + b, 8 * MIB, map.getPath()));
    try {
      assertEquals("warm", s.stats().getStartMode());
      assertFalse(map.exists());
      assertArrayEquals(foreign, Files.readAllBytes(new File(map + ".discarded").toPath()));
    } finally {
      s.close();
    }
  }

  @Test
  public void open_failsWhileAnotherStoreOfThisJvmHoldsTheFiles() throws IOException {
    PmemStore first = open();
    try {
      open().close();
      fail();
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("this process"));
      assertTrue(e.getMessage(), e.getMessage().contains(a.getPath()));
    } finally {
      first.close();
    }
    open().close();
  }

  @Test
  public void close_releasesTheFilesAndLaterWritesFail() throws Exception {
    PmemStore s = open();
    ObjectName bean = new ObjectName("dev.forkset.hbase.pmem:type=PmemCache,path="
        + ObjectName.quote(a.getPath()));
    assertTrue(ManagementFactory.getPlatformMBeanServer().isRegistered(bean));
    assertTrue(s.holdsLocks());
    s.close();
    assertFalse(s.holdsLocks());
    assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(bean));
    try {
      writeBlock(s);
      fail();
    } catch (IOException expected) {
      assertTrue(expected.getMessage().contains("shut down"));
    }
  }

  private static void zero(File f) {
    try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
      long n = raf.length();
      raf.setLength(0);
      raf.setLength(n);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static void copy(File from, File to) {
    try {
      Files.copy(from.toPath(), to.toPath(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  public void close_closesTheFilesAtOnce() throws Exception {
    PmemStore s = open();
    writeBlock(s);
    for (File f : new File[] {a, b}) {
      assertTrue(f + " not mapped", ProcSelf.mappings(f) > 0);
      assertTrue(f + " not open", ProcSelf.descriptors(f) > 0);
    }
    s.close();
    // s is still referenced: no garbage collection can have closed anything. The mappings are
    // left to the garbage collector (a reader may still hold a block; MappingsTest).
    for (File f : new File[] {a, b}) {
      assertEquals("descriptors of " + f + " left after close", 0, ProcSelf.descriptors(f));
    }
    assertFalse(s.holdsLocks());
    PmemStore again = open();
    try {
      assertEquals("warm", again.stats().getStartMode());
    } finally {
      again.close();
    }
  }
}
