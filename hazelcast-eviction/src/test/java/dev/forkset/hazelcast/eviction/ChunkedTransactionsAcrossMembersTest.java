package dev.forkset.hazelcast.eviction;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.cluster.Member;
import com.hazelcast.config.Config;
import com.hazelcast.config.InMemoryFormat;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.test.Accessors;
import com.hazelcast.test.HazelcastTestSupport;
import com.hazelcast.transaction.TransactionContext;
import com.hazelcast.transaction.TransactionOptions;
import com.hazelcast.transaction.TransactionOptions.TransactionType;
import com.hazelcast.transaction.TransactionalMap;
import dev.forkset.hazelcast.chunked.ChunkedData;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * A client's transactional writes of values a BINARY map chunks (read into chunks as they arrive
 * since revision 10) on two members, one key owned by each: the member that runs the transaction
 * logs a write of the other member's key as an operation it sends there at commit (the chunked
 * value serialized into the packet), a TWO_PHASE transaction first replicates its log to the other
 * member, and the transaction reads its own uncommitted values back to the client; the stored
 * copies and their backups hold the very bytes, in chunks; replace(k, old, new) and remove(k, v)
 * of keys the transaction has not written compare the value the sink read with the owner's (its
 * stored chunks on the member that runs the transaction, a HeapData from the other's response);
 * a rollback stores nothing.
 */
public class ChunkedTransactionsAcrossMembersTest {
  private static final int CHUNK = 65_536;
  private static final int VALUE_BYTES = 300_000;

  private final List<HazelcastInstance> members = new ArrayList<>();
  private HazelcastInstance client;

  @Before
  public void start() {
    String cluster = "chunked-txn-" + UUID.randomUUID();
    for (int i = 0; i < 2; i++) {
      Config config = new Config().setClusterName(cluster);
      config.setProperty(GcAwareEvictionConfig.GC_MODEL.name, "g1");
      config.setProperty("hazelcast.map.eviction.chunked.values", String.valueOf(CHUNK));
      TestMembers.overTcp(config, 5931);
      config.getMapConfig("values").setInMemoryFormat(InMemoryFormat.BINARY).setBackupCount(1);
      config.getMapConfig("objects").setInMemoryFormat(InMemoryFormat.OBJECT).setBackupCount(1);
      members.add(Hazelcast.newHazelcastInstance(config));
    }
    ClientConfig clientConfig = new ClientConfig().setClusterName(cluster);
    for (HazelcastInstance member : members) {
      clientConfig.getNetworkConfig().addAddress("127.0.0.1:"
          + member.getCluster().getLocalMember().getAddress().getPort());
    }
    client = HazelcastClient.newHazelcastClient(clientConfig);
    // The partitions have their owners and backups on both members before keys are chosen by owner
    // and replicas are read.
    HazelcastTestSupport.waitAllForSafeState(members);
  }

  @After
  public void stop() {
    if (client != null) {
      client.shutdown();
    }
    for (HazelcastInstance member : members) {
      member.getLifecycleService().terminate();
    }
  }

  private static byte[] value(long seed) {
    byte[] bytes = new byte[VALUE_BYTES];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }

  /** A key the partition table gives to {@code owner}. */
  private String keyOwnedBy(HazelcastInstance owner) {
    Member local = owner.getCluster().getLocalMember();
    for (int i = 0; i < 10_000; i++) {
      String key = "key" + i;
      if (local.equals(owner.getPartitionService().getPartition(key).getOwner())) {
        return key;
      }
    }
    throw new AssertionError("no key of 10000 is owned by " + local);
  }

  @Test
  public void transactionalWrites_ofEitherMembersKeys_storeTheirBytesInChunks_onOwnerAndBackup() {
    String[] keys = {keyOwnedBy(members.get(0)), keyOwnedBy(members.get(1))};
    IMap<String, byte[]> map = client.getMap("values");
    long seed = 1;
    for (TransactionType type : TransactionType.values()) {
      byte[] first = value(seed++);
      byte[] second = value(seed++);
      TransactionContext transaction = client.newTransactionContext(
          new TransactionOptions().setTransactionType(type).setDurability(1));
      transaction.beginTransaction();
      TransactionalMap<String, byte[]> transactional = transaction.getMap("values");
      for (String key : keys) {
        transactional.set(key, first);
        assertArrayEquals(type + ": its own uncommitted value", first, transactional.get(key));
        assertFalse(type + ": a different expected value", transactional.replace(key, second, second));
        assertTrue(type + ": the same expected value", transactional.replace(key, first, second));
      }
      transaction.commitTransaction();
      for (String key : keys) {
        assertArrayEquals(type + ": committed", second, map.get(key));
        for (HazelcastInstance member : members) {
          Object stored = TestMembers.storedValue(member, "values", key);
          assertTrue(type + ": stored in chunks on every replica, was " + stored.getClass(),
              stored instanceof ChunkedData);
          assertArrayEquals(type + ": the bytes put", second,
              Accessors.getNodeEngineImpl(member).getSerializationService().toObject(stored));
        }
      }

      // Without an earlier write of the key in the transaction, the expected value (read by the
      // sink) is compared with the owner's: the stored chunks on this member, a HeapData read out
      // of the owner's response from the other.
      TransactionContext compared = client.newTransactionContext(
          new TransactionOptions().setTransactionType(type).setDurability(1));
      compared.beginTransaction();
      TransactionalMap<String, byte[]> comparing = compared.getMap("values");
      for (String key : keys) {
        assertFalse(type + ": replace, a different expected value", comparing.replace(key, first, first));
        assertFalse(type + ": remove, a different value", comparing.remove(key, first));
        assertTrue(type + ": replace, the stored value", comparing.replace(key, second, first));
      }
      compared.commitTransaction();
      compared = client.newTransactionContext(
          new TransactionOptions().setTransactionType(type).setDurability(1));
      compared.beginTransaction();
      comparing = compared.getMap("values");
      for (String key : keys) {
        assertTrue(type + ": remove, the stored value", comparing.remove(key, first));
      }
      compared.commitTransaction();
      for (String key : keys) {
        assertFalse(type + ": removed", map.containsKey(key));
        map.set(key, second);
      }

      TransactionContext rolledBack = client.newTransactionContext(
          new TransactionOptions().setTransactionType(type).setDurability(1));
      rolledBack.beginTransaction();
      TransactionalMap<String, byte[]> undone = rolledBack.getMap("values");
      for (String key : keys) {
        undone.set(key, first);
        assertTrue(type + ": remove of its own value", undone.remove(key, first));
      }
      rolledBack.rollbackTransaction();
      for (String key : keys) {
        assertArrayEquals(type + ": left as it was by the rollback", second, map.get(key));
      }
    }
  }

  @Test
  public void transactionalWrites_ofAnObjectMap_areReadAsBefore() {
    String[] keys = {keyOwnedBy(members.get(0)), keyOwnedBy(members.get(1))};
    byte[] first = value(7);
    byte[] second = value(8);
    TransactionContext transaction = client.newTransactionContext();
    transaction.beginTransaction();
    TransactionalMap<String, byte[]> transactional = transaction.getMap("objects");
    for (String key : keys) {
      transactional.set(key, first);
      assertTrue(transactional.replace(key, first, second));
    }
    transaction.commitTransaction();
    for (String key : keys) {
      assertArrayEquals(second, client.<String, byte[]>getMap("objects").get(key));
    }
  }
}
