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

  /** A chunked map as BucketCache writes it, with {@code entries} entries in its first chunk. */
  private File map(int entries, boolean withChecksum) throws IOException {
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
    BucketCacheProtos.BucketCacheEntry.Builder first = BucketCacheProtos.BucketCacheEntry
        .newBuilder().setCacheCapacity(1L << 30).setIoClass("x").setMapClass("y")
        .setBackingMap(backing);
    if (withChecksum) {
      first.setChecksum(ByteString.copyFrom(CHECKSUM));
    }
    File f = tmp.newFile();
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(f))) {
      out.write(new byte[] {'V', '2', 'U', 'F'});
      out.writeLong(entries + 1);
      out.writeLong(1);
      first.build().writeDelimitedTo(out);
    }
    return f;
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
