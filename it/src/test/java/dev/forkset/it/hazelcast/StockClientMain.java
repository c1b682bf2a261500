package dev.forkset.it.hazelcast;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.EntryView;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.BuildInfoProvider;
import com.hazelcast.map.IMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The client side of {@link StockClientChunkedValuesIT}, run in its own JVM whose class path holds
 * the stock Hazelcast jar and the IT's test classes only (none of the custom jar, none of the
 * module): it writes values larger than the member's chunk size and reads them back on every
 * path a chunked stored copy leaves the member by, comparing every byte with what it wrote.
 * It prints one {@code CHECK <path> ok} line per path, then {@code ALL OK}; on the first
 * difference it prints {@code FAIL <path>: <what differs>} and exits with status 1.
 *
 * <p>Arguments: the cluster name, the member's address (host:port), the map name, then the value
 * sizes in bytes. Only stock client API and the JDK are used here.
 */
public final class StockClientMain {
  private StockClientMain() {
  }

  public static void main(String[] args) {
    String source = HazelcastClient.class.getProtectionDomain().getCodeSource().getLocation()
        .getPath();
    System.out.println("CLIENT hazelcast " + BuildInfoProvider.getBuildInfo().getVersion()
        + " from " + source);
    ClientConfig config = new ClientConfig();
    config.setClusterName(args[0]);
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.getNetworkConfig().addAddress(args[1]);
    config.getConnectionStrategyConfig().getConnectionRetryConfig()
        .setClusterConnectTimeoutMillis(60_000);
    HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
    int status = 0;
    try {
      run(client.getMap(args[2]), Arrays.copyOfRange(args, 3, args.length));
      System.out.println("ALL OK");
    } catch (Mismatch e) {
      System.out.println("FAIL " + e.getMessage());
      status = 1;
    } catch (RuntimeException e) {
      System.out.println("FAIL " + e);
      e.printStackTrace(System.out);
      status = 1;
    } finally {
      client.shutdown();
    }
    System.out.flush();
    System.exit(status);
  }

  private static void run(IMap<Integer, byte[]> map, String[] sizes) throws Mismatch {
    Map<Integer, byte[]> written = new LinkedHashMap<>();
    for (int i = 0; i < sizes.length; i++) {
      written.put(i, bytes(Integer.parseInt(sizes[i]), 1000 + i));
    }
    // put: a fresh key answers null; set: no answer
    for (Map.Entry<Integer, byte[]> e : written.entrySet()) {
      if (e.getKey() % 2 == 0) {
        same("put of a new key answers null", null, map.put(e.getKey(), e.getValue()));
      } else {
        map.set(e.getKey(), e.getValue());
      }
    }
    for (Map.Entry<Integer, byte[]> e : written.entrySet()) {
      same("get " + e.getKey(), e.getValue(), map.get(e.getKey()));
    }
    ok("get");

    Map<Integer, byte[]> all = map.getAll(written.keySet());
    check("getAll: " + all.size() + " entries", all.size() == written.size());
    for (Map.Entry<Integer, byte[]> e : written.entrySet()) {
      same("getAll " + e.getKey(), e.getValue(), all.get(e.getKey()));
    }
    ok("getAll");

    for (Map.Entry<Integer, byte[]> e : written.entrySet()) {
      EntryView<Integer, byte[]> view = map.getEntryView(e.getKey());
      check("getEntryView " + e.getKey() + " exists", view != null);
      same("getEntryView " + e.getKey(), e.getValue(), view.getValue());
    }
    ok("getEntryView");

    Collection<byte[]> values = map.values();
    check("values(): " + values.size() + " values", values.size() == written.size());
    Set<Integer> matched = new HashSet<>();
    for (byte[] v : values) {
      Integer key = keyOf(written, v);
      check("values(): a value of " + (v == null ? "null" : v.length + " bytes")
          + " equals none written", key != null);
      matched.add(key);
    }
    check("values(): every written value once", matched.size() == written.size());
    ok("values");

    Set<Map.Entry<Integer, byte[]>> entries = map.entrySet();
    check("entrySet(): " + entries.size() + " entries", entries.size() == written.size());
    for (Map.Entry<Integer, byte[]> e : entries) {
      same("entrySet " + e.getKey(), written.get(e.getKey()), e.getValue());
    }
    ok("entrySet");

    // A write answers with the old value: the stored (chunked) copy goes back in the response.
    List<Integer> keys = new ArrayList<>(written.keySet());
    for (Integer key : keys) {
      byte[] next = bytes(written.get(key).length + 3, 2000 + key);
      same("put over " + key + " answers the old value", written.get(key), map.put(key, next));
      same("get after put " + key, next, map.get(key));
      written.put(key, next);
    }
    ok("put round-trip");
    for (Integer key : keys) {
      byte[] next = bytes(written.get(key).length - 5, 3000 + key);
      same("replace " + key + " answers the old value", written.get(key),
          map.replace(key, next));
      same("get after replace " + key, next, map.get(key));
      written.put(key, next);
    }
    ok("replace round-trip");
    for (Integer key : keys) {
      byte[] next = bytes(written.get(key).length + 1, 4000 + key);
      // the member compares the stored (chunked) copy with the expected bytes it receives
      check("replace(k, old, new) of " + key + " with the stored bytes",
          map.replace(key, copy(written.get(key)), next));
      byte[] wrong = copy(next);
      wrong[wrong.length - 1] ^= 1;
      check("replace(k, old, new) of " + key + " with bytes that differ in the last one",
          !map.replace(key, wrong, bytes(16, 1)));
      same("get after replace(k, old, new) " + key, next, map.get(key));
      written.put(key, next);
    }
    ok("replace(k, old, new) round-trip");
    for (Integer key : keys) {
      same("putIfAbsent of present " + key + " answers the stored value", written.get(key),
          map.putIfAbsent(key, bytes(16, 2)));
    }
    ok("putIfAbsent");
    for (Integer key : keys) {
      same("remove " + key + " answers the stored value", written.get(key), map.remove(key));
    }
    check("the map is empty after the removes", map.isEmpty());
    ok("remove");
  }

  /** Deterministic bytes, different per seed, none of them constant runs. */
  static byte[] bytes(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static byte[] copy(byte[] b) {
    return Arrays.copyOf(b, b.length);
  }

  private static Integer keyOf(Map<Integer, byte[]> written, byte[] v) {
    for (Map.Entry<Integer, byte[]> e : written.entrySet()) {
      if (Arrays.equals(e.getValue(), v)) {
        return e.getKey();
      }
    }
    return null;
  }

  private static void ok(String path) {
    System.out.println("CHECK " + path + " ok");
  }

  private static void check(String what, boolean holds) throws Mismatch {
    if (!holds) {
      throw new Mismatch(what);
    }
  }

  private static void same(String what, byte[] expected, byte[] actual) throws Mismatch {
    if (expected == null || actual == null) {
      check(what + ": expected " + (expected == null ? "null" : expected.length + " bytes")
          + ", got " + (actual == null ? "null" : actual.length + " bytes"), expected == actual);
      return;
    }
    if (expected.length != actual.length) {
      throw new Mismatch(what + ": " + actual.length + " bytes, expected " + expected.length);
    }
    for (int i = 0; i < expected.length; i++) {
      if (expected[i] != actual[i]) {
        throw new Mismatch(what + ": byte " + i + " of " + expected.length + " is " + actual[i]
            + ", expected " + expected[i]);
      }
    }
  }

  private static final class Mismatch extends Exception {
    Mismatch(String message) {
      super(message);
    }
  }
}
