package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.hbase.nio.ByteBuff;
import org.junit.After;
import org.junit.Assume;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class MappingsTest {
  private static final long MIB = 1L << 20;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private final List<FileChannel> open = new ArrayList<>();

  @After
  public void closeChannels() throws IOException {
    for (FileChannel ch : open) {
      ch.close();
    }
  }

  private Mappings map(Layout layout, List<File> paths) throws IOException {
    FileChannel[] channels = new FileChannel[paths.size()];
    for (int i = 0; i < channels.length; i++) {
      channels[i] = FileChannel.open(paths.get(i).toPath(), StandardOpenOption.CREATE,
          StandardOpenOption.READ, StandardOpenOption.WRITE);
      channels[i].truncate(0);
      try (RandomAccessFile raf = new RandomAccessFile(paths.get(i), "rw")) {
        raf.setLength(layout.fileLength(i));
      }
      open.add(channels[i]);
    }
    return new Mappings(layout, channels, paths, PmemCacheConfig.MapSync.AUTO, false, true);
  }

  private List<File> twoFiles() throws IOException {
    return Arrays.asList(new File(tmp.newFolder("p0"), "cache"),
        new File(tmp.newFolder("p1"), "cache"));
  }

  @Test
  public void write_landsAtTheLayoutsFileOffsets() throws Exception {
    List<File> files = twoFiles();
    Layout layout = new Layout(2, 10 * MIB, 2 * MIB);
    Mappings m = map(layout, files);
    for (int s = 0; s < layout.segmentCount(); s++) {
      ByteBuffer b = ByteBuffer.allocate(8);
      b.putLong(0, 1000 + s);
      m.write(s * 2 * MIB, b);
    }
    m.sync();
    for (int s = 0; s < layout.segmentCount(); s++) {
      try (RandomAccessFile raf = new RandomAccessFile(files.get(layout.fileOf(s)), "r")) {
        raf.seek(layout.fileOffset(s));
        assertEquals("segment " + s, 1000 + s, raf.readLong());
      }
    }
  }

  @Test
  public void slices_ofABlockAcrossAMappingBoundaryShareTheMemory() throws Exception {
    Mappings m = map(new Layout(2, 8 * MIB, 2 * MIB), twoFiles());
    byte[] data = new byte[10_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31 + 7);
    }
    long offset = 2 * MIB - 3000;
    m.write(offset, ByteBuff.wrap(ByteBuffer.wrap(data)));
    ByteBuffer[] slices = m.slices(offset, data.length);
    assertEquals(2, slices.length);
    assertEquals(3000, slices[0].remaining());
    byte[] back = new byte[data.length];
    slices[0].get(back, 0, 3000);
    slices[1].get(back, 3000, data.length - 3000);
    assertArrayEquals(data, back);
    m.write(offset, ByteBuffer.wrap(new byte[] {42}));
    assertEquals("zero copy: a later write shows through", 42, slices[0].get(0));
  }

  /**
   * A failed force is an IOException, and its range stays dirty; it is forced with the next
   * write of its segment, not for itself: a retried msync returns 0 after a failed write-back
   * (the error is reported once), so forcing it again could not confirm the writes it covered
   * (ForceLedger), whose batch BucketCache drops.
   */
  @Test
  public void sync_keepsTheDirtyRangeWhenAForceFailsAndReportsAnIOException() throws Exception {
    Mappings m = map(new Layout(1, 8 * MIB, 2 * MIB), twoFiles().subList(0, 1));
    List<int[]> forced = new ArrayList<>();
    boolean[] fail = {true};
    m.forcer((seg, index, length) -> {
      if (fail[0]) {
        // What MappedByteBuffer.force(int, int) throws on JDK 13+ when msync fails.
        throw new UncheckedIOException(new IOException("EIO"));
      }
      forced.add(new int[] {index, length});
    });
    m.write(3 * MIB + 100, ByteBuffer.wrap(new byte[5000]));
    try {
      m.sync();
      fail("a failed force was reported as success");
    } catch (IOException expected) {
      assertTrue(expected.getMessage(), expected.getCause() instanceof UncheckedIOException);
    }
    fail[0] = false;
    m.sync();
    assertEquals("the failed force's writes forced again for themselves", 0, forced.size());
    m.write(3 * MIB, ByteBuffer.wrap(new byte[1])); // the same segment again
    m.sync();
    assertEquals("the kept range is forced with the next write", 1, forced.size());
    assertEquals(MIB, forced.get(0)[0]);
    assertEquals(8192, forced.get(0)[1]);
    m.sync();
    assertEquals("nothing is dirty after a successful force", 1, forced.size());
  }

  @Test
  public void sync_forcesWhatWasWrittenNotTheDistanceBetweenWrites() throws Exception {
    // One 1 GiB segment (sparse: nothing is touched but the two blocks). With MAP_SYNC a force
    // writes back every cache line of its range, so forcing [low, high] of the segment would
    // cost 512 MiB of line flushes here for 128 KiB written.
    Mappings m = map(new Layout(1, 1024 * MIB, 1024 * MIB), twoFiles().subList(0, 1));
    List<int[]> forced = new ArrayList<>();
    m.forcer((seg, index, length) -> forced.add(new int[] {index, length}));
    m.write(512 * MIB, ByteBuffer.wrap(new byte[64 * 1024]));
    m.write(100, ByteBuffer.wrap(new byte[64 * 1024]));
    m.sync();
    long bytes = 0;
    for (int[] f : forced) {
      bytes += f[1];
    }
    assertTrue("forced " + bytes + " bytes for two 64 KiB blocks", bytes <= 256 * 1024);
    assertEquals("each written page run is forced, in address order", 2, forced.size());
    assertEquals(0, forced.get(0)[0]);
    assertEquals(64 * 1024 + 4096, forced.get(0)[1]);
    assertEquals(512 * MIB, forced.get(1)[0]);
    assertEquals(64 * 1024, forced.get(1)[1]);
  }

  @Test
  public void sync_withAForcerOfWholeMappings_forcesEachSegmentOnce() throws Exception {
    // JDK 8-12: MappedByteBuffer.force() writes back the whole mapping, whatever was written.
    Mappings m = map(new Layout(1, 8 * MIB, 8 * MIB), twoFiles().subList(0, 1));
    List<int[]> forced = new ArrayList<>();
    m.forcer(new Mappings.Forcer() {
      @Override
      public void force(java.nio.MappedByteBuffer seg, int index, int length) {
        forced.add(new int[] {index, length});
      }

      @Override
      public boolean byRange() {
        return false;
      }
    });
    m.write(0, ByteBuffer.wrap(new byte[10]));
    m.write(MIB, ByteBuffer.wrap(new byte[10]));
    m.write(3 * MIB, ByteBuffer.wrap(new byte[10]));
    m.sync();
    assertEquals(1, forced.size());
    assertArrayEquals(new int[] {0, (int) (3 * MIB) + 4096}, forced.get(0));
  }

  @Test
  public void sync_forcesAdjacentAndOverlappingWritesAsOneRun() throws Exception {
    Mappings m = map(new Layout(1, 8 * MIB, 8 * MIB), twoFiles().subList(0, 1));
    List<int[]> forced = new ArrayList<>();
    m.forcer((seg, index, length) -> forced.add(new int[] {index, length}));
    m.write(8192, ByteBuffer.wrap(new byte[4096]));
    m.write(0, ByteBuffer.wrap(new byte[5000]));
    m.write(4096, ByteBuffer.wrap(new byte[100]));
    m.write(MIB, ByteBuffer.wrap(new byte[1]));
    m.sync();
    assertEquals(2, forced.size());
    assertArrayEquals(new int[] {0, 3 * 4096}, forced.get(0));
    assertArrayEquals(new int[] {(int) MIB, 4096}, forced.get(1));
  }

  @Test
  public void sync_whenTheSecondRunFails_keepsItAndForcesItNext() throws Exception {
    Mappings m = map(new Layout(1, 8 * MIB, 8 * MIB), twoFiles().subList(0, 1));
    List<int[]> forced = new ArrayList<>();
    boolean[] failAtMib = {true};
    m.forcer((seg, index, length) -> {
      if (failAtMib[0] && index == MIB) {
        throw new IOException("EIO");
      }
      forced.add(new int[] {index, length});
    });
    m.write(0, ByteBuffer.wrap(new byte[10]));
    m.write(MIB, ByteBuffer.wrap(new byte[10]));
    m.write(3 * MIB, ByteBuffer.wrap(new byte[10]));
    try {
      m.sync();
      fail("a failed force was reported as success");
    } catch (IOException expected) {
      assertEquals("EIO", expected.getMessage());
    }
    failAtMib[0] = false;
    forced.clear();
    m.sync();
    assertEquals("forced again with nothing new written", 0, forced.size());
    m.write(5 * MIB, ByteBuffer.wrap(new byte[10]));
    m.sync();
    assertEquals("the failed run and the runs after it are forced with the next write", 3,
        forced.size());
    assertArrayEquals(new int[] {(int) MIB, 4096}, forced.get(0));
    assertArrayEquals(new int[] {(int) (3 * MIB), 4096}, forced.get(1));
    assertArrayEquals(new int[] {(int) (5 * MIB), 4096}, forced.get(2));
    forced.clear();
    m.sync();
    assertEquals(0, forced.size());
  }

  @Test
  public void sync_waitsForAConcurrentForceOfTheSameSegment() throws Exception {
    Mappings m = map(new Layout(1, 8 * MIB, 8 * MIB), twoFiles().subList(0, 1));
    java.util.concurrent.CountDownLatch inForce = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    m.forcer((seg, index, length) -> {
      inForce.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        throw new IOException(e);
      }
    });
    m.write(0, ByteBuffer.wrap(new byte[10]));
    Thread first = new Thread(() -> {
      try {
        m.sync();
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    first.start();
    inForce.await();
    boolean[] secondDone = {false};
    Thread second = new Thread(() -> {
      try {
        m.sync();
        secondDone[0] = true;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    second.start();
    second.join(300);
    assertFalse("a sync returned while the range it must cover was still being forced",
        secondDone[0]);
    release.countDown();
    first.join(10_000);
    second.join(10_000);
    assertTrue(secondDone[0]);
  }

  @Test
  public void release_makesLaterAccessAnIOException() throws Exception {
    Mappings m = map(new Layout(1, 8 * MIB, 2 * MIB), twoFiles().subList(0, 1));
    m.release();
    try {
      m.write(0, ByteBuffer.wrap(new byte[1]));
      fail();
    } catch (IOException expected) {
      assertTrue(expected.getMessage().contains("shut down"));
    }
    try {
      m.slices(0, 1);
      fail();
    } catch (IOException expected) {
      assertTrue(expected.getMessage().contains("shut down"));
    }
  }

  @Test
  public void requiredMapSync_failsOnAPageCacheFilesystemNamingTheKeyAndPath() throws Exception {
    File f = new File(tmp.newFolder("d"), "c");
    Layout layout = new Layout(1, 8 * MIB, 2 * MIB);
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.CREATE,
        StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ch.truncate(layout.fileLength(0));
      new Mappings(layout, new FileChannel[] {ch}, Arrays.asList(f),
          PmemCacheConfig.MapSync.REQUIRE, false, true);
      fail("MAP_SYNC granted on " + f + ": is the test directory on a DAX mount?");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(PmemCacheConfig.MAP_SYNC.name));
      assertTrue(e.getMessage(), e.getMessage().contains(f.getPath()));
    }
  }

  @Test
  public void release_leavesASliceAReaderHoldsReadable() throws Exception {
    Mappings m = map(new Layout(2, 8 * MIB, 2 * MIB), twoFiles());
    byte[] data = new byte[4096];
    new java.util.Random(7).nextBytes(data);
    long offset = 5 * MIB; // on the second path
    m.write(offset, ByteBuffer.wrap(data));
    ByteBuffer[] held = m.slices(offset, data.length);
    m.release();
    // A scanner keeps its current block across RPCs, and a RegionServer shuts its block cache
    // down before it closes its regions: the block must still read (an unmap would crash here).
    ByteBuffer out = ByteBuffer.allocate(data.length);
    for (ByteBuffer b : held) {
      out.put(b.duplicate());
    }
    assertArrayEquals(data, out.array());
    try {
      m.slices(offset, data.length);
      fail("slices after release");
    } catch (IOException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("shut down"));
    }
  }

  @Test
  public void unmap_unmapsEverySegmentAtOnce() throws Exception {
    List<File> files = twoFiles();
    Mappings m = map(new Layout(2, 8 * MIB, 2 * MIB), files);
    m.write(0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
    assertTrue(ProcSelf.mappings(files.get(0)) > 0);
    assertTrue(ProcSelf.mappings(files.get(1)) > 0);
    m.unmap();
    // m is still referenced: only an explicit unmap can have removed the mappings.
    assertEquals("mappings of " + files.get(0) + " left after unmap", 0,
        ProcSelf.mappings(files.get(0)));
    assertEquals(0, ProcSelf.mappings(files.get(1)));
    assertTrue(m.count() > 0);
  }

  @Test
  public void release_twice_isHarmless() throws Exception {
    Mappings m = map(new Layout(1, 8 * MIB, 2 * MIB), twoFiles().subList(0, 1));
    m.release();
    m.release();
    try {
      m.sync();
      fail();
    } catch (IOException expected) {
      assertTrue(expected.getMessage().contains("shut down"));
    }
  }

  @Test
  public void mapSyncRefusal_onAPageCacheFilesystem_namesTheReasonAndLeavesNoFile()
      throws Exception {
    File dir = tmp.newFolder("probe");
    File f = new File(dir, "cache");
    assertTrue(Mappings.mapSyncRefusal(f) != null);
    assertEquals("the probe left a file in " + dir, 0, dir.list().length);
    byte[] content = new byte[3 * 4096];
    content[5] = 42;
    Files.write(f.toPath(), content);
    long modified = f.lastModified();
    assertTrue(Mappings.mapSyncRefusal(f) != null);
    assertArrayEquals(content, Files.readAllBytes(f.toPath()));
    assertEquals(modified, f.lastModified());
    assertEquals(1, dir.list().length);
    assertEquals(0, ProcSelf.mappings(f));
    assertEquals(0, ProcSelf.descriptors(f));
  }

  @Test
  public void mapSyncRefusal_afterAProbeKilledMidway_removesItsLeftoverFile() throws Exception {
    // What a RegionServer killed during its probe left (File.createTempFile's name pattern).
    File dir = tmp.newFolder("killed");
    File leftover = new File(dir, ".pmem-mapsync-probe4711.tmp");
    Files.write(leftover.toPath(), new byte[4096]);
    File cache = new File(dir, "cache");
    Mappings.mapSyncRefusal(cache);
    assertFalse("a killed probe's file stays beside the cache", leftover.exists());
    assertEquals(0, dir.list().length);
  }

  @Test
  public void mapSyncRefusal_unlinksTheProbeBeforeItMaps() throws Exception {
    // A kill -9 while the probe maps must not leave a file: the probe's name is gone from the
    // directory before it maps, so at most the create-to-open window can leave one.
    File dir = tmp.newFolder("unlinked");
    List<String> seen = new ArrayList<>();
    boolean[] mapped = new boolean[1];
    Mappings.mapSyncRefusal(new File(dir, "cache"), () -> {
      mapped[0] = true;
      seen.addAll(Arrays.asList(dir.list()));
    });
    Assume.assumeTrue("this JDK has no MAP_SYNC mode: nothing is probed", mapped[0]);
    assertEquals("names in the directory while the probe maps", new ArrayList<String>(), seen);
  }
}
