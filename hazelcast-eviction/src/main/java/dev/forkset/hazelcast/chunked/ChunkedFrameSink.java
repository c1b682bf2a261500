package dev.forkset.hazelcast.chunked;

import com.hazelcast.client.impl.protocol.DataFrameSink;
import com.hazelcast.internal.serialization.Data;
import java.nio.ByteBuffer;

/**
 * Reads a client's value frame straight into the chunks of its stored copy (custom jars of
 * revision 9 on, both lines: {@code MapEvictionProvider#valueFrameSink}), so the frame never
 * becomes one array of its size on the member, and {@link ChunkSize#storedCopy} then keeps the
 * {@link ChunkedData} it builds as it is; a value the map only compares (revision 10 on) is
 * compared in chunks. Loaded only by a jar that has {@link DataFrameSink}.
 */
public final class ChunkedFrameSink implements DataFrameSink {
  private final ChunkedDataBuilder builder;

  private ChunkedFrameSink(ChunkedDataBuilder builder) {
    this.builder = builder;
  }

  /** A sink of a frame of {@code size} bytes in chunks of {@code chunkSize}. */
  public static DataFrameSink of(int size, int chunkSize) {
    return new ChunkedFrameSink(new ChunkedDataBuilder(size, chunkSize));
  }

  @Override
  public int write(ByteBuffer src) {
    return builder.write(src);
  }

  @Override
  public Data build() {
    return builder.build();
  }
}
