package dev.profold.benchmarks;

import dev.profold.collector.analysis.RegionImbalance;
import dev.profold.collector.analysis.ServiceProfile;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The region analysis of one closed interval (imbalance of each region across a service's
 * instances), as the collector computes it at the first scrape or alert evaluation after the
 * interval closes: one service of two instances with {@code nodes} call paths of {@code depth}
 * frames (names of about 60 characters, as the agent's are; the paths share their first {@code
 * depth - 2} frames and branch in the last two, as in {@link ScrapeSize}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class RegionAnalysisBenchmark {
  @Param({"10000"})
  public int nodes;

  @Param({"8", "64"})
  public int depth;

  private ServiceProfile profile;

  @Setup(Level.Trial)
  public void setUp() {
    StringBuilder prefix = new StringBuilder();
    for (int level = 0; level < depth - 2; level++) {
      prefix.append(level == 0 ? "" : "/").append(BenchData.callFrame(level, 0));
    }
    List<ServiceProfile.Node> ns = new ArrayList<>(nodes);
    double[][] seconds = new double[nodes][];
    SplittableRandom random = new SplittableRandom(42);
    for (int p = 0; p < nodes; p++) {
      String path =
          prefix
              + "/"
              + BenchData.callFrame(depth - 2, p / 100)
              + "/"
              + BenchData.callFrame(depth - 1, p % 100);
      ns.add(new ServiceProfile.Node(path, "compute"));
      seconds[p] = new double[] {random.nextDouble(), random.nextDouble()};
    }
    profile = new ServiceProfile("shop", List.of("shop-0", "shop-1"), ns, seconds);
  }

  @Benchmark
  public RegionImbalance.Result analyse() {
    return RegionImbalance.analyse(
        profile, RegionImbalance.DEFAULT_RUNTIME_SHARE, RegionImbalance.DEFAULT_LEAF_SHARE);
  }
}
