package dev.forkset.it.harness;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import dev.forkset.childjvm.ChildJvm;
import dev.forkset.childjvm.Jdk;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;

/**
 * Hazelcast members, each in its own JVM ({@link ChildJvm}: reaped whatever ends the test) with
 * its own heap, GC and flags, on loopback only, and a client in the test JVM. Each member's
 * output and GC log stay in {@code it/target/members/<test>/}.
 */
public final class HazelcastCluster implements AutoCloseable {
  /** How long a member may take to start. */
  private static final long START_TIMEOUT_MS = 120_000;
  /** Ports reserved per cluster beyond the member count, for members added later. */
  private static final int SPARE_PORTS = 3;

  private final Builder spec;
  private final String clusterName;
  private final int basePort;
  private final Path dir;
  private final Path configFile;
  private final List<MemberProcess> members = new ArrayList<>();
  private HazelcastInstance client;
  private HazelcastInstance liteMember;

  private HazelcastCluster(Builder spec) throws IOException {
    this.spec = spec;
    this.clusterName = spec.testName + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    this.basePort = freePortRange(spec.members + SPARE_PORTS);
    String root = System.getProperty("forkset.members.dir", "target/members");
    this.dir = Paths.get(root, spec.testName);
    Files.createDirectories(dir);
    this.configFile = dir.resolve("hazelcast-" + spec.memberSuffix() + ".yaml");
    Files.write(configFile, yaml().getBytes(StandardCharsets.UTF_8));
  }

  public static Builder builder(String testName) {
    return new Builder(testName);
  }

  /** Settings of a cluster; every member gets the same ones. */
  public static final class Builder {
    private final String testName;
    private int members = 1;
    private Flavor flavor = Flavor.CUSTOM;
    private HazelcastLine line = HazelcastLine.DEFAULT;
    private String heap = "256m";
    private final List<String> jvmArgs = new ArrayList<>();
    private Jdk jdk = Jdk.current();
    private String config = "";
    private final Map<String, String> systemProperties = new LinkedHashMap<>();
    private final Map<String, String> clientProperties = new LinkedHashMap<>();
    private boolean clientRedo;

    private Builder(String testName) {
      this.testName = testName.replaceAll("[^A-Za-z0-9_.-]", "_");
    }

    public Builder members(int n) {
      this.members = n;
      return this;
    }

    public Builder flavor(Flavor f) {
      this.flavor = f;
      return this;
    }

    /** The upstream line the members run (its stock or custom jar, per the flavor). */
    public Builder line(HazelcastLine l) {
      this.line = l;
      return this;
    }

    /** -Xms and -Xmx of every member, such as "256m". */
    public Builder heap(String h) {
      this.heap = h;
      return this;
    }

    public Builder jvmArgs(String... args) {
      jvmArgs.addAll(Arrays.asList(args));
      return this;
    }

    /** The JDK the members run on; null means the test JVM's own. */
    public Builder jdk(Jdk jdk) {
      this.jdk = jdk == null ? Jdk.current() : jdk;
      return this;
    }

    /**
     * YAML for hazelcast.yaml: either a full "hazelcast:" document or the lines that go under it
     * (map:, properties:, ...). Do not set cluster-name or network: the harness owns them.
     */
    public Builder config(String yaml) {
      this.config = yaml == null ? "" : yaml;
      return this;
    }

    public Builder systemProperty(String key, String value) {
      systemProperties.put(key, value);
      return this;
    }

    /**
     * Whether the test's client resends an operation whose connection closed before the answer
     * came ({@code ClientNetworkConfig.setRedoOperation}); off by default, as in Hazelcast.
     */
    public Builder clientRedoOperation(boolean redo) {
      this.clientRedo = redo;
      return this;
    }

    /**
     * A property of the test's client, such as
     * {@code hazelcast.client.operation.fail.on.indeterminate.state}.
     */
    public Builder clientProperty(String key, String value) {
      clientProperties.put(key, value);
      return this;
    }

    /** "stock" or "custom", then the line's version when it is not the default line. */
    private String memberSuffix() {
      String f = flavor.name().toLowerCase();
      return line == HazelcastLine.DEFAULT ? f : f + "-" + line.version();
    }

