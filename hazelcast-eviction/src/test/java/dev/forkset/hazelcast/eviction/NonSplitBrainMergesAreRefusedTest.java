package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.client.impl.proxy.ClientMapProxy;
import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.core.EntryView;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.impl.SimpleEntryView;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.After;
import org.junit.Test;

/**
 * Only a split-brain merge batch is dropped on a refusal: the same MergeOperation also carries a
 * client's {@code putAllWithMetadata} ({@code MapPutAllWithMetadataMessageTask}) and a WAN
 * update ({@code WanMapSupportingService}), whose caller waits for the outcome. A refusal of
 * those reaches the caller as IllegalArgumentException, as a putAll's does; a dropped batch would
 * answer a client's putAllWithMetadata with success while none of it is stored. A real member and
 * a real client over TCP, in this JVM; limit 10 MB on a G1 model with 1 MB regions, so an 11 MB
 * value is oversized.
 */
public class NonSplitBrainMergesAreRefusedTest {
  private static final int OVERSIZED = 11 << 20;

  private HazelcastInstance member;
  private HazelcastInstance client;

  @After
  public void stop() {
    if (client != null) {
      client.shutdown();
    }
    if (member != null) {
      member.shutdown();
    }
  }

  @Test
  public void putAllWithMetadata_withOneOversizedEntry_isRefusedToTheClient() throws Exception {
    String cluster = "merge-refusals-" + UUID.randomUUID();
    Config config = TestMembers.config(TestMembers.REGION_1M, 2).setClusterName(cluster);
    TestMembers.map(config, "m", MaxSizePolicy.USED_HEAP_SIZE, 10, EvictionPolicy.LRU, 0);
    TestMembers.overTcp(config, 5951);
    member = Hazelcast.newHazelcastInstance(config);
    ClientConfig clientConfig = new ClientConfig().setClusterName(cluster);
    int port = member.getCluster().getLocalMember().getAddress().getPort();
    clientConfig.getNetworkConfig().addAddress("127.0.0.1:" + port);
    client = HazelcastClient.newHazelcastClient(clientConfig);

    // keys of one partition: one MergeOperation of the whole batch
    int pid = member.getPartitionService().getPartition(0).getPartitionId();
    List<Integer> keys = new ArrayList<>();
    for (int k = 0; keys.size() < 4; k++) {
      if (member.getPartitionService().getPartition(k).getPartitionId() == pid) {
        keys.add(k);
      }
    }
    List<EntryView<Integer, byte[]>> entries = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      entries.add(new SimpleEntryView<>(keys.get(i), new byte[i == 2 ? OVERSIZED : 1024]));
    }
    @SuppressWarnings("unchecked")
    ClientMapProxy<Integer, byte[]> map = (ClientMapProxy<Integer, byte[]>) client.<Integer, byte[]>getMap("m");
    try {
      map.putAllWithMetadataAsync(entries).get(120, TimeUnit.SECONDS);
      fail("putAllWithMetadata of an oversized entry succeeded; entries stored: " + map.size());
    } catch (ExecutionException e) {
      Throwable t = e;
      while (t != null && !(t instanceof IllegalArgumentException)) {
        t = t.getCause();
      }
      assertNotNull("an IllegalArgumentException to the client, got " + e, t);
      assertTrue(t.getMessage(), t.getMessage().contains("Map 'm'")
          && t.getMessage().contains("per-member limit of 10485760 bytes"));
    }
    for (Integer key : keys) {
      assertFalse("key " + key + " of the refused batch", map.containsKey(key));
    }
    assertEquals(keys.size(), TestMembers.metrics(member).getRejectedEntries());
  }
}
