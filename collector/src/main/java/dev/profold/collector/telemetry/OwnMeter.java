package dev.profold.collector.telemetry;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusNamingConvention;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * The collector's own Micrometer meters (docs/metrics.md, "The collector itself"): name, type and
 * base unit of each, in one place. The classes that record them build them here, and scheme names
 * are checked against the names they take in /metrics ({@link #familiesUnder}), so that the two
 * cannot drift apart. Immutable.
 */
public enum OwnMeter {
  DELTAS_RECEIVED("profold.deltas.received", Meter.Type.COUNTER, null),
  DELTAS_APPLIED("profold.deltas.applied", Meter.Type.COUNTER, null),
  DELTAS_DUPLICATE("profold.deltas.duplicate", Meter.Type.COUNTER, null),
  DELTAS_REJECTED("profold.deltas.rejected", Meter.Type.COUNTER, null),
  ENTRIES_RECEIVED("profold.entries.received", Meter.Type.COUNTER, null),
  ENTRIES_OUTSIDE_WINDOW("profold.entries.outside.window", Meter.Type.COUNTER, null),
  INGEST_RECEIVED("profold.ingest.received", Meter.Type.COUNTER, "bytes"),
  INGEST_PENDING("profold.ingest.pending", Meter.Type.GAUGE, "bytes"),
  INGEST_PUSH_PAUSED("profold.ingest.push.paused", Meter.Type.COUNTER, null),
  INGEST_PUSH_OVERLOADED("profold.ingest.push.overloaded", Meter.Type.COUNTER, null),
  INGEST_PUSH_STREAMS("profold.ingest.push.streams", Meter.Type.GAUGE, null),
  INGEST_CALL_EVENTS_QUEUED("profold.ingest.call.events.queued", Meter.Type.GAUGE, null),
  SEQUENCE_GAPS("profold.sequence.gaps", Meter.Type.COUNTER, null),
  SOURCE_RESTARTS("profold.source.restarts", Meter.Type.COUNTER, null),
  SOURCES_EXPIRED("profold.sources.expired", Meter.Type.COUNTER, null),
  SOURCES_ACTIVE("profold.sources.active", Meter.Type.GAUGE, null),
  DICTIONARY_ENTRIES("profold.dictionary.entries", Meter.Type.GAUGE, null),
  DICTIONARY_ENTRIES_LIMIT("profold.dictionary.entries.limit", Meter.Type.GAUGE, null),
  DICTIONARY_FREED("profold.dictionary.freed", Meter.Type.COUNTER, null),
  STREAM_IDS("profold.stream.ids", Meter.Type.GAUGE, null),
  STREAM_IDS_LIMIT("profold.stream.ids.limit", Meter.Type.GAUGE, null),
  FOLD_LATENCY("profold.fold.latency", Meter.Type.TIMER, null),
  FOLD_UP("profold.fold.up", Meter.Type.GAUGE, null),
  CONFIG_RELOADS("profold.config.reloads", Meter.Type.COUNTER, null),
  SCHEME_OVERFLOW_MEASUREMENTS("profold.scheme.overflow.measurements", Meter.Type.COUNTER, null),
  SCHEME_COUNTS_SATURATED("profold.scheme.counts.saturated", Meter.Type.COUNTER, null),
  EXPOSITION_SERIES_LEFT_OUT("profold.exposition.series.left.out", Meter.Type.COUNTER, null),
  THREAD_GROUPS_EVICTED("profold.thread.groups.evicted", Meter.Type.COUNTER, null),
  ARCHIVE_INTERVALS_WRITTEN("profold.archive.intervals.written", Meter.Type.COUNTER, null),
  ARCHIVE_INTERVALS_DROPPED("profold.archive.intervals.dropped", Meter.Type.COUNTER, null),
  ALERT_EVALUATIONS("profold.alert.evaluations", Meter.Type.COUNTER, null),
  ALERT_EVALUATIONS_SKIPPED("profold.alert.evaluations.skipped", Meter.Type.COUNTER, null),
  ALERT_NOTIFICATIONS("profold.alert.notifications", Meter.Type.COUNTER, null),
  ALERT_NOTIFICATION_ERRORS("profold.alert.notification.errors", Meter.Type.COUNTER, null);

  private static final String PREFIX = "profold_";

  private final String meterName;
  private final Meter.Type type;
  private final String baseUnit; // null: none

  OwnMeter(String meterName, Meter.Type type, String baseUnit) {
    this.meterName = meterName;
    this.type = type;
    this.baseUnit = baseUnit;
  }

  /** The Micrometer name, such as {@code profold.deltas.received}. */
  public String meterName() {
    return meterName;
  }

  /** A counter builder for this meter (which must be a counter), with its base unit. */
  public Counter.Builder counter() {
    expect(Meter.Type.COUNTER);
    return Counter.builder(meterName).baseUnit(baseUnit);
  }

  /**
   * A builder of a counter (this meter must be one) whose count is {@code f} of {@code obj}, for a
   * count kept elsewhere.
   */
  public <T> FunctionCounter.Builder<T> functionCounter(T obj, ToDoubleFunction<T> f) {
    expect(Meter.Type.COUNTER);
    return FunctionCounter.builder(meterName, obj, f).baseUnit(baseUnit);
  }

  /** A gauge builder for this meter (which must be a gauge) over {@code f} of {@code obj}. */
  public <T> Gauge.Builder<T> gauge(T obj, ToDoubleFunction<T> f) {
    expect(Meter.Type.GAUGE);
    return Gauge.builder(meterName, obj, f).baseUnit(baseUnit);
  }

  /** A timer builder for this meter (which must be a timer). */
  public Timer.Builder timer() {
    expect(Meter.Type.TIMER);
    return Timer.builder(meterName);
  }

  private void expect(Meter.Type t) {
    if (type != t) {
      throw new IllegalStateException(meterName + " is a " + type + ", not a " + t);
    }
  }

  /**
   * The sample names this meter has in /metrics (Micrometer's Prometheus naming): {@code _total}
   * for a counter; {@code _bucket}, {@code _count}, {@code _sum} and {@code _max} for a timer.
   */
  public List<String> sampleNames() {
    String base = new PrometheusNamingConvention().name(meterName, type, baseUnit);
    return switch (type) {
      case COUNTER -> List.of(base + "_total");
      case TIMER -> List.of(base + "_bucket", base + "_count", base + "_sum", base + "_max");
      default -> List.of(base);
    };
  }

  /**
   * The sample names of the collector's own meters that start with {@code profold_<scheme>_}, in
   * order: the metrics a scheme named {@code scheme} (whose families are all {@code
   * profold_<scheme>_...}) could meet, failing every scrape, with a measurement of the right name.
   * Empty when there are none.
   */
  public static List<String> familiesUnder(String scheme) {
    String prefix = PREFIX + scheme + "_";
    TreeSet<String> out = new TreeSet<>();
    for (OwnMeter m : values()) {
      for (String n : m.sampleNames()) {
        if (n.startsWith(prefix)) {
          out.add(n);
        }
      }
    }
    return new ArrayList<>(out);
  }
}
