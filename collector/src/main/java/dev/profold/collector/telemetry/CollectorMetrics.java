package dev.profold.collector.telemetry;

import dev.profold.collector.dictionary.GlobalDictionary;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The collector's own telemetry as Micrometer meters (exposed as {@code profold_*} in /metrics,
 * listed in docs/metrics.md; names in {@link OwnMeter}). Thread-safe; recording never blocks.
 *
 * <p>Counters that only move when something goes wrong exist at 0 from the start, so that {@code
 * rate()} and alerts on them work before the first event: every {@link RejectReason} from
 * construction, and a scheme's overflow and saturation counters from {@link #schemeStarted}.
 */
public final class CollectorMetrics {
  private final MeterRegistry registry;
  private final Counter deltasReceived;
  private final Counter deltasApplied;
  private final Counter deltasDuplicate;
  private final Counter pushPaused;
  private final Counter pushOverloaded;
  private final Counter entriesReceived;
  private final Counter bytesReceived;
  private final Counter missingDeltas;
  private final Counter sourceRestarts;
  private final Counter sourcesExpired;
  private final Counter late;
  private final Counter future;
  private final Timer foldLatency;
  private final AtomicLong activeSources = new AtomicLong();
  private final AtomicLong pendingBytes = new AtomicLong();
  private final Map<RejectReason, Counter> rejected = new EnumMap<>(RejectReason.class);
  private final ConcurrentMap<String, Counter> overflow = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Counter> saturated = new ConcurrentHashMap<>();