    /**
     * Starts one member that must fail to start, and returns it once its JVM has exited (its log
     * stays readable). Fails if the member reports STARTED, or if its JVM is still running after
     * {@code timeoutMs}: a half-started member.
     */
    public MemberProcess startExpectingExit(long timeoutMs) throws Exception {
      members = 1;
      try (HazelcastCluster cluster = new HazelcastCluster(this)) {
        MemberProcess m = cluster.launch();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (m.isAlive() && System.currentTimeMillis() < deadline) {
          if (m.logText().contains(" is STARTED")) {
            throw new AssertionError(m.name() + " started, but it was expected to fail\n"
                + m.logTail(20));
          }
          Thread.sleep(200);
        }
        if (m.isAlive()) {
          throw new AssertionError(m.name() + " failed to start but its JVM is still running after "
              + timeoutMs + " ms (a half-started member)\n" + m.logTail(40));
        }
        return m;
      }
    }

    public HazelcastCluster start() throws Exception {
      HazelcastCluster cluster = new HazelcastCluster(this);
      boolean ok = false;
      try {
        for (int i = 0; i < members; i++) {
          cluster.launch();
        }
        for (MemberProcess m : cluster.members) {
          m.awaitStarted(START_TIMEOUT_MS);
        }
        ok = true;
        return cluster;
      } finally {
        if (!ok) {
          cluster.close();
        }
      }
    }
  }

  /** Starts one more member with the same settings (after a kill, say) and waits for it. */
  public MemberProcess addMember() throws Exception {
    MemberProcess m = launch();
    m.awaitStarted(START_TIMEOUT_MS);
    return m;
  }

  /**
   * A member that is not the cluster's master (the oldest member), so that its graceful shutdown
   * is handled, and logged, by another member.
   */
  public MemberProcess nonMaster() {
    int masterPort = client().getCluster().getMembers().iterator().next().getAddress().getPort();
    for (int i = members.size() - 1; i >= 0; i--) {
      MemberProcess m = members.get(i);
      if (m.isAlive() && m.port() != masterPort) {
        return m;
      }
    }
    throw new IllegalStateException("no live member besides the master");
  }

  public MemberProcess member(int i) {
    return members.get(i);
  }

  public List<MemberProcess> members() {
    return Collections.unmodifiableList(members);
  }

  public String clusterName() {
    return clusterName;
  }

  /** A client connected over loopback to the members of this cluster. */
  public synchronized HazelcastInstance client() {
    if (client == null) {
      ClientConfig config = new ClientConfig();
      config.setClusterName(clusterName);
      config.setProperty("hazelcast.phone.home.enabled", "false");
      spec.clientProperties.forEach(config::setProperty);
      config.getNetworkConfig().setRedoOperation(spec.clientRedo);
      for (int p = basePort; p < basePort + spec.members + SPARE_PORTS; p++) {
        config.getNetworkConfig().addAddress("127.0.0.1:" + p);
      }
      config.getConnectionStrategyConfig().getConnectionRetryConfig().setClusterConnectTimeoutMillis(60_000);
      client = HazelcastClient.newHazelcastClient(config);
    }
    return client;
  }

  /**
   * A lite member (no partitions, no data) of this cluster in the test's JVM, on a port outside
   * the members' range. A listener it registers is cluster-wide: the members hand it to a member
   * that joins as part of the join, before that member receives any partition, whereas a
   * client's listener reaches a new member only once the client has connected to it (events a
   * new member publishes before then never reach the client). Only for members of the test's own
   * Hazelcast version (the 5.7.0 line).
   */
  public synchronized HazelcastInstance liteMember() throws IOException {
    if (liteMember == null) {
      Config config = new Config();
      config.setClusterName(clusterName);
      config.getJetConfig().setEnabled(false);
      liteMember = startLiteMember(config);
    }
    return liteMember;
  }

