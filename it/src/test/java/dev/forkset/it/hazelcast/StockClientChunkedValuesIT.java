package dev.forkset.it.hazelcast;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.forkset.childjvm.ChildJvm;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.HazelcastLine;
import dev.forkset.it.harness.MemberProcess;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * A stock 5.7.0 client reads chunked stored copies byte for byte (issue 21, point 2: "the wire
 * format does not change: stock clients work"). One member on the custom jar with the module,
 * values stored in 64 KB pieces ({@code hazelcast.map.eviction.chunked.values: 65536}); the
 * client runs in its own JVM ({@link StockClientMain}) on the stock jar alone, so no class of the
 * custom jar or the module decodes a response. It writes values from just over one piece to
 * 5 MB, none a constant run, and reads each back through get, getAll, getEntryView, values()
 * and entrySet(); then put, replace, replace(k, old, new), putIfAbsent and remove, which answer
 * with (or compare against) the stored chunked copy. Every byte is compared with what was
 * written.
 */
public class StockClientChunkedValuesIT {
  static final String MAP = "chunked-to-stock-client";
  static final int CHUNK = 65_536;
  /** Just over one piece, several pieces and an odd tail, whole pieces, 1 MB + 5, 5 MB + 7. */
  static final int[] SIZES = {CHUNK + 1, 3 * CHUNK + 17, 8 * CHUNK, (1 << 20) + 5,
      (5 << 20) + 7};

  @Test
  public void stockClient_readsAndReplacesChunkedValues_byteForByte() throws Exception {
    String properties = "  hazelcast.jmx: true\n"
        + "  hazelcast.map.eviction.chunked.values: " + CHUNK + "\n";
    try (HazelcastCluster cluster = HazelcastCluster.builder("stock-client-chunked")
        .members(1).flavor(Flavor.CUSTOM).heap("256m")
        .config(EvictionMaps.usedHeapMap(MAP, 150, 0, properties)).start()) {
      MemberProcess member = cluster.member(0);
      member.assertRuns(HazelcastLine.DEFAULT, null);
      String settings = (String) member.jmx().getAttribute(onlyEvictionBean(member), "Settings");
      assertTrue("the member stores values in " + CHUNK + "-byte pieces: " + settings,
          settings.contains("chunked.values=" + CHUNK));

      Path stockJar = Paths.get(System.getProperty("forkset.hazelcast.stock.jar"));
      Path testClasses = Paths.get(System.getProperty("forkset.harness.classes",
          "target/test-classes"));
      List<String> args = new ArrayList<>(Arrays.asList(cluster.clusterName(),
          "127.0.0.1:" + member.port(), MAP));
      for (int size : SIZES) {
        args.add(String.valueOf(size));
      }
      Path dir = member.logFile().getParent();
      try (ChildJvm client = ChildJvm.builder("stock-client", StockClientMain.class.getName())
          .heap("256m").classPath(stockJar, testClasses).dir(dir)
          .systemProperty("java.net.preferIPv4Stack", "true")
          .systemProperty("hazelcast.logging.type", "jdk")
          .args(args).start()) {
        int status = client.waitFor(300, TimeUnit.SECONDS);
        String log = client.logText();
        System.out.println("[stock-client-chunked] client log:\n" + client.logTail(20));
        // the client ran the stock jar, not the custom one
        String version = HazelcastLine.DEFAULT.version();
        assertTrue("the client runs the stock jar " + stockJar + " (" + version + ")\n"
            + client.logTail(40), log.contains("CLIENT hazelcast " + version + " from "
            + stockJar.toAbsolutePath()));
        assertEquals("client exit status\n" + client.logTail(40), 0, status);
        for (String path : Arrays.asList("get", "getAll", "getEntryView", "values", "entrySet",
            "put round-trip", "replace round-trip", "replace(k, old, new) round-trip",
            "putIfAbsent", "remove")) {
          assertTrue(path + " checked\n" + client.logTail(40),
              log.contains("CHECK " + path + " ok"));
        }
        assertTrue(client.logTail(40), log.contains("ALL OK"));
        assertFalse(log, log.contains("FAIL "));
      }
      cluster.assertAllAlive();
      assertFalse("OutOfMemoryError", member.sawOutOfMemoryError());
    }
  }

  private static javax.management.ObjectName onlyEvictionBean(MemberProcess member)
      throws Exception {
    return member.jmx().queryNames(
        new javax.management.ObjectName("dev.forkset.hazelcast:type=GcAwareEviction,*"), null)
        .iterator().next();
  }
}
