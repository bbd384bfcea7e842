package dev.profold.benchmarks;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.fold.FoldResult;
import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.ingest.InvalidDeltaException;
import dev.profold.collector.ingest.StreamDecoder;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.scheme.SchemeException;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.proto.v1.Delta;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Steady-state folding: one decoded delta of {@code groups} entries (one measurement each, with an
 * 8-value exponential histogram) is applied again and again under increasing sequence numbers, so
 * every entry merges into an existing group's cumulative aggregate and into its aggregate of the
 * current window. The first application (creating the groups) happens in setup.
 *
 * <p>The score is per entry-merge. {@code @OperationsPerInvocation} has to be a compile-time
 * constant, so each invocation applies the delta {@value #ENTRIES_PER_INVOCATION}{@code / groups}
 * times: always {@value #ENTRIES_PER_INVOCATION} entry-merges per invocation.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class FoldBenchmark {
  /** Entry-merges per benchmark invocation; every {@code groups} value must divide it. */
  static final int ENTRIES_PER_INVOCATION = 100_000;

  @Param({"1000", "100000"})
  public int groups;

  /** The collector's histogram resolution: 3 is its default, 20 keeps everything. */
  @Param({"3", "20"})
  public int histogramMaxScale;

  /**
   * Schemes folded: 1 is the built-in scheme alone; 5 adds four CalQL schemes (by path, by service
   * and kind, a WHERE that matches nothing here, one group per service), see {@link #SCHEMES}.
   */
  @Param({"1", "5"})
  public int schemes;

  /** The four schemes added to the built-in one when {@code schemes} is 5. */
  static final List<String[]> SCHEMES =
      List.of(
          new String[] {"by_path", "SELECT sum(time), avg(time) GROUP BY path"},
          new String[] {"by_kind", "SELECT count(), max(time) GROUP BY service, kind"},
          new String[] {"io_only", "SELECT sum(time) WHERE kind=io GROUP BY path"},
          new String[] {"p99", "SELECT quantile(time, 0.99) GROUP BY service"});

  private FoldEngine engine;
  private DecodedDelta decoded;
  private int deltasPerInvocation;
  private long sequence;

  @Setup(Level.Trial)
  public void setUp() throws InvalidDeltaException {
    if (groups <= 0 || ENTRIES_PER_INVOCATION % groups != 0) {
      throw new IllegalArgumentException(
          "groups must divide " + ENTRIES_PER_INVOCATION + ", was " + groups);
    }
    deltasPerInvocation = ENTRIES_PER_INVOCATION / groups;
    GlobalDictionary dictionary = new GlobalDictionary(10_000_000);
    Delta delta = BenchData.delta(groups, 1, true);
    decoded = new StreamDecoder(dictionary).decode(delta, delta.getSerializedSize());
    verify(newEngine(dictionary), decoded, groups);
    engine = newEngine(dictionary);
    FoldResult first = engine.apply(decoded);
    if (first.outcome() != FoldResult.Outcome.APPLIED || first.overflowed() != 0) {
      throw new IllegalStateException("first delta not applied cleanly: " + first);
    }
    sequence = decoded.sequence;
    // Groups are created once, in setup, among the garbage their creation makes. A live collector
    // creates them over time and its garbage collector compacts them; do the same here so that
    // the heap layout, not the fold, does not decide the score.
    System.gc();
  }

  private FoldEngine newEngine(GlobalDictionary dictionary) {
    List<SchemeDefinition> defs = new ArrayList<>();
    defs.add(SchemeDefinition.builtIn(Duration.ofNanos(BenchData.INTERVAL_NANOS), groups));
    for (String[] s : SCHEMES.subList(0, schemes - 1)) {
      try {
        defs.add(
            SchemeDefinition.compile(
                s[0], s[1], Duration.ofNanos(BenchData.INTERVAL_NANOS), groups, 10));
      } catch (SchemeException e) {
        throw new IllegalStateException(e);
      }
    }
    return new FoldEngine(
        new FoldConfig(BenchData.INTERVAL_NANOS, 5, groups, histogramMaxScale, defs),
        dictionary,
        BenchData.CLOCK,
        new CollectorMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)));
  }

  /**
   * Checks, on a throwaway engine and outside any measurement, that replaying the delta reaches
   * every group both in the cumulative state and in the current window.
   */
  private static void verify(FoldEngine engine, DecodedDelta decoded, int groups) {
    int applications = 3;
    for (int i = 1; i <= applications; i++) {
      FoldResult r = engine.apply(decoded.withSequence(i));
      if (r.outcome() != FoldResult.Outcome.APPLIED || r.overflowed() != 0) {
        throw new IllegalStateException("verification delta " + i + " not applied: " + r);
      }
    }
    engine.closeAll();
    long expected = (long) applications * BenchData.VALUES_PER_ENTRY;
    for (SchemeSnapshot scheme : engine.snapshot().schemes()) {
      if (scheme.scheme().equals("region") || scheme.scheme().equals("by_path")) {
        check(scheme.scheme() + " cumulative", scheme.cumulative(), groups, expected);
        check(scheme.scheme() + " window", scheme.lastInterval(), groups, expected);
      }
    }
  }

  private static void check(String what, List<SeriesSnapshot> series, int groups, long count) {
    if (series.size() != groups) {
      throw new IllegalStateException(what + ": " + series.size() + " series, not " + groups);
    }
    for (SeriesSnapshot s : series) {
      if (s.state().count() != count || s.state().histogramTotal() != count) {
        throw new IllegalStateException(
            what + " series " + s.labelValues() + " holds " + s.state() + ", not count " + count);
      }
    }
  }

  @Benchmark
  @OperationsPerInvocation(ENTRIES_PER_INVOCATION)
  public FoldResult fold() {
    FoldResult result = null;
    for (int i = 0; i < deltasPerInvocation; i++) {
      result = engine.apply(decoded.withSequence(++sequence));
      if (result.outcome() != FoldResult.Outcome.APPLIED) {
        throw new IllegalStateException("delta " + sequence + " not applied: " + result);
      }
    }
    return result;
  }
}
