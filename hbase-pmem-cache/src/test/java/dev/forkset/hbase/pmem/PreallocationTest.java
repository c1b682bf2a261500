package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Preallocation when fallocate fails: a filesystem without fallocate support is handled like a
 * missing fallocate command; any other failure stops start naming the path and the fix.
 */
public class PreallocationTest {
  private static final long LENGTH = 1L << 20;

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private File file;

  @Before
  public void setUp() throws IOException {
    file = new File(tmp.newFolder("cache"), "cache");
  }

  @After
  public void restoreFallocate() {
    Preallocation.fallocateCommand = "fallocate";
  }

  /** Replaces fallocate with a script that fails with util-linux's message for the error. */
  private void fallocateFailsWith(String error) throws IOException {
    File script = tmp.newFile("fallocate");
    Files.write(script.toPath(), ("#!/bin/sh\necho 'fallocate: fallocate failed: " + error
        + "' >&2\nexit 1\n").getBytes(StandardCharsets.UTF_8));
    assertTrue(script.setExecutable(true));
    Preallocation.fallocateCommand = script.getPath();
  }

  @Test
  public void unsupportedFallocate_coldFileIsZeroFilled() throws IOException {
    fallocateFailsWith("Operation not supported");
    try (RandomAccessFile raf = new RandomAccessFile(file, "rw");
        FileChannel ch = raf.getChannel()) {
      assertTrue(Preallocation.preallocate(file, ch, LENGTH, true));
      assertEquals(LENGTH, ch.size());
    }
    assertTrue("allocated " + Preallocation.allocatedBytes(file),
        Preallocation.allocatedBytes(file) >= LENGTH);
  }

  @Test
  public void unsupportedFallocate_warmFileWithHolesMustStartCold() throws IOException {
    fallocateFailsWith("Operation not supported");
    try (RandomAccessFile raf = new RandomAccessFile(file, "rw");
        FileChannel ch = raf.getChannel()) {
      raf.setLength(LENGTH); // sparse: all holes
      assertFalse(Preallocation.preallocate(file, ch, LENGTH, false));
    }
  }

  @Test
  public void unsupportedFallocate_warmFullyAllocatedFileNeedsNothing() throws IOException {
    fallocateFailsWith("Operation not supported");
    try (RandomAccessFile raf = new RandomAccessFile(file, "rw");
        FileChannel ch = raf.getChannel()) {
      raf.write(new byte[(int) LENGTH]);
      ch.force(true);
      assertTrue(Preallocation.preallocate(file, ch, LENGTH, false));
    }
  }

  @Test
  public void otherFallocateFailure_failsNamingPathAndFix() throws IOException {
    fallocateFailsWith("No space left on device");
    try (RandomAccessFile raf = new RandomAccessFile(file, "rw");
        FileChannel ch = raf.getChannel()) {
      Preallocation.preallocate(file, ch, LENGTH, true);
      fail("preallocate succeeded although fallocate ran out of space");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(file.getPath()));
      assertTrue(e.getMessage(), e.getMessage().contains("No space left on device"));
      assertTrue(e.getMessage(), e.getMessage().contains("Lower hbase.bucketcache.size"));
    }
  }
}
