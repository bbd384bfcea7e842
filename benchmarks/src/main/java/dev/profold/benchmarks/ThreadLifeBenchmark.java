package dev.profold.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A platform thread's whole life, as a thread-churning application pays it: {@code new Thread},
 * {@code start()}, an empty {@code run()}, the thread's end and {@code join()}. Run once as is and
 * once with the agent attached ({@code -jvmArgsAppend -javaagent:...}), whose rewrite of {@code
 * java.lang.Thread} times each start and reads each ending thread's CPU time: the difference is
 * what the agent's two hooks cost per thread (docs/benchmarks.md, "Thread starts and ends").
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class ThreadLifeBenchmark {
  private static void nothing() {}

  /** One thread started, run to its end and joined. */
  @Benchmark
  public Thread startRunJoin() throws InterruptedException {
    Thread t = new Thread(ThreadLifeBenchmark::nothing, "life-worker");
    t.start();
    t.join();
    return t;
  }
}
