package dev.profold.benchmarks;

import com.datadoghq.sketch.ddsketch.DDSketch;
import com.datadoghq.sketch.ddsketch.DDSketches;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Merging one entry's state into a long-lived accumulator, for Profold's {@link Aggregate} and two
 * peers, on the same data: {@value #ENTRIES} per-entry states built from {@link
 * BenchData#values(int)} (8 latencies each, about three octaves, whole microseconds), merged in
 * turn into one accumulator per implementation. Score is per merged entry.
 *
 * <ul>
 *   <li>{@link #profoldSparse}: what the fold does: {@link Aggregate#mergeMoments} plus {@link
 *       ExpHistogram#mergeSparse} from the non-zero buckets the decoder keeps.
 *   <li>{@link #profoldRaw}: {@link Aggregate#mergeMoments} plus {@link ExpHistogram#mergeRaw} from
 *       the dense bucket run as sent on the wire (what the fold did before keeping only non-zero
 *       buckets).
 *   <li>{@link #profoldAggregate}: {@link Aggregate#merge} of one Aggregate object into another.
 *   <li>{@link #hdrHistogram}: {@code Histogram.add} with values in microseconds, range 1 us to 60
 *       s, 2 significant digits (about 1% resolution).
 *   <li>{@link #ddSketch}: {@code DDSketch.mergeWith}, unbounded dense store, 1% relative accuracy,
 *       values in seconds.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class MergeBenchmark {
  /** Distinct per-entry states merged in turn (one invocation merges each once). */
  static final int ENTRIES = 16;

  private static final long HDR_HIGHEST_MICROS = 60_000_000L;
  private static final int HDR_DIGITS = 2;
  private static final double DDSKETCH_ACCURACY = 0.01;
  private static final long[] NO_BUCKETS = new long[0];

  // Per-entry states, raw form (as decoded from the wire).
  private long[] count;
  private double[] sum;
  private double[] min;
  private double[] max;
  private double[] sumOfSquares;
  private int[] scale;
  private long[] zeroCount;
  private int[] offset;
  private long[][] buckets;
  private int[][] sparseIndex;
  private long[][] sparseCount;

  // Per-entry states as objects of each implementation.
  private Aggregate[] aggregates;
  private Histogram[] hdr;
  private DDSketch[] sketches;

  // Accumulators.
  private Aggregate rawInto;
  private Aggregate sparseInto;
  private Aggregate aggregateInto;
  private Histogram hdrInto;
  private DDSketch sketchInto;

  @Setup(Level.Trial)
  public void setUp() {
    count = new long[ENTRIES];
    sum = new double[ENTRIES];
    min = new double[ENTRIES];
    max = new double[ENTRIES];
    sumOfSquares = new double[ENTRIES];
    scale = new int[ENTRIES];
    zeroCount = new long[ENTRIES];
    offset = new int[ENTRIES];
    buckets = new long[ENTRIES][];
    sparseIndex = new int[ENTRIES][];
    sparseCount = new long[ENTRIES][];
    aggregates = new Aggregate[ENTRIES];
    hdr = new Histogram[ENTRIES];
    sketches = new DDSketch[ENTRIES];
    for (int e = 0; e < ENTRIES; e++) {
      double[] values = BenchData.values(e);
      Aggregate a = new Aggregate();
      Histogram h = new Histogram(1, HDR_HIGHEST_MICROS, HDR_DIGITS);
      DDSketch s = DDSketches.unboundedDense(DDSKETCH_ACCURACY);
      for (double v : values) {
        a.record(v);
        h.recordValue(Math.round(v * 1e6));
        s.accept(v);
      }
      aggregates[e] = a;
      hdr[e] = h;
      sketches[e] = s;
      ExpHistogram x = a.histogram();
      count[e] = a.count();
      sum[e] = a.sum();
      min[e] = a.min();
      max[e] = a.max();
      sumOfSquares[e] = a.sumOfSquares();
      scale[e] = x.scale();
      zeroCount[e] = x.zeroCount();
      offset[e] = x.positiveOffset();
      buckets[e] = new long[x.positiveSize()];
      int nonZero = 0;
      for (int i = 0; i < buckets[e].length; i++) {
        buckets[e][i] = x.positiveCount(x.positiveOffset() + i);
        nonZero += buckets[e][i] != 0 ? 1 : 0;
      }
      sparseIndex[e] = new int[nonZero];
      sparseCount[e] = new long[nonZero];
      for (int i = 0, k = 0; i < buckets[e].length; i++) {
        if (buckets[e][i] != 0) {
          sparseIndex[e][k] = offset[e] + i;
          sparseCount[e][k++] = buckets[e][i];
        }
      }
    }
    rawInto = new Aggregate();
    sparseInto = new Aggregate();
    aggregateInto = new Aggregate();
    hdrInto = new Histogram(1, HDR_HIGHEST_MICROS, HDR_DIGITS);
    sketchInto = DDSketches.unboundedDense(DDSKETCH_ACCURACY);
  }

  @Benchmark
  @OperationsPerInvocation(ENTRIES)
  public Aggregate profoldSparse() {
    Aggregate into = sparseInto;
    for (int e = 0; e < ENTRIES; e++) {
      into.mergeMoments(count[e], sum[e], min[e], max[e], sumOfSquares[e]);
      into.histogram()
          .mergeSparse(
              scale[e],
              zeroCount[e],
              sparseIndex[e],
              sparseCount[e],
              0,
              sparseIndex[e].length,
              0,
              0);
    }
    return into;
  }

  @Benchmark
  @OperationsPerInvocation(ENTRIES)
  public Aggregate profoldRaw() {
    Aggregate into = rawInto;
    for (int e = 0; e < ENTRIES; e++) {
      into.mergeMoments(count[e], sum[e], min[e], max[e], sumOfSquares[e]);
      into.histogram()
          .mergeRaw(
              scale[e],
              zeroCount[e],
              offset[e],
              buckets[e],
              0,
              buckets[e].length,
              0,
              NO_BUCKETS,
              0,
              0);
    }
    return into;
  }

  @Benchmark
  @OperationsPerInvocation(ENTRIES)
  public Aggregate profoldAggregate() {
    Aggregate into = aggregateInto;
    for (int e = 0; e < ENTRIES; e++) {
      into.merge(aggregates[e]);
    }
    return into;
  }

  @Benchmark
  @OperationsPerInvocation(ENTRIES)
  public Histogram hdrHistogram() {
    Histogram into = hdrInto;
    for (int e = 0; e < ENTRIES; e++) {
      into.add(hdr[e]);
    }
    return into;
  }

  @Benchmark
  @OperationsPerInvocation(ENTRIES)
  public DDSketch ddSketch() {
    DDSketch into = sketchInto;
    for (int e = 0; e < ENTRIES; e++) {
      into.mergeWith(sketches[e]);
    }
    return into;
  }
}
