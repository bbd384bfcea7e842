package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.ThreadAggregation;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.EntryEncoder;
import dev.profold.client.internal.threads.ThreadAggregators;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Contexts that differ inside the process but have the same key on the wire (scopes opened in
 * another order, an inner scope hiding an outer one of the same name) are one context for the
 * thread aggregation: SET counts each thread once per key, CALLTREE sees the same visited keys, and
 * a delta holds one entry per key.
 */
class SameKeyContextsTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 1024);
  private final int payload = recorder.metric("payload", "bytes");

  private List<Entry> encode(List<ThreadSnapshot> snapshots, ThreadAggregation mode) {
    return new EntryEncoder(encoder, recorder.contexts())
        .encode(
            ThreadAggregators.forMode(mode)
                .aggregate(snapshots, recorder.contexts(), recorder.timeMetric()));
  }

  private Aggregate state(List<Entry> entries, int measurement) {
    List<Measurement> found =
        entries.stream()
            .flatMap(e -> e.getMeasurementsList().stream())
            .filter(m -> m.getAttributeId() == measurement)
            .toList();
    assertThat(found).hasSize(1);
    Aggregate a = new Aggregate();
    WireStates.mergeInto(found.get(0).getState(), a);
    return a;
  }

  @Test
  void setCountsAThreadOnceWhenItsScopesWereOpenedInAnotherOrder() {
    try (Scope s = recorder.with("tenant", "x");
        Region r = recorder.region("h", Kind.COMPUTE)) {
      recorder.record(payload, 1);
    }
    try (Region r = recorder.region("h", Kind.COMPUTE);
        Scope s = recorder.with("tenant", "x")) {
      recorder.record(payload, 2);
    }
    List<Entry> entries = encode(recorder.collect(), ThreadAggregation.SET);
    Aggregate perThread =
        state(
            entries, new EntryEncoder(encoder, recorder.contexts()).perThreadMeasurement(payload));
    assertThat(perThread.count()).isEqualTo(1); // one thread
    assertThat(perThread.sum()).isEqualTo(3.0); // its total
    assertThat(state(entries, payload).count()).isEqualTo(2);
  }

  @Test
  void keyValuesComeInOneOrderWhateverOrderTheScopesWereOpenedIn() {
    try (Scope a = recorder.with("a", "1");
        Scope b = recorder.with("b", "2")) {
      recorder.record(payload, 1);
    }
    try (Scope b = recorder.with("b", "2");
        Scope a = recorder.with("a", "1")) {
      recorder.record(payload, 2);
    }
    List<Entry> entries = encode(recorder.collect(), ThreadAggregation.SUM);
    assertThat(entries).hasSize(1);
    assertThat(entries.get(0).getKeyList().stream().map(v -> v.getAttributeId()).toList())
        .containsExactly(
            encoder.dimension("a", dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING),
            encoder.dimension("b", dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING),
            encoder.dimension(
                ThreadAggregators.GROUP, dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING));
    assertThat(state(entries, payload).sum()).isEqualTo(3.0);
  }

  @Test
  void calltreeClustersThreadsWhoseKeysAreEqualThoughTheirContextsDiffer() throws Exception {
    ExecutorService first = threads.newThread();
    ExecutorService second = threads.newThread();
    long firstId =
        first
            .submit(
                () -> {
                  Thread.currentThread().setName("w-1");
                  try (Scope outer = recorder.with("k", "1");
                      Scope inner = recorder.with("k", "2")) {
                    recorder.record(payload, 1);
                  }
                  return Thread.currentThread().getId();
                })
            .get();
    long secondId =
        second
            .submit(
                () -> {
                  Thread.currentThread().setName("w-2");
                  try (Scope only = recorder.with("k", "2")) {
                    recorder.record(payload, 1);
                  }
                  return Thread.currentThread().getId();
                })
            .get();
    Map<String, List<List<Long>>> clusters = ThreadAggregators.clusters(recorder.collect());
    assertThat(clusters.get("w-*")).containsExactly(List.of(firstId, secondId));
  }
}