  /**
   * A lite member like {@link #liteMember()}, but with the members' own configuration (the same
   * YAML: their maps and properties; the eviction module is on the test's class path too) and
   * {@code properties} on top: a member-side caller of the cluster's maps, such as a member's own
   * putAll. Only one lite member per cluster.
   */
  public synchronized HazelcastInstance liteMemberWithMembersConfig(Map<String, String> properties)
      throws IOException {
    if (liteMember != null) {
      throw new IllegalStateException("this cluster has a lite member already");
    }
    Config config = new com.hazelcast.config.InMemoryYamlConfig(yaml());
    properties.forEach(config::setProperty);
    liteMember = startLiteMember(config);
    return liteMember;
  }

  private HazelcastInstance startLiteMember(Config config) throws IOException {
    config.setLiteMember(true);
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.shutdownhook.enabled", "false");
    config.getNetworkConfig().setPort(freePortRange(1)).setPortAutoIncrement(false);
    config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    JoinConfig join = config.getNetworkConfig().getJoin();
    join.getAutoDetectionConfig().setEnabled(false);
    join.getMulticastConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).clear();
    for (int p = basePort; p < basePort + spec.members + SPARE_PORTS; p++) {
      join.getTcpIpConfig().addMember("127.0.0.1:" + p);
    }
    return Hazelcast.newHazelcastInstance(config);
  }

  /** A mark in every member's log, for {@link #exceptionsInLogs(Map)}. */
  public Map<MemberProcess, Integer> logMarks() {
    Map<MemberProcess, Integer> marks = new LinkedHashMap<>();
    for (MemberProcess m : members) {
      marks.put(m, m.logMark());
    }
    return marks;
  }

  /**
   * The failures ({@link MemberProcess#exceptionsInLog}) every member logged after its mark (from
   * its start for members started after the marks were taken), each line headed by the member.
   */
  public List<String> exceptionsInLogs(Map<MemberProcess, Integer> marks) {
    List<String> all = new ArrayList<>();
    for (MemberProcess m : members) {
      for (String line : m.exceptionsInLog(marks.getOrDefault(m, 0))) {
        all.add(m.name() + ": " + line);
      }
    }
    return all;
  }

  /**
   * Waits until the cluster is safe (no migration pending, every backup replica in sync with its
   * owner: {@code PartitionService.isClusterSafe()} on a live member, read through JMX) and
   * returns how long that took; fails after {@code timeout}. The members need
   * {@code hazelcast.jmx: true}.
   */
  public Duration awaitClusterSafe(Duration timeout) throws Exception {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    ObjectName pattern =
        new ObjectName("com.hazelcast:type=HazelcastInstance.PartitionServiceMBean,*");
    while (true) {
      for (MemberProcess m : members) {
        if (!m.isAlive()) {
          continue;
        }
        MBeanServerConnection c = m.jmx();
        Set<ObjectName> names = c.queryNames(pattern, null);
        if (names.isEmpty()) {
          throw new IllegalStateException(m.name() + " has no PartitionServiceMBean: start the"
              + " cluster with hazelcast.jmx: true under properties:");
        }
        if (Boolean.TRUE.equals(c.getAttribute(names.iterator().next(), "isClusterSafe"))) {
          return Duration.ofNanos(System.nanoTime() - start);
        }
        break;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the cluster of " + spec.testName + " is not safe (migrations"
            + " pending or backups out of sync) " + timeout + " after it was asked to be");
      }
      Thread.sleep(200);
    }
  }

  /** Fails with the name, exit code and log tail of every member that is not alive. */
  public void assertAllAlive() {
    StringBuilder dead = new StringBuilder();
    for (MemberProcess m : members) {
      try {
        m.assertAlive();
      } catch (AssertionError e) {
        dead.append(e.getMessage()).append("\n");
      }
    }
    if (dead.length() > 0) {
      throw new AssertionError("Hazelcast member(s) died in " + spec.testName + ":\n" + dead);
    }
  }

  private MemberProcess launch() throws IOException {
    String name = "member-" + (members.size() + 1) + "-" + spec.memberSuffix();
    Path gcLog = dir.resolve(name + "-gc.log");
    List<Path> cp = new ArrayList<>(Arrays.asList(spec.flavor.jars(spec.line)));
    // MemberMain (release 8, for members down to JDK 8), then the test classes a member may
    // need (entry processors; release 11, loaded only by the members that use them).
    cp.add(Paths.get(System.getProperty("forkset.member.classes", "target/classes")));
    cp.add(Paths.get(System.getProperty("forkset.harness.classes", "target/test-classes")));
    ChildJvm.Builder jvm = ChildJvm.builder(name, MemberMain.class.getName()).jdk(spec.jdk)
        .heap(spec.heap).jvmArgs("-XX:+ExitOnOutOfMemoryError").gcLog(gcLog)
        .jvmArgs(spec.jvmArgs).classPath(cp).dir(dir);
    if (!spec.jdk.isJava8()) {
      // Hazelcast's own recommended flags (JDK 8 has no modules and rejects them).
      jvm.jvmArgs("--add-modules", "java.se",
          "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
          "--add-opens", "java.base/java.lang=ALL-UNNAMED",
          "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-opens", "java.management/sun.management=ALL-UNNAMED",
          "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED");
    }
    jvm.systemProperty("java.net.preferIPv4Stack", "true")
        .systemProperty("hazelcast.config", configFile.toAbsolutePath().toString())
        .systemProperty("hazelcast.phone.home.enabled", "false")
        .systemProperty("hazelcast.shutdownhook.policy", "GRACEFUL")
        .systemProperty("hazelcast.logging.type", "jdk");
    spec.systemProperties.forEach(jvm::systemProperty);
    MemberProcess m = new MemberProcess(jvm.start(), gcLog);
    members.add(m);
    return m;
  }

  private String yaml() {
    String user = spec.config.trim().isEmpty() ? "" : spec.config.replace("\r\n", "\n");
    if (user.startsWith("hazelcast:")) {
      user = user.substring(user.indexOf('\n') + 1);
    } else if (!user.isEmpty() && !Character.isWhitespace(user.charAt(0))) {
      user = "  " + user.replace("\n", "\n  ");
    }
    int last = basePort + spec.members + SPARE_PORTS - 1;
    return "hazelcast:\n"
        + "  cluster-name: " + clusterName + "\n"
        + "  network:\n"
        + "    port:\n"
        + "      auto-increment: true\n"
        + "      port-count: " + (spec.members + SPARE_PORTS) + "\n"
        + "      port: " + basePort + "\n"
        + "    interfaces:\n"
        + "      enabled: true\n"
        + "      interfaces:\n"
        + "        - 127.0.0.1\n"
        + "    join:\n"
        + "      auto-detection:\n"
        + "        enabled: false\n"
        + "      multicast:\n"
        + "        enabled: false\n"
        + "      tcp-ip:\n"
        + "        enabled: true\n"
        + "        member-list:\n"
        + memberList(last)
        + user + (user.endsWith("\n") || user.isEmpty() ? "" : "\n");
  }

  private String memberList(int last) {
    StringBuilder sb = new StringBuilder();
    for (int p = basePort; p <= last; p++) {
      sb.append("          - 127.0.0.1:").append(p).append("\n");
    }
    return sb.toString();
  }

  private static int freePortRange(int count) throws IOException {
    for (int attempt = 0; attempt < 200; attempt++) {
      int base = 20_000 + ThreadLocalRandom.current().nextInt(30_000);
      boolean free = true;
      for (int p = base; p < base + count && free; p++) {
        try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
          s.setReuseAddress(true);
        } catch (IOException e) {
          free = false;
        }
      }
      if (free) {
        return base;
      }
    }
    throw new IOException("No range of " + count + " free loopback ports found");
  }

  @Override
  public void close() {
    if (client != null) {
      try {
        client.shutdown();
      } catch (RuntimeException ignored) {
        // members may be gone already
      }
      client = null;
    }
    if (liteMember != null) {
      try {
        liteMember.getLifecycleService().terminate();
      } catch (RuntimeException ignored) {
        // best effort
      }
      liteMember = null;
    }
    for (MemberProcess m : members) {
      m.reap();
    }
  }
}
