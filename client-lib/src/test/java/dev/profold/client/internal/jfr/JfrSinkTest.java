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
  void aThreadsOwnRegionsAndItsJfrRecordsAreOneThreadAtFlush() {
    Thread me = Thread.currentThread();
    try (Region r = recorder.region("handle", Kind.COMPUTE)) {
      sink.record(obs(me.getId(), me.getName(), Kind.SYNC, 0.5, "A.run", "A.lock"));
    }
    List<ThreadSnapshot> s = recorder.collect();
    assertThat(s).singleElement().satisfies(t -> assertThat(t.cells()).hasSize(2));
  }

  @Test
  void anEndedThreadsTableGivesItsLastValuesThenIsForgottenAndALateEventStartsANewOne() {
    sink.record(obs(7, "worker-7", Kind.WAIT, 1.0, "A.w"));
    sink.threadEnded(7);
    assertThat(sink.threads()).isZero();
    assertThat(Rows.of(encoder, recorder, recorder.collect()))
        .singleElement()
        .satisfies(r -> assertThat(r.sum()).isEqualTo(1.0));
    assertThat(recorder.collect()).isEmpty();
    sink.record(obs(7, "worker-7", Kind.WAIT, 2.0, "A.w")); // delivered after the end event
    assertThat(Rows.of(encoder, recorder, recorder.collect()))
        .singleElement()
        .satisfies(r -> assertThat(r.sum()).isEqualTo(2.0));
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
}
