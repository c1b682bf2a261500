package dev.forkset.hazelcast.chunked;

/**
 * MurmurHash3 (x86_32 and x64_64, Austin Appleby's public-domain algorithm) over a
 * {@link ChunkedData}'s bytes, bit for bit what Hazelcast's {@code HashUtil.MurmurHash3_x86_32}
 * and {@code MurmurHash3_x64_64} return for the same bytes in one array: same seed
 * (0x01000193), little-endian block loads, and HashUtil's x64 tail, which sign-extends each byte
 * before shifting it (a HeapData's {@code hash64()} depends on that, so this does the same).
 * ChunkedDataTest checks both against HashUtil over random payloads and every tail length.
 */
final class ChunkedMurmur3 {
  private static final int SEED = 0x01000193;
  private static final int C1_32 = 0xcc9e2d51;
  private static final int C2_32 = 0x1b873593;

  private ChunkedMurmur3() {
  }

  static int hash32(ChunkedData data, int offset, int len) {
    int h1 = SEED;
    int tailStart = offset + (len & ~3);
    for (int block = offset; block < tailStart; block += 4) {
      int k1 = data.intL(block);
      k1 *= C1_32;
      k1 = Integer.rotateLeft(k1, 15);
      k1 *= C2_32;
      h1 ^= k1;
      h1 = Integer.rotateLeft(h1, 13);
      h1 = h1 * 5 + 0xe6546b64;
    }
    int tail = len & 3;
    if (tail > 0) {
      int k1 = 0;
      for (int i = tail - 1; i >= 0; i--) {
        k1 |= (data.byteAt(tailStart + i) & 0xff) << (8 * i);
      }
      k1 *= C1_32;
      k1 = Integer.rotateLeft(k1, 15);
      k1 *= C2_32;
      h1 ^= k1;
    }
    h1 ^= len;
    return fmix(h1);
  }

  static long hash64(ChunkedData data, int offset, int len) {
    long h1 = 0x9368e53c2f6af274L ^ SEED;
    long h2 = 0x586dcd208f7cd3fdL ^ SEED;
    long c1 = 0x87c37b91114253d5L;
    long c2 = 0x4cf5ad432745937fL;
    int tailStart = offset + (len & ~15);
    for (int block = offset; block < tailStart; block += 16) {
      long k1 = data.longL(block);
      long k2 = data.longL(block + 8);
      k1 *= c1;
      k1 = Long.rotateLeft(k1, 23);
      k1 *= c2;
      h1 ^= k1;
      h1 += h2;
      h2 = Long.rotateLeft(h2, 41);
      k2 *= c2;
      k2 = Long.rotateLeft(k2, 23);
      k2 *= c1;
      h2 ^= k2;
      h2 += h1;
      h1 = h1 * 3 + 0x52dce729;
      h2 = h2 * 3 + 0x38495ab5;
      c1 = c1 * 5 + 0x7b7d159c;
      c2 = c2 * 5 + 0x6bce6396;
    }
    int tail = len & 15;
    if (tail > 0) {
      long k1 = 0;
      long k2 = 0;
      // Sign-extended bytes, as HashUtil's tail does: (long) byte << n, no & 0xff.
      for (int i = tail - 1; i >= 8; i--) {
        k2 ^= (long) data.byteAt(tailStart + i) << (8 * (i - 8));
      }
      for (int i = Math.min(tail, 8) - 1; i >= 0; i--) {
        k1 ^= (long) data.byteAt(tailStart + i) << (8 * i);
      }
      k1 *= c1;
      k1 = Long.rotateLeft(k1, 23);
      k1 *= c2;
      h1 ^= k1;
      h1 += h2;
      h2 = Long.rotateLeft(h2, 41);
      k2 *= c2;
      k2 = Long.rotateLeft(k2, 23);
      k2 *= c1;
      h2 ^= k2;
      h2 += h1;
      h1 = h1 * 3 + 0x52dce729;
      h2 = h2 * 3 + 0x38495ab5;
    }
    h2 ^= len;
    h1 += h2;
    h2 += h1;
    h1 = fmix(h1);
    h2 = fmix(h2);
    return h1 + h2;
  }

  private static int fmix(int k) {
    k ^= k >>> 16;
    k *= 0x85ebca6b;
    k ^= k >>> 13;
    k *= 0xc2b2ae35;
    k ^= k >>> 16;
    return k;
  }

  private static long fmix(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }
}
