package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.record.Recorder;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.SourceIdentity;
import java.util.List;
import org.junit.jupiter.api.Test;

class JfrSinkTest {
  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 1024);
  private final JfrSink sink = new JfrSink(recorder);

  private static Observation obs(long thread, String name, Kind kind, double v, String... path) {
    return new Observation(
        "jdk.JavaMonitorEnter", thread, name, false, List.of(path), kind, false, v);
  }

  @Test
  void observationsBecomeCellsOfTheirThreadAtTheirPathUnderTheEventAttribute() {
    sink.record(obs(41, "http-exec-1", Kind.SYNC, 0.5, "Thread.run", "Cart.add"));
    sink.record(obs(41, "http-exec-1", Kind.SYNC, 0.25, "Thread.run", "Cart.add"));
    sink.record(obs(42, "http-exec-2", Kind.SYNC, 1.0, "Thread.run", "Cart.add"));
    sink.record(
        new Observation(
            "jdk.ObjectAllocationSample",
            42,
            "http-exec-2",
            false,
            List.of("Thread.run", "Cart.add"),
            Kind.COMPUTE,
            true,
            4096));

    List<Rows.Row> rows = Rows.of(encoder, recorder, recorder.collect());
    assertThat(rows)
        .containsExactlyInAnyOrder(
            new Rows.Row(
                41,
                "http-exec-*",
                "jdk.JavaMonitorEnter",
                "Thread.run/Cart.add",
                Kind.SYNC,
                "time",
                2,
                0.75),
            new Rows.Row(
                42,
                "http-exec-*",
                "jdk.JavaMonitorEnter",
                "Thread.run/Cart.add",
                Kind.SYNC,
                "time",
                1,
                1.0),
            new Rows.Row(
                42,
                "http-exec-*",
                "jdk.ObjectAllocationSample",
                "Thread.run/Cart.add",
                Kind.COMPUTE,
                "allocation",
                1,
                4096));
  }

  @Test
  void callPathsThatKeepChangingAgeOutInsteadOfFillingTheContextLimit() {
    Recorder small = new Recorder(encoder, 1024, 64);
    JfrSink churning = new JfrSink(small);
    for (int round = 0; round < 300; round++) {
      churning.record(obs(41, "http-exec-1", Kind.SYNC, 1.0, "Thread.run", "Handler.m" + round));
      assertThat(Rows.of(encoder, small, small.collect()))
          .as("round %d", round)
          .containsExactly(
              new Rows.Row(
                  41,
                  "http-exec-*",
                  "jdk.JavaMonitorEnter",
                  "Thread.run/Handler.m" + round,
                  Kind.SYNC,
                  "time",
                  1,
                  1.0));
    }
    assertThat(small.misuseCounts().get("contexts_full")).isZero();
    assertThat(small.contextCount()).isLessThanOrEqualTo(64);
    churning.close();
  }

  @Test
  void aThreadsOwnRegionsAndItsJfrRecordsAreOneThreadAtFlush() {
    Thread me = Thread.currentThread();
    try (Region r = recorder.region("handle", Kind.COMPUTE)) {
      sink.record(obs(me.getId(), me.getName(), Kind.SYNC, 0.5, "A.run", "A.lock"));
    }
    List<ThreadSnapshot> s = recorder.collect();
    assertThat(s).singleElement().satisfies(t -> assertThat(t.cells()).hasSize(2));
  }

  @Test
  void
      anEndedThreadsTableGivesItsLastValuesThenIsForgottenAndALateEventIsRecordedAndRetiredAtOnce() {
    sink.record(obs(7, "worker-7", Kind.WAIT, 1.0, "A.w"));
    sink.threadEnded(7);
    assertThat(sink.threads()).isZero();
    assertThat(Rows.of(encoder, recorder, recorder.collect()))
        .singleElement()
        .satisfies(r -> assertThat(r.sum()).isEqualTo(1.0));
    assertThat(recorder.collect()).isEmpty();
    sink.record(obs(7, "worker-7", Kind.WAIT, 2.0, "A.w")); // delivered after the end event
    assertThat(sink.threads()).as("no table kept for an ended thread").isZero();
    assertThat(Rows.of(encoder, recorder, recorder.collect()))
        .singleElement()
        .satisfies(r -> assertThat(r.sum()).isEqualTo(2.0));
    assertThat(recorder.collect()).isEmpty();
  }

  @Test
  void aThreadStartDeliveredAfterTheStartingThreadEndedIsRecordedAndLeavesNoTable() {
    // JFR writes jdk.ThreadStart when the child first runs, charged to the parent, which has often
    // ended by then: the parent's ThreadEnd is delivered first.
    int parents = 2_000;
    for (int p = 0; p < parents; p++) {
      sink.record(obs(p, "parent-" + p, Kind.COMPUTE, 0.5, "Parent.run"));
      sink.threadEnded(p);
      sink.record(
          new Observation(
              EventMapper.THREAD_START,
              p,
              "parent-" + p,
              false,
              List.of("Parent.run", "Thread.start"),
              Kind.THREAD_MGMT,
              false,
              0.25));
    }
    assertThat(sink.threads()).isZero();
    List<Rows.Row> rows = Rows.of(encoder, recorder, recorder.collect());
    assertThat(rows.stream().mapToDouble(Rows.Row::sum).sum()).isEqualTo(parents * 0.75);
    assertThat(rows.stream().filter(r -> r.event().equals(EventMapper.THREAD_START)))
        .hasSize(parents)
        .allSatisfy(r -> assertThat(r.count()).isEqualTo(1));
    assertThat(recorder.collect()).isEmpty();
  }

  @Test
  void tablesNotWrittenForSomeIntervalsAreRetiredByTheSweepAndNothingIsLost() {
    sink.record(obs(9, "quiet", Kind.WAIT, 1.0, "A.w")); // its end is never delivered
    sink.record(obs(10, "busy", Kind.WAIT, 1.0, "A.w"));
    assertThat(Rows.of(encoder, recorder, recorder.collect())).hasSize(2);
    for (int i = 1; i < JfrSink.IDLE_INTERVALS; i++) {
      sink.record(obs(10, "busy", Kind.WAIT, 1.0, "A.w"));
      sink.sweep();
      assertThat(sink.threadIds()).containsExactlyInAnyOrder(9L, 10L);
      recorder.collect();
    }
    sink.sweep();
    assertThat(sink.threadIds()).containsExactly(10L);

    sink.record(obs(9, "quiet", Kind.WAIT, 3.0, "A.w")); // alive after all: a fresh table
    assertThat(sink.threadIds()).containsExactlyInAnyOrder(9L, 10L);
    assertThat(Rows.of(encoder, recorder, recorder.collect()))
        .singleElement()
        .satisfies(r -> assertThat(r.sum()).isEqualTo(3.0));
  }

  @Test
  void anEndedThreadIsRememberedForSomeIntervalsOnly() {
    sink.threadEnded(7);
    for (int i = 0; i < JfrSink.IDLE_INTERVALS; i++) {
      recorder.collect();
      sink.sweep();
    }
    sink.record(obs(7, "worker-7", Kind.WAIT, 1.0, "A.w")); // too late to be known as ended
    assertThat(sink.threadIds()).containsExactly(7L);
  }

  @Test
  void theInnermostRegionHasTheKindAndOuterOnesAreCompute() {
    sink.record(obs(1, "w", Kind.IO, 1.0, "A.outer", "A.read"));
    sink.record(obs(1, "w", Kind.COMPUTE, 1.0, "A.outer"));
    List<Rows.Row> rows = Rows.of(encoder, recorder, recorder.collect());
    assertThat(rows)
        .extracting(Rows.Row::path, Rows.Row::kind)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("A.outer/A.read", Kind.IO),
            org.assertj.core.groups.Tuple.tuple("A.outer", Kind.COMPUTE));
  }

  @Test
  void allocationSamplesAreRecordedEvenWhenTheApplicationFilledTheMeasurementLimit() {
    Recorder crowded = new Recorder(encoder, 1024);
    for (int i = 0; i < Recorder.MAX_MEASUREMENTS; i++) {
      crowded.metric("m" + i, ""); // dynamic measurement names, before the agent's JFR starts
    }
    JfrSink late = new JfrSink(crowded);
    late.record(
        new Observation(
            "jdk.ObjectAllocationSample",
            42,
            "w-1",
            false,
            List.of("A.b"),
            Kind.COMPUTE,
            true,
            4096));
    List<dev.profold.client.internal.threads.ThreadSnapshot> threads = crowded.collect();
    assertThat(threads).hasSize(1);
    assertThat(threads.get(0).cells()).hasSize(1);
    dev.profold.client.internal.threads.Cell c = threads.get(0).cells().get(0);
    assertThat(c.metric()).isNotNegative();
    assertThat(c.context()).isNotNegative();
    assertThat(c.state().sum()).isEqualTo(4096.0);
    // and the flush can encode it
    assertThat(
            new dev.profold.client.internal.threads.EntryEncoder(encoder, crowded.contexts())
                .encode(
                    new dev.profold.client.internal.threads.ThreadAggregationPlan(
                            dev.profold.client.ThreadAggregation.SUM, java.util.Map.of())
                        .aggregate(threads, crowded.contexts(), crowded.timeMetric())))
        .hasSize(1);
  }
}
