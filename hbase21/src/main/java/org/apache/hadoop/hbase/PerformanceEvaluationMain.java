package org.apache.hadoop.hbase;

import com.codahale.metrics.Snapshot;
import java.io.DataOutputStream;
import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedList;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

/**
 * Runs HBase's own {@link PerformanceEvaluation} (from hbase-mapreduce's tests jar) in a client JVM
 * of its own against a running minicluster, exactly as {@code hbase pe --nomapred ...} does
 * ({@code parseOpts}, {@code checkTable}, {@code doLocalClients}: the body of
 * {@code PerformanceEvaluation.run} for {@code --nomapred}), but keeps what {@code run} throws
 * away: each client thread's latency histogram. PE prints each thread's percentiles to its log;
 * this class merges the threads' samples to give percentiles over all operations.
 *
 * <p>Each PE thread records its latencies (microseconds) in a {@code UniformReservoir} of
 * 524,288 samples: every operation is kept while a thread does no more than that, which this
 * class checks (it fails rather than report percentiles of a sample).
 *
 * <p>Arguments: the ZooKeeper client port of the cluster (quorum: localhost), the file to write
 * every latency to (big-endian longs, microseconds, sorted), then PE's own arguments. Answers on
 * stdout with one line {@code @@ 0 ok puts=... p50=... p99=... ...} (microseconds; 0: the answer
 * to its start, in the numbering of {@code Hbase21Cluster}'s CommandChannel).
 */
public final class PerformanceEvaluationMain {
  /** PE's reservoir size (PerformanceEvaluation.TestBase.testSetup). */
  static final int RESERVOIR = 1024 * 500;

  private PerformanceEvaluationMain() {}

  public static void main(String[] args) throws Exception {
    PrintStream protocol = System.out;
    System.setOut(System.err);
    try {
      protocol.println(run(args));
    } catch (Throwable e) {
      e.printStackTrace();
      protocol.println("@@ 0 error " + e.toString().replace('\n', ' ').replace('\t', ' '));
      protocol.flush();
      System.exit(1);
    }
    protocol.flush();
    System.exit(0);
  }

  private static String run(String[] args) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set(HConstants.ZOOKEEPER_QUORUM, "localhost");
    conf.set(HConstants.ZOOKEEPER_CLIENT_PORT, args[0]);
    LinkedList<String> argv = new LinkedList<>(Arrays.asList(args).subList(2, args.length));
    PerformanceEvaluation.TestOptions opts = PerformanceEvaluation.parseOpts(argv);
    if (!argv.isEmpty() || opts.cmdName == null) {
      throw new IllegalArgumentException("PerformanceEvaluation did not take the arguments "
          + Arrays.toString(args) + " (left over: " + argv + ")");
    }
    if (!opts.nomapred) {
      throw new IllegalArgumentException("only --nomapred runs are supported");
    }
    try (Connection c = ConnectionFactory.createConnection(conf); Admin admin = c.getAdmin()) {
      PerformanceEvaluation.checkTable(admin, opts);
    }
    long t0 = System.nanoTime();
    PerformanceEvaluation.RunResult[] results = PerformanceEvaluation.doLocalClients(opts, conf);
    double seconds = (System.nanoTime() - t0) / 1e9;

    long total = 0;
    for (PerformanceEvaluation.RunResult r : results) {
      total += r.hist.getCount();
    }
    long[] all = new long[Math.toIntExact(total)];
    int n = 0;
    for (PerformanceEvaluation.RunResult r : results) {
      Snapshot s = r.hist.getSnapshot();
      long[] v = s.getValues();
      if (v.length != r.hist.getCount()) {
        throw new IllegalStateException("a PE thread recorded " + r.hist.getCount()
            + " latencies but kept " + v.length + " (reservoir of " + RESERVOIR
            + "): use fewer --rows per client so that every latency is kept");
      }
      System.arraycopy(v, 0, all, n, v.length);
      n += v.length;
    }
    Arrays.sort(all);
    try (DataOutputStream d = new DataOutputStream(new BufferedOutputStream(
        new FileOutputStream(args[1]), 1 << 16))) {
      for (long v : all) {
        d.writeLong(v);
      }
    }
    double sum = 0;
    for (long v : all) {
      sum += v;
    }
    return String.format(Locale.ROOT, "@@ 0 ok puts=%d\tthreads=%d\tseconds=%.1f\tmean=%.1f"
        + "\tp50=%d\tp99=%d\tp999=%d\tp9999=%d\tp99999=%d\tmax=%d", all.length,
        results.length, seconds, all.length == 0 ? 0 : sum / all.length, pct(all, 50),
        pct(all, 99), pct(all, 99.9), pct(all, 99.99), pct(all, 99.999),
        all.length == 0 ? 0 : all[all.length - 1]);
  }

  /** Nearest-rank percentile of sorted values. */
  static long pct(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }
}
