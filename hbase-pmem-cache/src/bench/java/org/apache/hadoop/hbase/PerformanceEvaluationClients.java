package org.apache.hadoop.hbase;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;

/**
 * Runs a PerformanceEvaluation command with {@code --nomapred} through PE's own code path, the
 * one {@code hbase pe --nomapred <command> <clients>} takes after creating the table
 * ({@code parseOpts}, then {@code doLocalClients}: one thread and connection set per client), and
 * returns each client's duration and latency samples, which {@code hbase pe} only logs. Lives in
 * PE's package because both methods are package-private.
 */
public final class PerformanceEvaluationClients {
  private PerformanceEvaluationClients() {}

  /** One client thread of a run. */
  public static final class Client {
    /** Wall time of the client's loop, in milliseconds. */
    public final long durationMs;
    /** Requests the client timed (PE's latency histogram count). */
    public final long ops;
    /** PE's latency samples of the client, in microseconds (all of them below 512,000 ops). */
    public final long[] latencyMicros;

    Client(long durationMs, long ops, long[] latencyMicros) {
      this.durationMs = durationMs;
      this.ops = ops;
      this.latencyMicros = latencyMicros;
    }
  }

  /**
   * Runs PE with {@code args} (options, command, client count; {@code --nomapred} required)
   * against the cluster of {@code conf}; the table must exist.
   */
  public static List<Client> run(Configuration conf, String... args) throws Exception {
    LinkedList<String> argv = new LinkedList<>(Arrays.asList(args));
    PerformanceEvaluation.TestOptions opts = PerformanceEvaluation.parseOpts(argv);
    if (!argv.isEmpty() || opts.getCmdName() == null) {
      throw new IllegalArgumentException("Not a PerformanceEvaluation command line: "
          + Arrays.toString(args));
    }
    if (!opts.isNomapred()) {
      throw new IllegalArgumentException("Only --nomapred runs are supported: "
          + Arrays.toString(args));
    }
    List<Client> out = new ArrayList<>();
    for (PerformanceEvaluation.RunResult r : PerformanceEvaluation.doLocalClients(opts, conf)) {
      out.add(new Client(r.duration, r.hist.getCount(), r.hist.getSnapshot().getValues()));
    }
    return out;
  }
}
