package dev.forkset.hazelcast.chunked;

import com.hazelcast.internal.serialization.InternalSerializationService;
import com.hazelcast.internal.serialization.impl.AbstractSerializationService;
import com.hazelcast.internal.serialization.impl.HeapData;
import com.hazelcast.internal.serialization.impl.ObjectDataInputStream;
import com.hazelcast.internal.serialization.impl.SerializationConstants;
import com.hazelcast.internal.serialization.impl.SerializerAdapter;
import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;

/**
 * Deserializes a {@link ChunkedData} through a chunk-backed stream
 * ({@code ObjectDataInputStream} over {@link ChunkedDataInputStream}) instead of
 * {@code BufferPoolImpl.takeInputBuffer}, which wants the payload as one array.
 *
 * <p>Only serializers that read their input front to back can take a stream. Compact and Portable
 * readers seek to offsets they read from the payload ({@code CompactStreamSerializer#read} casts
 * its input to {@code BufferObjectDataInput}); for those {@link #streams(int)} is false and the
 * caller builds one temporary array (documented per path in docs/hazelcast-eviction.md).
 *
 * <p>Not on a live path yet: the wiring is a patch to {@code AbstractSerializationService#toObject}
 * (the managed context and class-locator steps it runs around {@code serializer.read} stay
 * there).
 */
public final class StreamingDeserializer {
  private final InternalSerializationService ss;

  public StreamingDeserializer(InternalSerializationService ss) {
    this.ss = Objects.requireNonNull(ss, "ss");
  }

  /** Whether a value of serializer type {@code typeId} can be read from a stream. */
  @SuppressWarnings("deprecation")
  public static boolean streams(int typeId) {
    return typeId != SerializationConstants.TYPE_COMPACT
        && typeId != SerializationConstants.TYPE_COMPACT_WITH_SCHEMA
        && typeId != SerializationConstants.CONSTANT_TYPE_PORTABLE;
  }

  /** The object {@code data} holds, read chunk by chunk; null for the null value. */
  @SuppressWarnings("unchecked")
  public <T> T toObject(ChunkedData data) throws IOException {
    int typeId = data.getType();
    if (typeId == SerializationConstants.CONSTANT_TYPE_NULL) {
      return null;
    }
    if (!streams(typeId)) {
      throw new IllegalArgumentException("serializer type " + typeId + " reads by offset and"
          + " cannot take a stream: deserialize through a HeapData copy");
    }
    SerializerAdapter serializer = ((AbstractSerializationService) ss).serializerFor(typeId);
    if (serializer == null) {
      throw new IllegalArgumentException("no serializer for type " + typeId);
    }
    InputStream in = data.newInputStream(HeapData.DATA_OFFSET);
    try (ObjectDataInputStream objectIn = new ObjectDataInputStream(in, ss)) {
      return (T) serializer.read(objectIn);
    }
  }
}
