package dev.profold.collector.fold;

import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_MEASUREMENT;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_DOUBLE;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_INT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.ingest.StreamDecoder;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.Entry;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Dictionary ids freed when a stream ends are handed out again only after the fold forgot what it
 * judged for them and what it read of them: an id that names something new must reach that new
 * thing's group.
 */
class DictionaryRecyclingTest {
  private static final long SECOND = 1_000_000_000L;
  private static final long INTERVAL = 10 * SECOND;
  private static final long T0 = 1_700_000_000L * SECOND;
  private static final int MAX_ENTRIES = 2000;

  private final MutableClock clock = MutableClock.atNanos(T0 + SECOND);
  private final CollectorMetrics metrics = new CollectorMetrics(new SimpleMeterRegistry());
  private final GlobalDictionary dictionary = new GlobalDictionary(MAX_ENTRIES);
  private final FoldEngine engine =
      new FoldEngine(new FoldConfig(INTERVAL, 5, 1000), dictionary, clock, metrics);

  private static Deltas.Builder checkout(long seq, String region, double value) {
    return Deltas.source("checkout", "i-1")
        .incarnation(7)
        .interval(T0, T0 + INTERVAL)
        .seq(seq)
        .region(1, region, REGION_KIND_COMPUTE)
        .entry(1, value);
  }

  @Test
  void aRecycledIdNamingAnotherRegionFeedsThatRegionsGroup() {
    StreamDecoder first = new StreamDecoder(dictionary);
    engine.apply(Deltas.decode(checkout(1, "main", 1.0).build(), first));
    assertThat(dictionary.pathNode(1).name()).isEqualTo("main");
    first.release(); // the stream ended; its delta was folded
    assertThat(dictionary.pathNode(1)).isNull();
    retireFillers(FoldEngine.recycleAfter(MAX_ENTRIES));
    clock.setNanos(T0 + 2 * SECOND); // past the next expiry check
    engine.advance(); // enough retired: the fold forgets its keys, the dictionary recycles

    // The same process reconnects with another region, which gets the freed node id.
    StreamDecoder second = new StreamDecoder(dictionary);
    engine.apply(Deltas.decode(checkout(2, "batch", 2.0).build(), second));
    assertThat(dictionary.pathNode(1).name()).as("the id was handed out again").isEqualTo("batch");

    List<SeriesSnapshot> series = engine.snapshot().schemes().get(0).cumulative();
    assertThat(sum(series, "main")).isEqualTo(1.0);
    assertThat(sum(series, "batch")).isEqualTo(2.0);
  }

  @Test
  void aRecycledAttributeIdNamingAnotherMeasurementFeedsThatMeasurementsGroup() {
    // Another process keeps the shared attributes (region, time) and the region's node mapped.
    StreamDecoder other = new StreamDecoder(dictionary);
    engine.apply(
        Deltas.decode(
            Deltas.source("checkout", "i-2").region(1, "main", REGION_KIND_COMPUTE).build(),
            other));
    StreamDecoder first = new StreamDecoder(dictionary);
    engine.apply(
        Deltas.decode(
            checkout(1, "main", 1.0)
                .attribute(
                    3, "queue_wait", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "seconds")
                .entry(inMain(3, 5.0))
                .build(),
            first));
    int queueWait = attributeId("queue_wait");
    first.release(); // its own attribute, queue_wait, goes
    assertThat(dictionary.attribute(queueWait)).isNull();
    retireFillers(FoldEngine.recycleAfter(MAX_ENTRIES));
    clock.setNanos(T0 + 2 * SECOND); // past the next expiry check
    // Enough retired: the fold forgets what it read of ids, the dictionary recycles.
    engine.advance();

    StreamDecoder second = new StreamDecoder(dictionary);
    engine.apply(
        Deltas.decode(
            checkout(2, "main", 2.0)
                .clearEntries()
                .attribute(3, "bytes_read", VALUE_TYPE_INT, ATTRIBUTE_KIND_MEASUREMENT, "bytes")
                .entry(inMain(3, 7.0))
                .build(),
            second));
    assertThat(dictionary.attribute(queueWait).name())
        .as("the id was handed out again")
        .isEqualTo("bytes_read");

    List<SeriesSnapshot> series = engine.snapshot().schemes().get(0).cumulative();
    assertThat(sum(series, "main", "queue_wait")).isEqualTo(5.0);
    assertThat(sum(series, "main", "bytes_read")).isEqualTo(7.0);
  }

  @Test
  void fewRetiredIdsAreNotRecycled() {
    StreamDecoder first = new StreamDecoder(dictionary);
    engine.apply(Deltas.decode(checkout(1, "main", 1.0).build(), first));
    first.release();
    // 4 more retired by the release: region and time, the node and its name
    retireFillers(FoldEngine.recycleAfter(MAX_ENTRIES) - 5);
    clock.setNanos(T0 + 2 * SECOND); // past the next expiry check
    engine.advance();
    assertThat(dictionary.retired()).isEqualTo(FoldEngine.recycleAfter(MAX_ENTRIES) - 1);
  }

  private void retireFillers(int n) {
    int before = dictionary.retired();
    for (int i = 0; dictionary.retired() < before + n; i++) {
      dictionary.releaseString(dictionary.internString("filler-" + i));
    }
  }

  /** An entry in region node 1 with a measurement of attribute {@code attribute}. */
  private static Entry inMain(int attribute, double value) {
    return Entry.newBuilder()
        .addKey(Deltas.regionKey(1))
        .addMeasurements(Deltas.measurement(attribute, value))
        .build();
  }

  private int attributeId(String name) {
    for (int id = 1; ; id++) {
      if (dictionary.attribute(id) != null && dictionary.attribute(id).name().equals(name)) {
        return id;
      }
    }
  }

  private static double sum(List<SeriesSnapshot> series, String path, String measure) {
    return series.stream()
        .filter(s -> s.labelValues().get(2).equals(path) && s.measure().name().equals(measure))
        .mapToDouble(s -> s.state().sum())
        .sum();
  }

  private static double sum(List<SeriesSnapshot> series, String path) {
    return series.stream()
        .filter(s -> s.labelValues().get(2).equals(path))
        .mapToDouble(s -> s.state().sum())
        .sum();
  }
}
