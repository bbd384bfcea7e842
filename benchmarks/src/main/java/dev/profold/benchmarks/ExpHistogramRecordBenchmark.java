package dev.profold.benchmarks;

import dev.profold.reduce.ExpHistogram;
import java.util.concurrent.TimeUnit;
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
 * One value into a client histogram (start scale {@link ExpHistogram#TABLE_SCALE}, the scale
 * regions record at): the fast path {@link ExpHistogram#record(double)} against the general {@link
 * ExpHistogram#record(double, long)}, which every value took before, in the same run. The values
 * are 1,024 region durations in seconds, 20 ns to 2 µs apart by a few buckets each (what a nanoTime
 * difference times 1e-9 gives), recorded in turn so that bucket choice is not predictable from the
 * last value alone.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class ExpHistogramRecordBenchmark {
  static final int N = 1024;
  double[] values;
  ExpHistogram histogram;

  @Setup(Level.Trial)
  public void setUp() {
    values = new double[N];
    long x = 42;
    for (int i = 0; i < N; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      long nanos = 20 + ((x >>> 33) % 1980);
      values[i] = nanos * 1e-9;
    }
    histogram = new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, ExpHistogram.TABLE_SCALE);
    for (double v : values) { // the range is occupied from here on, as in a busy region's cell
      histogram.record(v, 1);
    }
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void fastPath() {
    ExpHistogram h = histogram;
    for (double v : values) {
      h.record(v);
    }
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void generalPath() {
    ExpHistogram h = histogram;
    for (double v : values) {
      h.record(v, 1);
    }
  }
}