  public CollectorMetrics(MeterRegistry registry) {
    this.registry = registry;
    configReloads(true); // both results at 0 from the start
    configReloads(false);
    seriesLeftOutCounter(); // at 0: a bug counter to alert on
    deltasReceived = counter(OwnMeter.DELTAS_RECEIVED, "Deltas received, whatever became of them.");
    deltasApplied = counter(OwnMeter.DELTAS_APPLIED, "Deltas folded into the aggregates.");
    deltasDuplicate =
        counter(
            OwnMeter.DELTAS_DUPLICATE,
            "Deltas received again (retries) and acknowledged without applying.");
    pushPaused =
        counter(
            OwnMeter.INGEST_PUSH_PAUSED,
            "Times a Push stream stopped being read because its client did not read its acks.");
    pushOverloaded =
        counter(
            OwnMeter.INGEST_PUSH_OVERLOADED,
            "Push streams ended with RESOURCE_EXHAUSTED because a rejection ack would have gone"
                + " over limits.max_pending_bytes.");
    entriesReceived = counter(OwnMeter.ENTRIES_RECEIVED, "Entries in applied deltas.");
    bytesReceived =
        OwnMeter.INGEST_RECEIVED
            .counter()
            .description("Serialized size of the deltas received.")
            .register(registry);
    missingDeltas =
        counter(
            OwnMeter.SEQUENCE_GAPS,
            "Deltas never received, as counted from gaps in sequence numbers.");
    sourceRestarts =
        counter(
            OwnMeter.SOURCE_RESTARTS,
            "New incarnations of a known service instance (process restarts).");
    sourcesExpired =
        counter(
            OwnMeter.SOURCES_EXPIRED, "Sources dropped after staying silent for the source TTL.");
    for (RejectReason r : RejectReason.values()) {
      rejected.put(
          r,
          OwnMeter.DELTAS_REJECTED
              .counter()
              .tag("reason", r.label())
              .description("Deltas not applied, by reason.")
              .register(registry));
    }
    late = outsideWindow("late");
    future = outsideWindow("future");
    foldLatency =
        OwnMeter.FOLD_LATENCY
            .timer()
            .description("Time to fold one delta into the aggregates.")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofNanos(1000))
            .maximumExpectedValue(Duration.ofSeconds(1))
            .register(registry);
    OwnMeter.SOURCES_ACTIVE
        .gauge(activeSources, AtomicLong::get)
        .description("Service instances currently sending (not yet expired).")
        .register(registry);
    OwnMeter.INGEST_PENDING
        .gauge(pendingBytes, AtomicLong::get)
        .description("Bytes of received deltas waiting to be folded.")
        .register(registry);
  }

  /** Reports whether the fold thread runs: 1 while {@code up} says so, else 0. */
  public void foldUp(java.util.function.BooleanSupplier up) {
    OwnMeter.FOLD_UP
        .gauge(up, u -> u.getAsBoolean() ? 1 : 0)
        .description(
            "1 while the fold thread runs; 0 once it failed (the collector refuses deltas and"
                + " must be restarted).")
        .strongReference(true)
        .register(registry);
  }

  /**
   * Reports the size of the collector-wide dictionary, the entries it freed and the ids the open
   * streams map.
   */
  public void dictionary(GlobalDictionary dictionary) {
    OwnMeter.DICTIONARY_ENTRIES
        .gauge(dictionary, GlobalDictionary::size)
        .description("Strings, attributes and path nodes in the collector-wide dictionary.")
        .strongReference(true)
        .register(registry);
    OwnMeter.DICTIONARY_ENTRIES_LIMIT
        .gauge(dictionary, GlobalDictionary::maxEntries)
        .description(
            "limits.dictionary_entries: beyond it, deltas with new definitions are refused.")
        .strongReference(true)
        .register(registry);
    OwnMeter.DICTIONARY_FREED
        .functionCounter(dictionary, GlobalDictionary::freed)
        .description(
            "Strings, attributes and path nodes freed from the dictionary once no open stream"
                + " used them.")
        .register(registry);
    OwnMeter.STREAM_IDS
        .gauge(dictionary, GlobalDictionary::streamIds)
        .description(
            "Ids of definitions all open streams map to the dictionary's entries (each stream its"
                + " own).")
        .strongReference(true)
        .register(registry);
    OwnMeter.STREAM_IDS_LIMIT
        .gauge(dictionary, GlobalDictionary::maxStreamIds)
        .description("limits.stream_ids: beyond it, deltas with new definitions are refused.")
        .strongReference(true)
        .register(registry);
  }

  private Counter counter(OwnMeter meter, String description) {
    return meter.counter().description(description).register(registry);
  }

  private Counter outsideWindow(String reason) {
    return OwnMeter.ENTRIES_OUTSIDE_WINDOW
        .counter()
        .tag("reason", reason)
        .description(
            "Entry measurements too old (or too far ahead) for any open interval window;"
                + " folded into cumulative state only.")
        .register(registry);
  }

  public void deltaReceived(int bytes) {
    deltasReceived.increment();
    bytesReceived.increment(bytes);
  }

  public void deltaApplied(int entries) {
    deltasApplied.increment();
    entriesReceived.increment(entries);
  }

  public void deltaDuplicate() {
    deltasDuplicate.increment();
  }

  /** A delta not applied, for {@code reason}. */
  public void deltaRejected(RejectReason reason) {
    rejected.get(reason).increment();
  }

  /**
   * A Push stream ended with RESOURCE_EXHAUSTED because a rejection ack would have gone over
   * limits.max_pending_bytes.
   */
  public void pushOverloaded() {
    pushOverloaded.increment();
  }

  /** Reports the Push streams open now, as {@code open} counts them. */
  public void pushStreams(java.util.function.IntSupplier open) {
    OwnMeter.INGEST_PUSH_STREAMS
        .gauge(open, o -> o.getAsInt())
        .description("Push streams open now: about one per connected client process.")
        .strongReference(true)
        .register(registry);
  }

  /**
   * gRPC call events (a delta to decode, a call starting or ending) waiting for one of the server's
   * call threads; {@code queued} is read at each scrape.
   */
  public void callEventsQueued(java.util.function.IntSupplier queued) {
    OwnMeter.INGEST_CALL_EVENTS_QUEUED
        .gauge(queued, q -> q.getAsInt())
        .description(
            "gRPC call events (deltas to decode, calls starting or ending) waiting for a call"
                + " thread.")
        .strongReference(true)
        .register(registry);
  }

  /** A Push stream stopped being read until its client takes its acks. */
  public void pushPaused() {
    pushPaused.increment();
  }

  public void missingDeltas(long n) {
    missingDeltas.increment((double) n);
  }

  public void sourceRestarted() {
    sourceRestarts.increment();
  }

  /** A config reload attempt: {@code ok} when applied, else refused (the old config stays). */
  public void configReload(boolean ok) {
    configReloads(ok).increment();
  }

  private Counter configReloads(boolean ok) {
    return OwnMeter.CONFIG_RELOADS
        .counter()
        .tag("result", ok ? "ok" : "error")
        .description("Config file reloads (SIGHUP or file change), by result.")
        .register(registry);
  }

  public void sourceExpired() {
    sourcesExpired.increment();
  }

  public void lateMeasurements(int n) {
    late.increment(n);
  }

  public void futureMeasurements(int n) {
    future.increment(n);
  }

  /**
   * Scheme {@code scheme} no longer runs (a reload removed it): its counters leave the scrape, as
   * its series do.
   */
  public void schemeStopped(String scheme) {
    for (ConcurrentMap<String, Counter> by : List.of(overflow, saturated)) {
      Counter c = by.remove(scheme);
      if (c != null) {
        registry.remove(c);
      }
    }
  }

  /**
   * Registers the counters of scheme {@code scheme} that only move on overflow or saturation, at 0
   * (again for a scheme that still runs: then they keep their counts; a scheme a reload removed and
   * a later one adds again starts at 0).
   */
  public void schemeStarted(String scheme) {
    overflowCounter(scheme);
    saturatedCounter(scheme);
  }

  /** A group state of {@code scheme} whose count reached 2^63 - 1 and stopped there. */
  public void countsSaturated(String scheme) {
    saturatedCounter(scheme).increment();
  }

  private Counter saturatedCounter(String scheme) {
    return schemeCounter(
        saturated,
        OwnMeter.SCHEME_COUNTS_SATURATED,
        "Group states (cumulative or of an interval) whose count reached 2^63 - 1 and stopped"
            + " there; their distribution is no longer known.",
        scheme);
  }

  /** Scheme {@code scheme}'s counter of {@code meter}, registered once and kept in {@code by}. */
  private Counter schemeCounter(
      ConcurrentMap<String, Counter> by, OwnMeter meter, String description, String scheme) {
    return by.computeIfAbsent(
        scheme, s -> meter.counter().tag("scheme", s).description(description).register(registry));
  }

  /** A series left out of a scrape because Prometheus's model refused it (a collector bug). */
  public void seriesLeftOut() {
    seriesLeftOutCounter().increment();
  }

  private Counter seriesLeftOutCounter() {
    return OwnMeter.EXPOSITION_SERIES_LEFT_OUT
        .counter()
        .description(
            "Series left out of a scrape because Prometheus's model refused them (a collector"
                + " bug; each distinct series is logged once).")
        .register(registry);
  }

  /** {@code n} entry measurements folded into an overflow group of {@code scheme}. */
  public void overflowed(String scheme, int n) {
    overflowCounter(scheme).increment(n);
  }

  private Counter overflowCounter(String scheme) {
    return schemeCounter(
        overflow,
        OwnMeter.SCHEME_OVERFLOW_MEASUREMENTS,
        "Entry measurements folded into a scheme's overflow group because the scheme reached its"
            + " cardinality limit.",
        scheme);
  }

  /** Thread groups of a source forgotten because it reported more than the limit over time. */
  public void threadGroupsEvicted(int n) {
    OwnMeter.THREAD_GROUPS_EVICTED
        .counter()
        .description(
            "Thread groups whose activity totals were forgotten because a source reported more"
                + " distinct groups than the per-source limit (least recently reported first).")
        .register(registry)
        .increment(n);
  }

  public void foldNanos(long nanos) {
    foldLatency.record(nanos, TimeUnit.NANOSECONDS);
  }

  public void activeSources(long n) {
    activeSources.set(n);
  }

  public AtomicLong pendingBytes() {
    return pendingBytes;
  }

  public MeterRegistry registry() {
    return registry;
  }
}
