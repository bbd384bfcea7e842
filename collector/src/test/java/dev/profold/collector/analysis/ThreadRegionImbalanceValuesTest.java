package dev.profold.collector.analysis;

import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_DIMENSION;
import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_MEASUREMENT;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_WAIT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_DOUBLE;
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

/**
 * SET data through a real fold: a scheme by service, instance, thread group, path and kind over the
 * per-thread measurement, and the imbalance across a group's threads derived from it.
 */
class ThreadRegionImbalanceValuesTest {
  private static final long S = 1_000_000_000L;
  private static final long INTERVAL = 10 * S;
  private static final long T0 = 1_700_000_000L * S;
  private static final int GROUP_ATTR = 3;
  private static final int PER_THREAD = 4;
  private static final int POOL = Deltas.FREE_STRING_IDS;
  static final String QUERY =
      "SELECT service, instance, thread.group, path, kind, sum(time.per_thread)"
          + " GROUP BY service, instance, thread.group, path, kind";

  private final MutableClock clock = MutableClock.atNanos(T0 + S);
  private final GlobalDictionary dictionary = new GlobalDictionary(10_000);
  private FoldEngine engine;

  private void start() throws Exception {
    engine =
        new FoldEngine(
            new FoldConfig(
                INTERVAL,
                5,
                1000,
                20,
                List.of(
                    SchemeDefinition.compile(
                        "threads", QUERY, Duration.ofNanos(INTERVAL), 1000, 10))),
            dictionary,
            clock,
            new CollectorMetrics(new SimpleMeterRegistry()));
  }

  private static Entry entry(int region, double... perThreadTotals) {
    return Entry.newBuilder()
        .addKey(Deltas.regionKey(region))
        .addKey(AttributeValue.newBuilder().setAttributeId(GROUP_ATTR).setStringId(POOL))
        .addMeasurements(Deltas.measurement(PER_THREAD, perThreadTotals))
        .build();
  }

  private void push(int threadsInGroup) {
    Deltas.Builder d =
        Deltas.source("reports", "r-1")
            .incarnation(7)
            .seq(1)
            .interval(T0, T0 + INTERVAL)
            .attribute(GROUP_ATTR, "thread.group", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
            .attribute(
                PER_THREAD,
                "time.per_thread",
                VALUE_TYPE_DOUBLE,
                ATTRIBUTE_KIND_MEASUREMENT,
                "seconds")
            .string(POOL, "worker-*")
            .region(1, "work", REGION_KIND_COMPUTE)
            .region(2, "barrier", REGION_KIND_WAIT)
            .entry(entry(1, 4.0, 1.0, 1.0, 1.0)) // the planted problem: thread 0 does 4x
            .entry(entry(2, 0.0625, 3.0, 3.0, 3.0)); // so the others wait for it
    if (threadsInGroup > 0) {
      d.threads("worker-*", threadsInGroup, new long[6], 0, 0, 0);
    }
    engine.apply(d.decode(dictionary));
    clock.setNanos(T0 + 2 * INTERVAL); // the window closes
    engine.advance();
  }

  private static DerivedValue node(List<DerivedValue> all, String path) {
    return all.stream()
        .filter(v -> v.labels().get("path").equals(path))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + path + " in " + all));
  }

  @Test
  void imbalanceAcrossTheThreadsOfAGroupPerNode() throws Exception {
    start();
    push(0);
    List<DerivedValue> all = new ThreadRegionImbalanceValues(engine::snapshot, 10).current();

    DerivedValue work = node(all, "work");
    assertThat(work.name()).isEqualTo("thread_region_imbalance_seconds");
    assertThat(work.labels())
        .isEqualTo(
            Map.of(
                "service", "reports",
                "instance", "r-1",
                "thread_group", "worker-*",
                "path", "work",
                "kind", "compute"));
    assertThat(work.value()).isEqualTo(4.0 - 7.0 / 4); // max - avg, planted
    assertThat(work.context()).containsEntry("threads", "4").containsEntry("wait", "0.000 s");

    DerivedValue barrier = node(all, "barrier");
    assertThat(barrier.value()).isEqualTo(3.0 - 9.0625 / 4); // wait nodes: imb = max - avg
    assertThat(barrier.context()).containsEntry("wait", "2.266 s"); // and wait = avg
    assertThat(all.get(0)).as("most imbalance first").isEqualTo(work);
  }

  @Test
  void threadsThatNeverVisitedANodeCountAsZero() throws Exception {
    start();
    push(5); // the thread activity knows a fifth thread that did neither
    List<DerivedValue> all = new ThreadRegionImbalanceValues(engine::snapshot, 1).current();
    assertThat(all).hasSize(1); // top 1 node per group
    DerivedValue work = all.get(0);
    assertThat(work.value()).isEqualTo(4.0 - 7.0 / 5);
    assertThat(work.context()).containsEntry("min", "0.000 s").containsEntry("threads", "5");
  }
}
