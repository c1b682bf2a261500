package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.EntryView;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import com.hazelcast.map.impl.eviction.MapEvictionProviders;
import com.hazelcast.test.Accessors;
import com.hazelcast.transaction.TransactionContext;
import com.hazelcast.transaction.TransactionalMap;
import dev.forkset.hazelcast.chunked.ChunkedData;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * A chunked stored copy (issue 21, point 2) leaves the member in a client response without being
 * gathered into one array (patch 0007): the bytes the member's threads allocate per get, getAll,
 * entry view, values() and entry iteration of a 5 MB value are well below the value's size
 * (before the patch each response built one array of the whole value), and the client receives
 * the very bytes that were put; an entry processor reading the byte[] allocates its result but no
 * temporary copy of the whole payload. A client's write of a large value to a BINARY map is read
 * straight into the chunks of its stored copy (patch 0011): the member allocates it once; the
 * values a client's replace(k, old, new), remove(k, v) and containsValue compare arrive in chunks
 * too and compare byte for byte with the stored chunks. A real
 * member and a real client over TCP, in this JVM; the member's allocation is the sum of
 * {@code ThreadMXBean#getThreadAllocatedBytes} over the threads named after the member's instance
 * (the client's threads, which do allocate the value when they read it, are named after the
 * client's).
 */
public class ChunkedValuesToClientsTest {
  private static final int VALUE_BYTES = 5 << 20;
  private static final int CHUNK = 262_144;
  private static final int ROUNDS = 8;

  private HazelcastInstance member;
  private HazelcastInstance client;
  private String memberName;

  @Before
  public void start() {
    String cluster = "chunked-to-clients-" + UUID.randomUUID();
    memberName = "chunkmember" + UUID.randomUUID().toString().substring(0, 8);
    Config config = new Config().setClusterName(cluster).setInstanceName(memberName);
    config.setProperty(GcAwareEvictionConfig.GC_MODEL.name, "g1");
    config.setProperty("hazelcast.map.eviction.chunked.values", String.valueOf(CHUNK));
    TestMembers.overTcp(config, 5901);
    config.getMapConfig("values").setInMemoryFormat(InMemoryFormat.BINARY).setBackupCount(0);
    config.getMapConfig("objects").setInMemoryFormat(InMemoryFormat.OBJECT).setBackupCount(0);
    member = Hazelcast.newHazelcastInstance(config);

    ClientConfig clientConfig = new ClientConfig().setClusterName(cluster)
        .setInstanceName("chunkclient" + UUID.randomUUID().toString().substring(0, 8));
    int port = member.getCluster().getLocalMember().getAddress().getPort();
    clientConfig.getNetworkConfig().addAddress("127.0.0.1:" + port);
    client = HazelcastClient.newHazelcastClient(clientConfig);
  }

  @After
  public void stop() {
    if (client != null) {
      client.shutdown();
    }
    if (member != null) {
      member.shutdown();
    }
  }

  /** Bytes allocated so far by the member's threads (those alive now). */
  private long memberAllocatedBytes() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    String prefix = "hz." + memberName + ".";
    long sum = 0;
    for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
      Thread t = e.getKey();
      if (t.getName().startsWith(prefix)) {
        long bytes = threads.getThreadAllocatedBytes(t.getId());
        if (bytes > 0) {
          sum += bytes;
        }
      }
    }
    return sum;
  }

  /** The member's bytes allocated per call of {@code read}, over {@link #ROUNDS} calls. */
  private long perCall(String what, Supplier<byte[]> read, byte[] expected) {
    assertArrayEquals(what + ": the client receives the bytes that were put", expected, read.get());
    long before = memberAllocatedBytes();
    for (int i = 0; i < ROUNDS; i++) {
      byte[] received = read.get();
      assertEquals(what, expected.length, received.length);
    }
    long per = (memberAllocatedBytes() - before) / ROUNDS;
    System.out.println("[ChunkedValuesToClientsTest] member bytes allocated per " + what + " of a "
        + VALUE_BYTES + "-byte chunked value: " + per);
    return per;
  }

  @Test
  public void responsesOfAChunkedValue_allocateFarLessThanItsSizeOnTheMember() {
    byte[] value = new byte[VALUE_BYTES];
    new Random(21).nextBytes(value);
    IMap<String, byte[]> map = client.getMap("values");

    map.set("k", value);
    long beforePut = memberAllocatedBytes();
    for (int i = 0; i < ROUNDS; i++) {
      map.set("k", value);
    }
    long perPut = (memberAllocatedBytes() - beforePut) / ROUNDS;
    System.out.println("[ChunkedValuesToClientsTest] member bytes allocated per client set of a "
        + VALUE_BYTES + "-byte value: " + perPut);

    // The member holds it in chunks (patch 0006 and the module's ChunkSize).
    Object stored = TestMembers.storedValue(member, "values", "k");
    assertTrue("stored as " + stored.getClass().getName(), stored instanceof ChunkedData);

    long bound = VALUE_BYTES / 4;
    Set<String> key = Collections.singleton("k");
    Map<String, Long> perCall = new LinkedHashMap<>();
    perCall.put("get", perCall("get", () -> map.get("k"), value));
    perCall.put("getAll", perCall("getAll", () -> map.getAll(key).get("k"), value));
    perCall.put("entry view", perCall("entry view", () -> {
      EntryView<String, byte[]> view = map.getEntryView("k");
      return view.getValue();
    }, value));
    perCall.put("values()", perCall("values()", () -> map.values().iterator().next(), value));
    perCall.put("entrySet()", perCall("entrySet()",
        () -> map.entrySet().iterator().next().getValue(), value));
    perCall.forEach((what, bytes) -> assertBelow(what, bytes, bound));

    // An entry processor that reads the byte[] deserializes it on the member: the result array
    // is the value's size; before patch 0007 one temporary array of the whole payload came
    // first (BufferPoolImpl#takeInputBuffer), twice the value in all.
    long beforeProcessing = memberAllocatedBytes();
    for (int i = 0; i < ROUNDS; i++) {
      assertEquals(Integer.valueOf(VALUE_BYTES), map.executeOnKey("k", new ValueLength()));
    }
    long perProcessing = (memberAllocatedBytes() - beforeProcessing) / ROUNDS;
    System.out.println("[ChunkedValuesToClientsTest] member bytes allocated per entry processor"
        + " reading a " + VALUE_BYTES + "-byte chunked byte[]: " + perProcessing);
    assertTrue("the member allocated " + perProcessing + " bytes per entry processor reading a "
        + VALUE_BYTES + "-byte byte[]: expected below 1.5 x the value (the result, without a"
        + " temporary copy of the whole payload)", perProcessing < VALUE_BYTES * 3L / 2);
  }

  @Test
  public void clientWrites_ofLargeValues_areReadIntoTheChunksOfTheirStoredCopies() {
    byte[] value = new byte[VALUE_BYTES];
    new Random(22).nextBytes(value);
    IMap<String, byte[]> map = client.getMap("values");
    map.set("warm-up", value);

    // Patch 0011: the value frame is read straight into the chunks the record keeps, so a write
    // allocates the value once on the member. Read into one array and then copied into chunks
    // (revision 8 and earlier), it allocated twice the value.
    Map<String, Runnable> writes = new LinkedHashMap<>();
    writes.put("set", () -> map.set("k", value));
    writes.put("put", () -> map.put("k", value));
    writes.put("replace", () -> map.replace("k", value));
    writes.put("replace(k, old, new)", () -> map.replace("k", value, value));
    writes.put("putAll of one entry", () -> map.putAll(Collections.singletonMap("k", value)));
    // Its value frame too since revision 10; stored when the transaction commits.
    writes.put("transactional set", () -> {
      TransactionContext transaction = client.newTransactionContext();
      transaction.beginTransaction();
      transaction.<String, byte[]>getMap("values").set("k", value);
      transaction.commitTransaction();
    });
    for (Map.Entry<String, Runnable> write : writes.entrySet()) {
      write.getValue().run();
      long before = memberAllocatedBytes();
      for (int i = 0; i < ROUNDS; i++) {
        write.getValue().run();
      }
      long perWrite = (memberAllocatedBytes() - before) / ROUNDS;
      System.out.println("[ChunkedValuesToClientsTest] member bytes allocated per client "
          + write.getKey() + " of a " + VALUE_BYTES + "-byte value: " + perWrite);
      String what = write.getKey();
      // replace(k, old, new) sends the expected value too: read into chunks as well (revision
      // 10), compared and dropped, the value's size once more.
      long bound = what.startsWith("replace(") ? VALUE_BYTES * 9L / 4 : VALUE_BYTES * 5L / 4;
      assertTrue("the member allocated " + perWrite + " bytes per client " + what + " of a "
          + VALUE_BYTES + "-byte value: expected below " + bound + " (read into one array and"
          + " then copied into chunks, a write allocates twice the value)", perWrite < bound);
      assertArrayEquals(what, value, map.get("k"));
      assertTrue(what + ": stored in chunks", TestMembers.storedValue(member, "values", "k") instanceof ChunkedData);
    }
  }

  @Test
  public void clientComparisons_ofChunkedValues_compareTheirBytes() {
    byte[] value = new byte[VALUE_BYTES];
    new Random(24).nextBytes(value);
    byte[] lastByteDiffers = value.clone();
    lastByteDiffers[VALUE_BYTES - 1] ^= 1;
    byte[] firstChunkDiffers = value.clone();
    firstChunkDiffers[100] ^= 1;
    byte[] shorter = Arrays.copyOf(value, VALUE_BYTES - 1);
    IMap<String, byte[]> map = client.getMap("values");
    map.set("k", value);

    // The compared values arrive in chunks (patch 0011, revision 10) and the stored one is in
    // chunks: equal only byte for byte, wherever the bytes differ.
    for (byte[] different : new byte[][] {lastByteDiffers, firstChunkDiffers, shorter}) {
      assertFalse(map.replace("k", different, value));
      assertFalse(map.remove("k", different));
      assertFalse(map.containsValue(different));
    }
    assertArrayEquals("left as it was", value, map.get("k"));
    assertTrue(map.containsValue(value));

    TransactionContext transaction = client.newTransactionContext();
    transaction.beginTransaction();
    TransactionalMap<String, byte[]> transactional = transaction.getMap("values");
    for (byte[] different : new byte[][] {lastByteDiffers, firstChunkDiffers, shorter}) {
      assertFalse(transactional.replace("k", different, value));
      assertFalse(transactional.remove("k", different));
    }
    transaction.commitTransaction();
    assertArrayEquals("left as it was by the transaction", value, map.get("k"));

    assertTrue(map.replace("k", value, lastByteDiffers));
    assertArrayEquals(lastByteDiffers, map.get("k"));
    assertTrue("stored in chunks", TestMembers.storedValue(member, "values", "k") instanceof ChunkedData);
    assertFalse("the value replaced", map.remove("k", value));
    assertTrue(map.remove("k", lastByteDiffers));
    assertNull(map.get("k"));
    assertFalse(map.containsValue(lastByteDiffers));
  }

  @Test
  public void valueFrameSink_onlyForValuesStoredInChunks_ofBinaryMaps() {
    GcAwareEvictionProvider provider = (GcAwareEvictionProvider)
        MapEvictionProviders.forNode(Accessors.getNodeEngineImpl(member));
    long largestWhole = provider.chunking().largestWhole();

    assertTrue(provider.valueFrameSink("values", (int) largestWhole + 1) != null);
    assertTrue("a value stored as one array", provider.valueFrameSink("values", (int) largestWhole) == null);
    assertTrue("an OBJECT map deserializes its values",
        provider.valueFrameSink("objects", VALUE_BYTES) == null);
    // A name with a partition key ("map@key", as a client's proxy of getMap("values@k") sends it)
    // has the config of its base name, as its map container does.
    assertTrue("values@k: the BINARY map's config",
        provider.valueFrameSink("values@k", VALUE_BYTES) != null);
    assertTrue("objects@k: the OBJECT map's config",
        provider.valueFrameSink("objects@k", VALUE_BYTES) == null);

    // The OBJECT map's write is read as one array and stored as the object.
    byte[] value = new byte[VALUE_BYTES];
    new Random(23).nextBytes(value);
    IMap<String, byte[]> objects = client.getMap("objects");
    objects.set("k", value);
    assertArrayEquals(value, objects.get("k"));
    Object stored = TestMembers.storedValue(member, "objects", "k");
    assertTrue("stored as " + stored.getClass().getName(), stored instanceof byte[]);
    assertArrayEquals(value, (byte[]) stored);
  }

  /** Reads the value on the member and returns its length. */
  public static final class ValueLength implements EntryProcessor<String, byte[], Integer> {
    private static final long serialVersionUID = 1L;

    @Override
    public Integer process(Map.Entry<String, byte[]> entry) {
      return entry.getValue().length;
    }

    @Override
    public EntryProcessor<String, byte[], Integer> getBackupProcessor() {
      return null;
    }
  }

  private static void assertBelow(String what, long perCall, long bound) {
    assertTrue("the member allocated " + perCall + " bytes per " + what + " of a " + VALUE_BYTES
        + "-byte chunked value: expected below " + bound + " (a response that builds the value"
        + " as one array allocates its whole size)", perCall < bound);
  }
}
