package dev.profold.collector.analysis;

import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_DIMENSION;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_SYNC;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_THREAD_MGMT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Entry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
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
    engine.apply(instanceDelta(name, syncSeconds, lockRegionSeconds).decode(dictionary));
  }

  private static Deltas.Builder instanceDelta(
      String name, long syncSeconds, double lockRegionSeconds) {
    return Deltas.source("checkout", name)
        .incarnation(7)
        .seq(1)
        .interval(T0, T0 + INTERVAL)
        .region(1, "handle", REGION_KIND_COMPUTE)
        .region(2, 1, "Cache.lock", REGION_KIND_SYNC)
        .region(3, 1, "Stats.lock", REGION_KIND_SYNC)
        .entry(2, lockRegionSeconds)
        .entry(3, lockRegionSeconds / 4)
        .threads(
            "pool-*", 2, new long[] {2 * S, syncSeconds * S, 0, 0, 0, 0}, S / 2, 2 * S, 3 * S / 2);
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

    List<DerivedValue> all = Catalogued.check(values.current());

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
        .as("no scheme keeps thread groups: the paths of all the instance's groups, marked so")
        .isEqualTo("(all thread groups) handle/Cache.lock (4.000 s); handle/Stats.lock (1.000 s)");

    DerivedValue service =
        find(
            all,
            "service_thread_class_ratio",
            Map.of("service", "checkout", "thread_group", "pool-*", "class", "sync"));
    assertThat(service.value()).isEqualTo(12.0 / 40);
    assertThat(service.context().get("top_instances")).isEqualTo("i-1 (50%), i-2 (10%)");
    assertThat(service.context().get("top_paths"))
        .startsWith("(all thread groups) handle/Cache.lock (5.000 s)");

    DerivedValue imbalance =
        find(
            all,
            "thread_cpu_imbalance_ratio",
            Map.of("service", "checkout", "instance", "i-2", "thread_group", "pool-*"));
    assertThat(imbalance.value()).isEqualTo((1.5 - 1.0) / 10);
    assertThat(imbalance.context().get("cpu_spread")).contains("max 1.500 s").contains("2 threads");

    assertThat(all.stream().filter(v -> v.name().equals("thread_class_ratio")))
        .as("8 classes x 2 instances")
        .hasSize(16);
  }

  @Test
  void ioAndIdleSharesSayHowMuchOfTheIntervalIoWentUnobserved() {
    engine.apply(instanceDelta("i-1", 2, 1.0).ioUnobserved(4 * S).decode(dictionary));
    engine.apply(instanceDelta("i-2", 2, 1.0).ioUnobserved(INTERVAL).decode(dictionary));
    engine.apply(instanceDelta("i-3", 2, 1.0).decode(dictionary)); // does not say
    List<DerivedValue> all = values.current();

    for (String cls : List.of("io", "idle")) {
      assertThat(ratio(all, "i-1", cls).context()).containsEntry("io_unobserved", "0.4000");
      assertThat(ratio(all, "i-2", cls).context()).containsEntry("io_unobserved", "1.0000");
      assertThat(ratio(all, "i-3", cls).context()).doesNotContainKey("io_unobserved");
      DerivedValue service =
          find(
              all,
              "service_thread_class_ratio",
              Map.of("service", "checkout", "thread_group", "pool-*", "class", cls));
      assertThat(service.context())
          .as("weighted by thread time over the instances that say (20 s each), i-3 left out")
          .containsEntry("io_unobserved", "0.7000");
    }
    assertThat(ratio(all, "i-1", "sync").context())
        .as("a class the blind spot does not change")
        .doesNotContainKey("io_unobserved");
  }

  @Test
  void aThreadGroupWaitingForACpuIsExplainedByTheComputePathsCompetingForIt() {
    engine.apply(
        Deltas.source("checkout", "i-1")
            .incarnation(7)
            .seq(1)
            .interval(T0, T0 + INTERVAL)
            .region(1, "handle", REGION_KIND_COMPUTE)
            .region(2, 1, "Cache.lock", REGION_KIND_SYNC)
            .entry(1, 6.0)
            .entry(2, 1.0)
            .threads("pool-*", 2, new long[] {6 * S, S, 0, 0, 0, 0, 12 * S}, 2 * S, 6 * S, 4 * S)
            .decode(dictionary));
    clock.setNanos(T0 + 2 * INTERVAL);
    engine.advance();

    List<DerivedValue> all = values.current();

    DerivedValue waiting = ratio(all, "i-1", "cpu_wait");
    assertThat(waiting.value()).isEqualTo(12.0 / 20);
    assertThat(waiting.context().get("top_paths"))
        .as("the compute paths the threads wait to run")
        .isEqualTo("(all thread groups) handle (6.000 s)");
    assertThat(
            find(
                    all,
                    "service_thread_class_ratio",
                    Map.of("service", "checkout", "thread_group", "pool-*", "class", "cpu_wait"))
                .context()
                .get("top_paths"))
        .isEqualTo("(all thread groups) handle (6.000 s)");
  }

  private static DerivedValue ratio(List<DerivedValue> all, String instance, String cls) {
    return find(
        all,
        "thread_class_ratio",
        Map.of(
            "service", "checkout", "instance", instance, "thread_group", "pool-*", "class", cls));
  }

  @Test
  void topPathsAreTheThreadGroupsOwnWhenASchemeKeepsThreadGroups() throws Exception {
    FoldEngine grouped =
        new FoldEngine(
            new FoldConfig(
                INTERVAL,
                5,
                1000,
                20,
                List.of(
                    SchemeDefinition.builtIn(Duration.ofNanos(INTERVAL), 1000),
                    SchemeDefinition.compile(
                        "by_group",
                        "SELECT service, instance, thread.group, path, kind, sum(time)"
                            + " GROUP BY service, instance, thread.group, path, kind",
                        Duration.ofNanos(INTERVAL),
                        1000,
                        10))),
            dictionary,
            clock,
            new CollectorMetrics(new SimpleMeterRegistry()));
    int group = 3;
    int submitter = Deltas.FREE_STRING_IDS;
    int pool = submitter + 1;
    grouped.apply(
        Deltas.source("ingest", "i-1")
            .incarnation(7)
            .seq(1)
            .interval(T0, T0 + INTERVAL)
            .attribute(group, "thread.group", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
            .string(submitter, "submitter")
            .string(pool, "pool-*")
            .region(1, "ThreadPoolExecutor.execute", REGION_KIND_THREAD_MGMT)
            .region(2, "LinkedBlockingQueue.take", REGION_KIND_THREAD_MGMT)
            .entry(inGroup(1, group, submitter, 2.0))
            .entry(inGroup(2, group, pool, 6.0))
            .threads("submitter", 1, new long[] {0, 0, 0, 0, 0, 2 * S}, 2 * S, 2 * S, 2 * S)
            .threads("pool-*", 2, new long[] {0, 0, 0, 0, 0, 6 * S}, 3 * S, 6 * S, 3 * S)
            .threads("other", 1, new long[] {S, 0, 0, 0, 0, 0}, S, S, S)
            .decode(dictionary));
    clock.setNanos(T0 + 2 * INTERVAL);
    grouped.advance();

    List<DerivedValue> all = new ThreadActivityValues(grouped::snapshot).current();
    assertThat(topPaths(all, "submitter"))
        .as("the submitter's paths only, though the pool's have more time")
        .isEqualTo("ThreadPoolExecutor.execute (2.000 s)");
    assertThat(topPaths(all, "pool-*")).isEqualTo("LinkedBlockingQueue.take (6.000 s)");
    assertThat(topPaths(all, "other"))
        .as("a group the scheme has no data of: all groups' paths, marked so")
        .isEqualTo(
            "(all thread groups) LinkedBlockingQueue.take (6.000 s);"
                + " ThreadPoolExecutor.execute (2.000 s)");
  }

  private static Entry inGroup(int region, int attr, int group, double seconds) {
    return Entry.newBuilder()
        .addKey(Deltas.regionKey(region))
        .addKey(AttributeValue.newBuilder().setAttributeId(attr).setStringId(group))
        .addMeasurements(Deltas.time(seconds))
        .build();
  }

  private static String topPaths(List<DerivedValue> all, String group) {
    return find(
            all,
            "service_thread_class_ratio",
            Map.of("service", "ingest", "thread_group", group, "class", "thread_mgmt"))
        .context()
        .get("top_paths");
  }

  @Test
  void nothingBeforeAnyActivity() {
    assertThat(values.current()).isEmpty();
  }
}
