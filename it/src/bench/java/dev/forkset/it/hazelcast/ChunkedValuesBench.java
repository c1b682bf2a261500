package dev.forkset.it.hazelcast;

import com.hazelcast.map.IMap;
import dev.forkset.bench.Charts;
import dev.forkset.bench.ResultTable;
import dev.forkset.childjvm.Jdk;
import dev.forkset.childjvm.Jdks;
import dev.forkset.it.harness.Flavor;
import dev.forkset.it.harness.HazelcastCluster;
import dev.forkset.it.harness.HazelcastLine;
import dev.forkset.it.harness.MemberProcess;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code EvictionBench -Dbench.only=chunked} (1.) and {@code -Dbench.only=chunked5m} (2.): chunked
 * stored copies (issue 21, point 4), every number of a part from one run.
 * <ol>
 * <li>Entries held: one member, -Xmx256m, USED_HEAP_SIZE 150 MB, 100 puts of one value size
 *     ({@link ChunkedLargeValuesIT#held}), the fork's member with
 *     {@code hazelcast.map.eviction.chunked.values: off} (one array per value, as stock stores
 *     it) and then {@code auto}, per collector and value size; and seed scenario 3
 *     ({@link HumongousStoredCopiesIT#run}): the 16 MB values held after 1 MB ones and the
 *     humongous regions G1 reports after a full GC.
 * <li>Throughput at 5 MB: one member, -Xmx1g (so that the stock member, which counts a 5 MB
 *     value as 5 MB where G1 holds 8, does not run out of memory), G1 4 MB regions,
 *     USED_HEAP_SIZE 150 MB, one client thread; {@value #WARM} puts fill the map, then
 *     {@value #PUTS} timed puts of new keys (the map evicting) and {@value #GETS} timed gets of
 *     the keys it holds. Stock 5.7.0, the fork with chunking off and the fork with chunking on
 *     (the default), {@value #ROUNDS} rounds, the order rotating. Beside the rates, the bytes
 *     the member's threads allocated per put and per get
 *     ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes} over every member
 *     thread, read through JMX before and after each timed phase) and the member's GC time per
 *     operation (the {@code CollectionTime} of its collectors over the same phase).
 * </ol>
 * Charts: docs/img/hazelcast-chunked-entries.png, docs/img/hazelcast-chunked-throughput.png.
 */
final class ChunkedValuesBench {
  private static final int MB = 1 << 20;
  private static final int VALUE = 5 * MB;
  private static final int LIMIT_MB = 150;
  static final int WARM = 60;
  static final int PUTS = 200;
  static final int GETS = 200;
  static final int ROUNDS = 3;

  private final StringBuilder report;

  ChunkedValuesBench(StringBuilder report) {
    this.report = report;
  }

  /** One case of the entries-held comparison. */
  private static final class Case {
    final String label;
    final String shortLabel;
    final Jdk jdk;
    final String[] gc;
    final int valueBytes;

    Case(String label, String shortLabel, Jdk jdk, String[] gc, int valueBytes) {
      this.label = label;
      this.shortLabel = shortLabel;
      this.jdk = jdk;
      this.gc = gc;
      this.valueBytes = valueBytes;
    }
  }

  void entriesHeld(Path img) throws Exception {
    Jdk jdk25 = Jdks.jdk25();
    String[] zgc = {"-XX:+UseZGC"};
    List<Case> cases = Arrays.asList(
        new Case("G1 4 MB regions, JDK 17, 5 MB values (seed scenario 1)", "G1 5 MB", null,
            ChunkedLargeValuesIT.G1_4M, 5 * MB),
        new Case("G1 4 MB regions, JDK 17, 2 MB + 1 KB values", "G1 2 MB+1K", null,
            ChunkedLargeValuesIT.G1_4M, 2 * MB + 1024),
        new Case("ZGC, JDK 17, 2 MB + 1 KB values", "ZGC17 2 MB+1K", null, zgc,
            2 * MB + 1024),
        new Case("ZGC, JDK 17, 5 MB values", "ZGC17 5 MB", null, zgc, 5 * MB),
        new Case("generational ZGC, JDK 25, 2 MB + 1 KB values", "ZGC25 2 MB+1K",
            jdk25, zgc, 2 * MB + 1024),
        new Case("generational ZGC, JDK 25, 5 MB values", "ZGC25 5 MB", jdk25, zgc,
            5 * MB));
    ResultTable table = new ResultTable("case", "one array (`chunked.values: off`)",
        "chunked (`auto`)", "chunked / one array");
    List<String> categories = new ArrayList<>();
    List<Double> off = new ArrayList<>();
    List<Double> on = new ArrayList<>();
    int n = 0;
    for (Case c : cases) {
      String name = "bench-chunked-" + n++;
      int whole = ChunkedLargeValuesIT.held(name + "-off", HazelcastLine.DEFAULT, c.jdk, c.gc,
          c.valueBytes, "off");
      int chunked = ChunkedLargeValuesIT.held(name + "-auto", HazelcastLine.DEFAULT, c.jdk, c.gc,
          c.valueBytes, "auto");
      System.out.printf("[bench chunked] %s: %d entries one array, %d chunked%n", c.label, whole,
          chunked);
      table.row(c.label, whole, chunked, ResultTable.num(chunked / (double) whole, 2) + " x");
      categories.add(c.shortLabel);
      off.add((double) whole);
      on.add((double) chunked);
    }
    HumongousStoredCopiesIT.Result s3off = HumongousStoredCopiesIT.run("bench-s3-off", "off");
    HumongousStoredCopiesIT.Result s3on = HumongousStoredCopiesIT.run("bench-s3-auto", "auto");
    table.row("G1 4 MB regions, JDK 17, -Xmx" + HumongousStoredCopiesIT.HEAP
        + ": 16 MB values after 1 MB ones (seed scenario 3)",
        s3off.sixteenHeld, s3on.sixteenHeld,
        ResultTable.num(s3on.sixteenHeld / (double) s3off.sixteenHeld, 2) + " x");
    categories.add("G1 16 MB (sc. 3)");
    off.add((double) s3off.sixteenHeld);
    on.add((double) s3on.sixteenHeld);
    report.append(String.format("%n## Entries held, one array vs chunked stored copies (one"
        + " member, USED_HEAP_SIZE %d MB, the fork's member with `chunked.values: off`, then"
        + " `auto`; -Xmx256m, 100 puts, unless the case says otherwise)%n%n", LIMIT_MB))
        .append(table.toMarkdown())
        .append(String.format("%n### Seed scenario 3: humongous regions after a full GC (G1 4 MB"
            + " regions, -Xmx%s, `gc+heap` log of the member)%n%n", HumongousStoredCopiesIT.HEAP))
        .append(new ResultTable("", "one array (`off`)", "chunked (`auto`)")
            .row("100 MB value held after 16,000 x 10 KB", s3off.humongousAfterHundred,
                s3on.humongousAfterHundred)
            .row("16 MB values held after 160 x 1 MB (12 put)", s3off.humongousAfterSixteen,
                s3on.humongousAfterSixteen)
            .toMarkdown());
    Map<String, double[]> series = new LinkedHashMap<>();
    series.put("one array (chunked.values: off)", unbox(off));
    series.put("chunked (auto)", unbox(on));
    Charts.bar(img.resolve("hazelcast-chunked-entries.png").toFile(),
        "Entries held in a 150 MB USED_HEAP_SIZE map (G1: 4 MB regions; ZGC17/25: JDK 17 / 25)",
        "entries held", categories, series);
  }

  /** What one timed run measured. */
  private static final class Rates {
    double puts;
    double gets;
    double allocPerPut;
    double allocPerGet;
    double gcMsPerPut;
    double gcMsPerGet;
    double cpuMsPerPut;
    double cpuMsPerGet;
    int entries;
  }

  void throughput(Path img) throws Exception {
    String[] labels = {"stock 5.7.0", "fork, chunking off", "fork, chunking on"};
    Flavor[] flavors = {Flavor.STOCK, Flavor.CUSTOM, Flavor.CUSTOM};
    String[] chunked = {null, "off", "auto"};
    Rates[][] runs = new Rates[labels.length][ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
      for (int k = 0; k < labels.length; k++) {
        int f = (k + r) % labels.length;
        runs[f][r] = throughputRun(flavors[f], chunked[f], r);
        System.out.printf("[bench chunked 5m] round %d %s: %.1f puts/s, %.1f gets/s, %.1f MB"
            + " allocated per put, %.1f per get, GC %.1f ms per put, %.1f per get, CPU %.2f ms per"
            + " put, %.2f per get, %d entries%n",
            r + 1, labels[f], runs[f][r].puts, runs[f][r].gets, runs[f][r].allocPerPut / MB,
            runs[f][r].allocPerGet / MB, runs[f][r].gcMsPerPut, runs[f][r].gcMsPerGet,
            runs[f][r].cpuMsPerPut, runs[f][r].cpuMsPerGet, runs[f][r].entries);
      }
    }
    ResultTable rounds = new ResultTable("round", "stock puts/s", "fork (on) puts/s",
        "fork / stock", "stock gets/s", "fork (on) gets/s", "fork / stock", "fork (off) puts/s",
        "fork (off) gets/s");
    for (int r = 0; r < ROUNDS; r++) {
      Rates s = runs[0][r];
      Rates o = runs[1][r];
      Rates c = runs[2][r];
      rounds.row(r + 1, ResultTable.num(s.puts, 1), ResultTable.num(c.puts, 1),
          ResultTable.num(c.puts / s.puts, 2), ResultTable.num(s.gets, 1),
          ResultTable.num(c.gets, 1), ResultTable.num(c.gets / s.gets, 2),
          ResultTable.num(o.puts, 1), ResultTable.num(o.gets, 1));
    }
    ResultTable medians = new ResultTable("member", "puts/s (median)", "gets/s (median)",
        "allocated per put (median)", "allocated per get (median)", "GC ms per put (median)",
        "GC ms per get (median)", "member CPU ms per put (median)",
        "member CPU ms per get (median)", "entries held");
    double[] putMedian = new double[labels.length];
    double[] getMedian = new double[labels.length];
    for (int k = 0; k < labels.length; k++) {
      double[] p = new double[ROUNDS];
      double[] g = new double[ROUNDS];
      double[] ap = new double[ROUNDS];
      double[] ag = new double[ROUNDS];
      double[] gp = new double[ROUNDS];
      double[] gg = new double[ROUNDS];
      double[] cp = new double[ROUNDS];
      double[] cg = new double[ROUNDS];
      int[] e = new int[ROUNDS];
      for (int r = 0; r < ROUNDS; r++) {
        p[r] = runs[k][r].puts;
        g[r] = runs[k][r].gets;
        ap[r] = runs[k][r].allocPerPut;
        ag[r] = runs[k][r].allocPerGet;
        gp[r] = runs[k][r].gcMsPerPut;
        gg[r] = runs[k][r].gcMsPerGet;
        cp[r] = runs[k][r].cpuMsPerPut;
        cg[r] = runs[k][r].cpuMsPerGet;
        e[r] = runs[k][r].entries;
      }
      putMedian[k] = median(p);
      getMedian[k] = median(g);
      medians.row(labels[k], ResultTable.num(putMedian[k], 1), ResultTable.num(getMedian[k], 1),
          ResultTable.num(median(ap) / MB, 2) + " MB", ResultTable.num(median(ag) / MB, 2) + " MB",
          ResultTable.num(median(gp), 1), ResultTable.num(median(gg), 1),
          ResultTable.num(median(cp), 2), ResultTable.num(median(cg), 2), Arrays.toString(e));
    }
    report.append(String.format("%n## Puts and gets per second at 5 MB, stock vs fork (one"
        + " member, -Xmx1g, G1 4 MB regions, USED_HEAP_SIZE %d MB, one client thread; %d puts"
        + " fill the map, then %d timed puts of new keys and %d timed gets of held keys; %d"
        + " rounds, order rotating)%n%n", LIMIT_MB, WARM, PUTS, GETS, ROUNDS))
        .append(medians.toMarkdown()).append('\n')
        .append(rounds.toMarkdown())
        .append(String.format("%nfork (on) / stock, medians: puts %.2f, gets %.2f%n",
            putMedian[2] / putMedian[0], getMedian[2] / getMedian[0]));
    Map<String, double[]> series = new LinkedHashMap<>();
    for (int k = 0; k < labels.length; k++) {
      series.put(labels[k], new double[] {putMedian[k], getMedian[k]});
    }
    Charts.bar(img.resolve("hazelcast-chunked-throughput.png").toFile(),
        "5 MB values, one member, G1 4 MB regions: operations/s (median of " + ROUNDS
            + " rounds)", "operations/s", Arrays.asList("puts/s", "gets/s"), series);
  }

  private static Rates throughputRun(Flavor flavor, String chunked, int round) throws Exception {
    String extra = chunked == null ? "" : "  hazelcast.map.eviction.chunked.values: " + chunked + "\n";
    String name = "bench-chunked-5m-" + flavor.name().toLowerCase()
        + (chunked == null ? "" : "-" + chunked) + "-" + round;
    try (HazelcastCluster c = HazelcastCluster.builder(name).members(1).flavor(flavor)
        .heap("1g").jvmArgs(ChunkedLargeValuesIT.G1_4M).jvmArgs(profilingArgs(name))
        .config(EvictionMaps.usedHeapMap("tput5m", LIMIT_MB, 0, extra)).start()) {
      MemberProcess m = c.member(0);
      IMap<Integer, byte[]> map = c.client().getMap("tput5m");
      byte[] v = new byte[VALUE];
      for (int i = 0; i < WARM; i++) {
        map.set(i, v);
      }
      Rates r = new Rates();
      Map<Long, Long> before = allocated(m);
      long gc = gcMillis(m);
      long cpu = cpuNanos(m);
      long t = System.nanoTime();
      for (int i = WARM; i < WARM + PUTS; i++) {
        map.set(i, v);
      }
      r.puts = PUTS / ((System.nanoTime() - t) / 1e9);
      r.cpuMsPerPut = (cpuNanos(m) - cpu) / 1e6 / PUTS;
      r.gcMsPerPut = (gcMillis(m) - gc) / (double) PUTS;
      r.allocPerPut = delta(before, allocated(m)) / (double) PUTS;
      EvictionWaits.drain(c.client(), map);
      List<Integer> keys = new ArrayList<>(map.keySet());
      r.entries = keys.size();
      before = allocated(m);
      gc = gcMillis(m);
      cpu = cpuNanos(m);
      t = System.nanoTime();
      long bytes = 0;
      for (int i = 0; i < GETS; i++) {
        byte[] got = map.get(keys.get(i % keys.size()));
        bytes += got == null ? 0 : got.length;
      }
      r.gets = GETS / ((System.nanoTime() - t) / 1e9);
      r.cpuMsPerGet = (cpuNanos(m) - cpu) / 1e6 / GETS;
      r.gcMsPerGet = (gcMillis(m) - gc) / (double) GETS;
      r.allocPerGet = delta(before, allocated(m)) / (double) GETS;
      if (bytes < (long) GETS * VALUE) {
        throw new AssertionError(name + ": a get found no value (" + bytes + " bytes read)");
      }
      c.assertAllAlive();
      if (profilingArgs(name).length > 0) {
        // A recording is written at an orderly exit only (dumponexit), not at the harness's kill.
        m.shutdownGracefully(java.time.Duration.ofSeconds(60));
      }
      return r;
    }
  }

  /**
   * Extra member JVM flags for profiling a run, from {@code -Dbench.member.jvmArgs} (words
   * separated by spaces; {@code {run}} becomes the run's name, e.g.
   * {@code -XX:StartFlightRecording=filename=/tmp/{run}.jfr}): every flavor gets the same flags.
   */
  private static String[] profilingArgs(String run) {
    String args = System.getProperty("bench.member.jvmArgs", "").trim();
    return args.isEmpty() ? new String[0] : args.replace("{run}", run).split("\\s+");
  }

  /**
   * The CPU time the member's process has used so far (every thread: the operation and I/O
   * threads, and the collector's workers, which the pauses and the concurrent cycles run on).
   */
  private static long cpuNanos(MemberProcess m) throws Exception {
    return ManagementFactory.newPlatformMXBeanProxy(m.jmx(),
        ManagementFactory.OPERATING_SYSTEM_MXBEAN_NAME,
        com.sun.management.OperatingSystemMXBean.class).getProcessCpuTime();
  }

  /**
   * The member's GC time so far: the {@code CollectionTime} of each of its collectors (G1:
   * young and old pauses; the concurrent cycles' work outside pauses is not in it), summed.
   */
  private static long gcMillis(MemberProcess m) throws Exception {
    long sum = 0;
    for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getPlatformMXBeans(
        m.jmx(), java.lang.management.GarbageCollectorMXBean.class)) {
      sum += Math.max(0, gc.getCollectionTime());
    }
    return sum;
  }

  /** Bytes allocated so far by each live thread of the member, by thread id. */
  private static Map<Long, Long> allocated(MemberProcess m) throws Exception {
    com.sun.management.ThreadMXBean threads = ManagementFactory.newPlatformMXBeanProxy(m.jmx(),
        ManagementFactory.THREAD_MXBEAN_NAME, com.sun.management.ThreadMXBean.class);
    long[] ids = threads.getAllThreadIds();
    long[] bytes = threads.getThreadAllocatedBytes(ids);
    Map<Long, Long> result = new HashMap<>();
    for (int i = 0; i < ids.length; i++) {
      if (bytes[i] >= 0) {
        result.put(ids[i], bytes[i]);
      }
    }
    return result;
  }

  /**
   * What the threads allocated between two readings (a thread that started in between counts
   * from 0; one that ended in between is lost, and member threads are pooled).
   */
  private static long delta(Map<Long, Long> before, Map<Long, Long> after) {
    long sum = 0;
    for (Map.Entry<Long, Long> e : after.entrySet()) {
      sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
    }
    return sum;
  }

  private static double[] unbox(List<Double> values) {
    double[] result = new double[values.size()];
    for (int i = 0; i < result.length; i++) {
      result[i] = values.get(i);
    }
    return result;
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
