package dev.forkset.hbase.pmem;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.hbase.shaded.protobuf.generated.BucketCacheProtos;
import org.apache.hbase.thirdparty.com.google.protobuf.ByteString;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class PersistedMapTest {
  private static final byte[] CHECKSUM = "digest-of-the-files".getBytes(StandardCharsets.UTF_8);

  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  /** A chunk of {@code entries} entries. */
  private static BucketCacheProtos.BackingMap.Builder chunk(int entries) {
    BucketCacheProtos.BackingMap.Builder backing = BucketCacheProtos.BackingMap.newBuilder();
    for (int i = 0; i < entries; i++) {
      backing.addEntry(BucketCacheProtos.BackingMapEntry.newBuilder()
          .setKey(BucketCacheProtos.BlockCacheKey.newBuilder().setHfilename("hfile-" + i)
              .setOffset(i * 65536L).setPrimaryReplicaBlock(true)
              .setBlockType(BucketCacheProtos.BlockType.data))
          .setValue(BucketCacheProtos.BucketEntry.newBuilder().setOffset(i * 65536L)
              .setLength(65000).setDiskSizeWithHeader(65000).setCachedTime(i)
              .setDeserialiserIndex(0).setAccessCounter(i)
              .setPriority(BucketCacheProtos.BlockPriority.multi)));
    }
    return backing;
  }

  private static BucketCacheProtos.BucketCacheEntry.Builder details(
      BucketCacheProtos.BackingMap.Builder backing, boolean withChecksum) {
    BucketCacheProtos.BucketCacheEntry.Builder first = BucketCacheProtos.BucketCacheEntry
        .newBuilder().setCacheCapacity(1L << 30).setIoClass("x").setMapClass("y")
        .setBackingMap(backing);
    if (withChecksum) {
      first.setChecksum(ByteString.copyFrom(CHECKSUM));
    }
    return first;
  }

  /**
   * A map in the layout of HBase 2.6.4 (chunk size, chunk count) with {@code entries} entries in
   * its first chunk and one chunk of 10 entries for each further chunk announced.
   */
  private File map(int entries, boolean withChecksum) throws IOException {
    return map264(entries, withChecksum, 1, 1);
  }

  private File map264(int entries, boolean withChecksum, long announced, int written)
      throws IOException {
    BucketCacheProtos.BucketCacheEntry.Builder first = details(chunk(entries), withChecksum);
    File f = tmp.newFile();
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(f))) {
      out.write(new byte[] {'V', '2', 'U', 'F'});
      out.writeLong(entries + 1);
      out.writeLong(announced);
      if (written > 0) {
        first.build().writeDelimitedTo(out);
      }
      for (int i = 1; i < written; i++) {
        chunk(10).build().writeDelimitedTo(out);
      }
    }
    return f;
  }

  /** A map in the layout of HBASE-28839 (HBase 2.6.5): details, then chunks up to the end. */
  private File map265(int... chunks) throws IOException {
    File f = tmp.newFile();
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(f))) {
      out.write(new byte[] {'V', '2', 'U', 'F'});
      details(BucketCacheProtos.BackingMap.newBuilder(), true).build().writeDelimitedTo(out);
      for (int n : chunks) {
        chunk(n).build().writeDelimitedTo(out);
      }
    }
    return f;
  }

  @Test
  public void readChecksum_readsTheLayoutOfHBase265() throws IOException {
    assertArrayEquals(CHECKSUM, PersistedMap.readChecksum(map265(10_000, 10_000, 17)));
    assertArrayEquals("an empty cache's map carries its checksum too", CHECKSUM,
        PersistedMap.readChecksum(map265()));
  }

  @Test
  public void readChecksum_readsEveryChunkAnnouncedInTheLayoutOfHBase264() throws IOException {
    assertArrayEquals(CHECKSUM, PersistedMap.readChecksum(map264(100, true, 3, 3)));
  }

  @Test
  public void readChecksum_findsTruncatedChunksInBothLayouts() throws IOException {
    // The torn checkpoint of 2.6.4: the header announces a chunk that was never written.
    File[] torn = {map264(0, true, 1, 0), map264(100, true, 3, 2), map265(1000, 1000)};
    try (RandomAccessFile raf = new RandomAccessFile(torn[2], "rw")) {
      raf.setLength(raf.length() - 100);
    }
    for (File f : torn) {
      try {
        PersistedMap.readChecksum(f);
        fail("a truncated map was read: " + f.length() + " bytes");
      } catch (IOException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("truncated"));
      }
    }
  }

  @Test
  public void readChecksum_findsTheChecksumBehindTheEntries() throws IOException {
    assertArrayEquals(CHECKSUM, PersistedMap.readChecksum(map(20_000, true)));
  }

  @Test
  public void readChecksum_ofAnEmptyCachesMapIsEmpty() throws IOException {
    File f = tmp.newFile();
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(f))) {
      out.write(new byte[] {'V', '2', 'U', 'F'});
      out.writeLong(10_000);
      out.writeLong(0);
    }
    assertEquals(0, PersistedMap.readChecksum(f).length);
  }

  @Test
  public void readChecksum_failsOnAMapWithoutChecksumATruncatedMapAndAnotherFile()
      throws IOException {
    String[] expected = {"no checksum", "truncated", "not a BucketCache persistence file"};
    File truncated = map(1000, true);
    try (RandomAccessFile raf = new RandomAccessFile(truncated, "rw")) {
      raf.setLength(raf.length() / 2);
    }
    File other = tmp.newFile();
    java.nio.file.Files.write(other.toPath(), "hello world".getBytes(StandardCharsets.UTF_8));
    File[] files = {map(10, false), truncated, other};
    for (int i = 0; i < files.length; i++) {
      try {
        PersistedMap.readChecksum(files[i]);
        fail(expected[i]);
      } catch (IOException e) {
        assertTrue(e.getMessage(), e.getMessage().contains(expected[i])
            || (i == 1 && e.getMessage().contains("truncated")));
      }
    }
  }

  @Test
  public void digest_differsForAnotherEpochOrLayout() throws IOException {
    Layout l = new Layout(2, 1L << 30, 1L << 27);
    byte[] d = PersistedMap.digest("MD5", 1, l);
    assertArrayEquals(d, PersistedMap.digest("MD5", 1, l));
    assertFalse(java.util.Arrays.equals(d, PersistedMap.digest("MD5", 2, l)));
    assertFalse(java.util.Arrays.equals(d,
        PersistedMap.digest("MD5", 1, new Layout(1, 1L << 30, 1L << 27))));
  }
}
