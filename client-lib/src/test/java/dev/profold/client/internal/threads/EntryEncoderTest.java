package dev.profold.client.internal.threads;

import static dev.profold.client.internal.threads.Fixtures.agg;
import static dev.profold.client.internal.threads.Fixtures.cell;
import static dev.profold.client.internal.threads.Fixtures.entry;
import static dev.profold.client.internal.threads.Fixtures.initial;
import static dev.profold.client.internal.threads.Fixtures.labels;
import static dev.profold.client.internal.threads.Fixtures.thread;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.ThreadAggregation;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.AttributeKind;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** Aggregated entries become wire entries that decode back to the same keys, labels and states. */
class EntryEncoderTest {
  final DeltaEncoder enc =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  final int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
  final int time = enc.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
  final int alloc = enc.measurement("alloc", ValueType.VALUE_TYPE_INT, "bytes");
  final int work = enc.pathNode(0, region, "work", RegionKind.REGION_KIND_COMPUTE);
  final int queue = enc.pathNode(work, region, "queue", RegionKind.REGION_KIND_WAIT);
  final Fixtures.FakeContexts contexts =
      new Fixtures.FakeContexts(Map.of(work, Kind.COMPUTE, queue, Kind.WAIT), region);
  final EntryEncoder encoder = new EntryEncoder(enc, contexts);

  /** One wire entry read back through the delta's dictionary. */
  record Decoded(int pathNode, Map<String, String> labels, Map<String, Aggregate> states) {}

  static List<Decoded> decode(
      Delta delta, Map<Integer, String> strings, Map<Integer, AttributeDef> attrs) {
    strings.putAll(delta.getDictionary().getStringsMap());
    delta.getDictionary().getAttributesList().forEach(a -> attrs.put(a.getId(), a));
    return delta.getEntriesList().stream()
        .map(
            e -> {
              int node = 0;
              Map<String, String> labels = new LinkedHashMap<>();
              for (AttributeValue v : e.getKeyList()) {
                AttributeDef def = attrs.get(v.getAttributeId());
                assertThat(def.getKind()).isEqualTo(AttributeKind.ATTRIBUTE_KIND_DIMENSION);
                switch (def.getType()) {
                  case VALUE_TYPE_PATH -> node = v.getPathNodeId();
                  case VALUE_TYPE_STRING -> {
                    assertThat(v.getValueCase()).isEqualTo(AttributeValue.ValueCase.STRING_ID);
                    labels.put(def.getName(), strings.get(v.getStringId()));
                  }
                  default -> throw new AssertionError("unexpected key type " + def);
                }
              }
              Map<String, Aggregate> states = new LinkedHashMap<>();
              for (Measurement m : e.getMeasurementsList()) {
                AttributeDef def = attrs.get(m.getAttributeId());
                assertThat(def.getKind()).isEqualTo(AttributeKind.ATTRIBUTE_KIND_MEASUREMENT);
                Aggregate a = new Aggregate();
                WireStates.mergeInto(m.getState(), a);
                assertThat(states.put(def.getName(), a)).isNull();
              }
              return new Decoded(node, labels, states);
            })
        .toList();
  }

  Delta delta(List<Entry> entries) {
    return enc.prepare(Delta.newBuilder().setSequence(1).addAllEntries(entries)).build();
  }

  @Test
  void aPerThreadCompanionNameStaysWithinTheCollectorsLimit() {
    // Before: a measurement name of 120 characters made a companion of 131, which the collector
    // refused, with every delta that used it.
    String longName = "m".repeat(120);
    int m = enc.measurement(longName, ValueType.VALUE_TYPE_DOUBLE, "seconds");
    AttributeDef companion = enc.attribute(encoder.perThreadMeasurement(m));
    assertThat(companion.getName()).hasSize(128).endsWith(EntryEncoder.PER_THREAD_SUFFIX);
    assertThat(enc.attribute(encoder.perThreadMeasurement(time)).getName())
        .isEqualTo("time.per_thread");
  }

