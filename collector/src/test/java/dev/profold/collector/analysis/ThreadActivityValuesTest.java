package dev.profold.collector.analysis;

import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_SYNC;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ThreadActivityValuesTest {
  private static final long S = 1_000_000_000L;
  private static final long INTERVAL = 10 * S;
  private static final long T0 = 1_700_000_000L * S;

  private final MutableClock clock = MutableClock.atNanos(T0 + S);
  private final GlobalDictionary dictionary = new GlobalDictionary(10_000);
  private final FoldEngine engine =
      new FoldEngine(
          new FoldConfig(INTERVAL, 5, 1000),
          dictionary,
          clock,
          new CollectorMetrics(new SimpleMeterRegistry()));
  private final ThreadActivityValues values = new ThreadActivityValues(engine::snapshot);

  /** An instance whose pool spends {@code syncSeconds} of 20 thread-seconds in SYNC. */
  private void instance(String name, long syncSeconds, double lockRegionSeconds) {
    engine.apply(
        Deltas.source("checkout", name)
            .incarnation(7)
            .seq(1)
            .interval(T0, T0 + INTERVAL)
            .region(1, "handle", REGION_KIND_COMPUTE)
            .region(2, 1, "Cache.lock", REGION_KIND_SYNC)
            .region(3, 1, "Stats.lock", REGION_KIND_SYNC)
            .entry(2, lockRegionSeconds)
            .entry(3, lockRegionSeconds / 4)
            .threads(
                "pool-*",
                2,
                new long[] {2 * S, syncSeconds * S, 0, 0, 0, 0},
                S / 2,
                2 * S,
                3 * S / 2)
            .decode(dictionary));
  }

  private static DerivedValue find(List<DerivedValue> all, String name, Map<String, String> l) {
    return all.stream()
        .filter(v -> v.name().equals(name) && v.labels().equals(l))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + l + " in " + all));
  }

  @Test
  void sharesPerInstanceAndServiceWithTheTopPathsAndInstances() {
    instance("i-1", 10, 4.0);
    instance("i-2", 2, 1.0);
    clock.setNanos(T0 + 2 * INTERVAL); // the region scheme's window (and only it) closes
    engine.advance();

    List<DerivedValue> all = values.current();

    DerivedValue i1 =
        find(
            all,
            "thread_class_ratio",
            Map.of(
                "service",
                "checkout",
                "instance",
                "i-1",
                "thread_group",
                "pool-*",
                "class",
                "sync"));
    assertThat(i1.value()).isEqualTo(0.5);
    assertThat(i1.context().get("top_paths"))
        .isEqualTo("handle/Cache.lock (4.000 s); handle/Stats.lock (1.000 s)");

    DerivedValue service =
        find(
            all,
            "service_thread_class_ratio",
            Map.of("service", "checkout", "thread_group", "pool-*", "class", "sync"));
    assertThat(service.value()).isEqualTo(12.0 / 40);
    assertThat(service.context().get("top_instances")).isEqualTo("i-1 (50%), i-2 (10%)");
    assertThat(service.context().get("top_paths")).startsWith("handle/Cache.lock (5.000 s)");

    DerivedValue imbalance =
        find(
            all,
            "thread_cpu_imbalance_ratio",
            Map.of("service", "checkout", "instance", "i-2", "thread_group", "pool-*"));
    assertThat(imbalance.value()).isEqualTo((1.5 - 1.0) / 10);
    assertThat(imbalance.context().get("cpu_spread")).contains("max 1.500 s").contains("2 threads");

    assertThat(all.stream().filter(v -> v.name().equals("thread_class_ratio")))
        .as("7 classes x 2 instances")
        .hasSize(14);
  }

  @Test
  void nothingBeforeAnyActivity() {
    assertThat(values.current()).isEmpty();
  }
}
