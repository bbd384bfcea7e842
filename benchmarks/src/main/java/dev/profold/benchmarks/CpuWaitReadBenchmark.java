package dev.profold.benchmarks;

import dev.profold.client.internal.activity.OsThreads;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the {@code cpu_wait} class costs (docs/agent.md): the read of one thread's scheduler
 * statistics ({@code /proc/self/task/<tid>/schedstat}), done for every live thread whose OS thread
 * id is known at each interval's end, on the flush thread; and the read of the calling thread's OS
 * thread id ({@code /proc/thread-self}), done once by each thread as it first records. Linux only
 * (elsewhere both return at once with nothing read). Not thread-safe: one benchmark thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class CpuWaitReadBenchmark {
  private long tid;

  @Setup
  public void setUp() {
    tid = OsThreads.currentTid();
  }

  /** One thread's statistics, as each interval's end reads them per thread. */
  @Benchmark
  public long[] schedstat() {
    return OsThreads.schedstat(tid);
  }

  /** The calling thread's OS thread id, as a thread reads it once when it first records. */
  @Benchmark
  public long currentTid() {
    return OsThreads.currentTid();
  }
}