  @Test
  void setEntriesShareOneWireEntryWithTheirPerThreadCompanion() {
    List<ThreadSnapshot> threads =
        List.of(
            initial(1, "main", "pool-*", cell(work, time, 1.0, 2.0), cell(work, alloc, 64)),
            thread(2, "w", "pool-*", cell(work, time, 0.5), cell(queue, time, 4.0)));
    List<AggregatedEntry> set =
        ThreadAggregators.forMode(ThreadAggregation.SET).aggregate(threads, contexts, time);
    List<Entry> entries = encoder.encode(set);
    assertThat(entries).hasSize(2);

    Map<Integer, String> strings = new HashMap<>();
    Map<Integer, AttributeDef> attrs = new HashMap<>();
    Delta d = delta(entries);
    List<Decoded> decoded = decode(d, strings, attrs);

    Map<String, String> pool = labels("thread.group", "pool-*");
    Map<String, Aggregate> workStates = new LinkedHashMap<>();
    workStates.put("time", agg(1.0, 2.0, 0.5));
    workStates.put("time.per_thread", agg(3.0, 0.5));
    workStates.put("alloc", agg(64));
    workStates.put("alloc.per_thread", agg(64));
    Map<String, Aggregate> queueStates = new LinkedHashMap<>();
    queueStates.put("time", agg(4.0));
    queueStates.put("time.per_thread", agg(4.0));
    assertThat(decoded)
        .containsExactly(
            new Decoded(work, pool, workStates), new Decoded(queue, pool, queueStates));

    // key ids: the context's region first, then the label's STRING dimension
    int group = enc.dimension("thread.group", ValueType.VALUE_TYPE_STRING);
    assertThat(d.getEntries(0).getKeyList())
        .extracting(AttributeValue::getAttributeId)
        .containsExactly(region, group);
    // measurement ids: the metric's own, and the companion's defined like it
    int timePerThread = encoder.perThreadMeasurement(time);
    int allocPerThread = encoder.perThreadMeasurement(alloc);
    assertThat(d.getEntries(0).getMeasurementsList())
        .extracting(Measurement::getAttributeId)
        .containsExactly(time, timePerThread, alloc, allocPerThread);
    assertThat(attrs.get(timePerThread))
        .isEqualTo(
            AttributeDef.newBuilder()
                .setId(timePerThread)
                .setName("time.per_thread")
                .setType(ValueType.VALUE_TYPE_DOUBLE)
                .setKind(AttributeKind.ATTRIBUTE_KIND_MEASUREMENT)
                .setUnit("seconds")
                .build());
    assertThat(attrs.get(allocPerThread).getType()).isEqualTo(ValueType.VALUE_TYPE_INT);
    assertThat(attrs.get(allocPerThread).getUnit()).isEqualTo("bytes");
    assertThat(attrs.get(group).getKind()).isEqualTo(AttributeKind.ATTRIBUTE_KIND_DIMENSION);
  }

  @Test
  void labelsOfEachModeTravelAsStringDimensions() {
    List<ThreadSnapshot> threads =
        List.of(
            initial(1, "main", "app", cell(work, time, 3.0)),
            thread(2, "w", "app", cell(work, time, 2.0)),
            thread(3, "w", "app", cell(work, time, 1.0), cell(queue, time, 1.0)));
    Map<Integer, String> strings = new HashMap<>();
    Map<Integer, AttributeDef> attrs = new HashMap<>();

    List<Decoded> key =
        decode(
            delta(
                encoder.encode(
                    ThreadAggregators.forMode(ThreadAggregation.KEY)
                        .aggregate(threads, contexts, time))),
            strings,
            attrs);
    assertThat(key)
        .extracting(x -> x.pathNode() + " " + x.labels())
        .containsExactly(
            work + " {thread.group=app, thread.role=initial}",
            work + " {thread.group=app, thread.role=slowest}",
            work + " {thread.group=app, thread.role=fastest}",
            queue + " {thread.group=app, thread.role=fastest}");

    List<Decoded> none =
        decode(
            delta(
                encoder.encode(
                    ThreadAggregators.forMode(ThreadAggregation.NONE)
                        .aggregate(threads, contexts, time))),
            strings,
            attrs);
    assertThat(none)
        .extracting(x -> x.labels().get("thread"))
        .containsExactly("main", "w#2", "w#3", "w#3");

    List<Decoded> calltree =
        decode(
            delta(
                encoder.encode(
                    ThreadAggregators.forMode(ThreadAggregation.CALLTREE)
                        .aggregate(threads, contexts, time))),
            strings,
            attrs);
    assertThat(calltree)
        .extracting(x -> x.pathNode() + " " + x.labels().get("thread.cluster") + " " + x.states())
        .containsExactly(
            work + " 0 {time=" + agg(3.0, 2.0) + "}",
            work + " 1 {time=" + agg(1.0) + "}",
            queue + " 1 {time=" + agg(1.0) + "}");
  }

  @Test
  void sameKeyAndMeasurementMergeIntoAFreshState() {
    Aggregate a = agg(1.0);
    Aggregate b = agg(2.0);
    Map<String, String> g = labels("thread.group", "g", "thread", "x");
    List<Entry> entries =
        encoder.encode(
            List.of(
                entry(work, g, time, false, a),
                entry(work, g, alloc, false, agg(8)),
                entry(work, g, time, false, b)));
    assertThat(entries).hasSize(1);
    assertThat(entries.get(0).getMeasurementsList())
        .extracting(Measurement::getAttributeId)
        .containsExactly(time, alloc);
    assertThat(entries.get(0).getMeasurements(0).getState())
        .isEqualTo(WireStates.toProto(agg(1.0, 2.0)));
    assertThat(a).isEqualTo(agg(1.0));
    assertThat(b).isEqualTo(agg(2.0));
    assertThat(encoder.encode(List.of())).isEmpty();
  }

  @Provide
  Arbitrary<List<ThreadSnapshot>> threads() {
    return new ThreadAggregatorPropertiesTest().threads();
  }

  /**
   * End to end: whatever the mode, the wire entries decoded and merged per (group, context,
   * metric), per-thread companions left out, give the merge of the threads' cells.
   */
  @Property(tries = 200)
  void decodedTotalsEqualTheInputs(
      @ForAll("threads") List<ThreadSnapshot> threads, @ForAll ThreadAggregation mode) {
    DeltaEncoder fresh =
        new DeltaEncoder(
            SourceIdentity.newBuilder()
                .setService("s")
                .setInstance("i")
                .setIncarnationId(1)
                .build());
    int m1 = fresh.measurement("m1", ValueType.VALUE_TYPE_DOUBLE, "seconds");
    int m2 = fresh.measurement("m2", ValueType.VALUE_TYPE_DOUBLE, "");
    int m3 = fresh.measurement("m3", ValueType.VALUE_TYPE_INT, "bytes");
    assertThat(List.of(m1, m2, m3)).containsExactly(1, 2, 3); // the generator's metric ids
    int path = fresh.dimension("region", ValueType.VALUE_TYPE_PATH);
    Fixtures.FakeContexts view =
        new Fixtures.FakeContexts(ThreadAggregatorPropertiesTest.CONTEXTS_KINDS, path);
    List<Entry> entries =
        new EntryEncoder(fresh, view)
            .encode(ThreadAggregators.forMode(mode).aggregate(threads, view, 1));
    Delta d = fresh.prepare(Delta.newBuilder().setSequence(1).addAllEntries(entries)).build();
    Map<ThreadAggregatorPropertiesTest.Gcm, Aggregate> totals = new HashMap<>();
    Map<String, Integer> metricIds = Map.of("m1", m1, "m2", m2, "m3", m3);
    for (Decoded x : decode(d, new HashMap<>(), new HashMap<>())) {
      x.states()
          .forEach(
              (name, state) -> {
                if (!name.endsWith(EntryEncoder.PER_THREAD_SUFFIX)) {
                  totals
                      .computeIfAbsent(
                          new ThreadAggregatorPropertiesTest.Gcm(
                              x.labels().get("thread.group"), x.pathNode(), metricIds.get(name)),
                          k -> new Aggregate())
                      .merge(state);
                }
              });
    }
    assertThat(totals).isEqualTo(ThreadAggregatorPropertiesTest.reference(threads));
  }
}
