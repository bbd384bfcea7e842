package dev.profold.benchmarks;

import dev.profold.client.Kind;
import dev.profold.client.Measure;
import dev.profold.client.Profold;
import dev.profold.client.ProfoldConfig;
import dev.profold.client.Region;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.ExemplarFilter;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The client library's hot path side by side with floors and peers, in one run: what one recorded
 * value costs the application thread, in ns/op (and B/op under {@code -prof gc}).
 *
 * <ul>
 *   <li><b>Profold</b> (started for real, collector unreachable on purpose: the exporter retries in
 *       the background; the interval is 10 minutes, so at most one flush in ten minutes can fall
 *       inside a benchmark): a region enter+exit pair by name, a scoped string attribute, a value
 *       recorded by name, and a value recorded through a pre-resolved {@link Measure}.
 *   <li><b>Floors</b>: an empty method (JMH's own overhead), two {@link System#nanoTime()} calls
 *       (what any region timer has to pay), {@link LongAdder#increment()}.
 *   <li><b>Peers</b>, one value per op, each into one series: an OpenTelemetry SDK {@link
 *       DoubleHistogram} with delta temporality, bound (a constant {@link Attributes}) and unbound
 *       ({@code Attributes.of} per call); a Micrometer {@link Timer} of a {@link
 *       PrometheusMeterRegistry}; a Prometheus client_java 1.x classic {@link Histogram} through
 *       {@code labelValues(..).observe(..)}; an HdrHistogram {@link Recorder}. Exemplars are off
 *       where a peer has them (Profold records none).
 * </ul>
 *
 * <p>Methods suffixed {@code 2Threads}/{@code 4Threads} run the same operation on 2 or 4 threads at
 * once on the <i>same</i> region or series, to show whether writers share a cache line. The {@code
 * cpuWork} variants (thread-local CPU work) are the reference for those: on a machine with fewer
 * cores than threads they show what oversubscription alone does to ns/op. The {@code nanoTimePair}
 * variants show how the clock behaves under concurrency (a region reads it twice), and {@code
 * measureRecord} at 2 and 4 threads is Profold's per-thread table path without the clock.
 *
 * <p>Inputs are read from non-final state fields so the JIT cannot fold them.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ClientHotPathBenchmark {
  static final String REGION = "db.query";
  static final long CPU_TOKENS = 16;

  // ---------------------------------------------------------------- states

  /** A started Profold shared by all benchmark threads. */
  @State(Scope.Benchmark)
  public static class ProfoldState {
    public double value = 1234.0;
    Measure measure;
    Measure other;

    @Setup(Level.Trial)
    public void start() {
      boolean started =
          Profold.start(
              ProfoldConfig.builder()
                  .endpoint("127.0.0.1:1")
                  .service("bench")
                  .interval(Duration.ofMinutes(10))
                  .build());
      if (!started || !Profold.isStarted()) {
        throw new IllegalStateException("Profold did not start");
      }
      try (Region r = Profold.region(REGION, Kind.IO)) {
        if (r.getClass().getEnclosingClass() == Profold.class) {
          throw new IllegalStateException("Profold.region returned the no-op handle");
        }
      }
      measure = Profold.measure("payload", "bytes");
      other = Profold.measure("rows", "");
    }

    @TearDown(Level.Trial)
    public void stop() {
      Profold.shutdown(Duration.ofMillis(100));
    }
  }

  /** A shared {@link LongAdder}. */
  @State(Scope.Benchmark)
  public static class AdderState {
    final LongAdder adder = new LongAdder();
  }

  /**
   * An OpenTelemetry SDK meter provider whose only reader asks for delta temporality and collects
   * once, at teardown (to check that the values arrived).
   */
  @State(Scope.Benchmark)
  public static class OtelState {
    static final AttributeKey<String> KEY = AttributeKey.stringKey("region");
    public double value = 1234.0;
    public String regionName = REGION;
    final DeltaReader reader = new DeltaReader();
    SdkMeterProvider provider;
    DoubleHistogram histogram;
    Attributes bound;

    @Setup(Level.Trial)
    public void setUp() {
      provider =
          SdkMeterProvider.builder()
              .registerMetricReader(reader)
              .setExemplarFilter(ExemplarFilter.alwaysOff())
              .build();
      histogram = provider.get("bench").histogramBuilder("db.query.duration").setUnit("ms").build();
      bound = Attributes.of(KEY, REGION);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      long count = 0;
      for (MetricData m : reader.registration.collectAllMetrics()) {
        for (HistogramPointData p : m.getHistogramData().getPoints()) {
          count += p.getCount();
        }
      }
      provider.close();
      if (count == 0) {
        throw new IllegalStateException("the OpenTelemetry histogram recorded nothing");
      }
    }
  }

  /** Delta temporality for every instrument; no background collection. */
  static final class DeltaReader implements MetricReader {
    volatile CollectionRegistration registration = CollectionRegistration.noop();

    @Override
    public void register(CollectionRegistration registration) {
      this.registration = registration;
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
      return AggregationTemporality.DELTA;
    }

    @Override
    public CompletableResultCode forceFlush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  /** A Micrometer timer (count, total, max; no histogram) of a Prometheus registry. */
  @State(Scope.Benchmark)
  public static class MicrometerState {
    public long nanos = 1234;
    PrometheusMeterRegistry registry;
    Timer timer;

    @Setup(Level.Trial)
    public void setUp() {
      registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      timer = Timer.builder("db.query").tag("region", REGION).register(registry);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      long count = timer.count();
      registry.close();
      if (count == 0) {
        throw new IllegalStateException("the Micrometer timer recorded nothing");
      }
    }
  }

  /** A Prometheus client_java classic histogram (default buckets) with one label. */
  @State(Scope.Benchmark)
  public static class PrometheusState {
    public double seconds = 1.234e-3;
    public String regionName = REGION;
    Histogram histogram;

    @Setup(Level.Trial)
    public void setUp() {
      histogram =
          Histogram.builder()
              .name("db_query_seconds")
              .help("benchmark")
              .labelNames("region")
              .classicOnly()
              .withoutExemplars()
              .register(new PrometheusRegistry());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      if (histogram.collect().getDataPoints().get(0).getCount() == 0) {
        throw new IllegalStateException("the Prometheus histogram recorded nothing");
      }
    }
  }

  /** An HdrHistogram {@link Recorder}: 1 ns to 1 h, 2 significant digits. */
  @State(Scope.Benchmark)
  public static class HdrState {
    public long nanos = 1234;
    final Recorder recorder = new Recorder(1, TimeUnit.HOURS.toNanos(1), 2);

    @TearDown(Level.Trial)
    public void tearDown() {
      if (recorder.getIntervalHistogram().getTotalCount() == 0) {
        throw new IllegalStateException("the HdrHistogram recorder recorded nothing");
      }
    }
  }

  // ---------------------------------------------------------------- Profold

  @SuppressWarnings("try") // the region's body is empty on purpose
  private static void regionPairOnce() {
    try (Region r = Profold.region(REGION, Kind.IO)) {}
  }

  /** Region enter + exit by name: two nanoTime calls and one value into the thread's table. */
  @Benchmark
  public void regionPair(ProfoldState s) {
    regionPairOnce();
  }

  @Benchmark
  @Threads(2)
  public void regionPair2Threads(ProfoldState s) {
    regionPairOnce();
  }

  @Benchmark
  @Threads(4)
  public void regionPair4Threads(ProfoldState s) {
    regionPairOnce();
  }

  /**
   * An asynchronous region opened and closed (here on the same thread; any thread may close it):
   * the region's look-up, a handle allocated, the context's word pinned and unpinned, two nanoTime
   * calls and one value. Its peer is {@link #micrometerSample}.
   */
  @Benchmark
  public void asyncRegionPair(ProfoldState s) {
    Profold.asyncRegion(REGION, Kind.IO).end();
  }

  /** A scoped string attribute, opened and closed (records nothing). */
  @Benchmark
  @SuppressWarnings("try")
  public void scopedAttribute(ProfoldState s) {
    try (dev.profold.client.Scope a = Profold.with("tenant", "42")) {}
  }

  /** One value recorded by measurement name (resolves the name on every call). */
  @Benchmark
  public void recordByName(ProfoldState s) {
    Profold.record("bytes", s.value);
  }

  /** One value recorded through a pre-resolved {@link Measure}. */
  @Benchmark
  public void measureRecord(ProfoldState s) {
    s.measure.record(s.value);
  }

  /**
   * Two measures recorded in turn in the same context: each record finds another cell than the one
   * recorded last, so none takes the table's last-cell shortcut (per record, half of this).
   */
  @Benchmark
  public void measureRecordTwoMeasures(ProfoldState s) {
    s.measure.record(s.value);
    s.other.record(s.value);
  }

  /** The same measure and context on 2 threads: the per-thread tables without the clock. */
  @Benchmark
  @Threads(2)
  public void measureRecord2Threads(ProfoldState s) {
    s.measure.record(s.value);
  }

  @Benchmark
  @Threads(4)
  public void measureRecord4Threads(ProfoldState s) {
    s.measure.record(s.value);
  }

  // ---------------------------------------------------------------- floors

  /** An empty method: JMH's own per-call overhead. */
  @Benchmark
  public void baseline() {}

  /** Two {@link System#nanoTime()} calls, the least a region timer can cost. */
  @Benchmark
  public long nanoTimePair() {
    long start = System.nanoTime();
    return System.nanoTime() - start;
  }

  @Benchmark
  @Threads(2)
  public long nanoTimePair2Threads() {
    return nanoTimePair();
  }

  @Benchmark
  @Threads(4)
  public long nanoTimePair4Threads() {
    return nanoTimePair();
  }

  /**
   * Thread-local CPU work ({@link Blackhole#consumeCPU}, 25 to 30 ns here) that shares nothing: its
   * 2- and 4-thread variants show what the machine alone does to ns/op as threads are added.
   */
  @Benchmark
  public void cpuWork() {
    Blackhole.consumeCPU(CPU_TOKENS);
  }

  @Benchmark
  @Threads(2)
  public void cpuWork2Threads() {
    Blackhole.consumeCPU(CPU_TOKENS);
  }

  @Benchmark
  @Threads(4)
  public void cpuWork4Threads() {
    Blackhole.consumeCPU(CPU_TOKENS);
  }

  @Benchmark
  public void longAdderIncrement(AdderState s) {
    s.adder.increment();
  }

  // ---------------------------------------------------------------- peers

  /** OpenTelemetry histogram, attributes built once. */
  @Benchmark
  public void otelBound(OtelState s) {
    s.histogram.record(s.value, s.bound);
  }

  @Benchmark
  @Threads(2)
  public void otelBound2Threads(OtelState s) {
    s.histogram.record(s.value, s.bound);
  }

  @Benchmark
  @Threads(4)
  public void otelBound4Threads(OtelState s) {
    s.histogram.record(s.value, s.bound);
  }

  /**
   * What timing a region with OpenTelemetry costs: two {@link System#nanoTime()} calls and the
   * bound record of the difference (the like-for-like peer of {@link #regionPair}).
   */
  @Benchmark
  public void otelBoundTimed(OtelState s) {
    long start = System.nanoTime();
    s.histogram.record((System.nanoTime() - start) * 1e-6, s.bound);
  }

  /** OpenTelemetry histogram, {@code Attributes.of} on every call. */
  @Benchmark
  public void otelUnbound(OtelState s) {
    s.histogram.record(s.value, Attributes.of(OtelState.KEY, s.regionName));
  }

  @Benchmark
  @Threads(2)
  public void otelUnbound2Threads(OtelState s) {
    s.histogram.record(s.value, Attributes.of(OtelState.KEY, s.regionName));
  }

  @Benchmark
  @Threads(4)
  public void otelUnbound4Threads(OtelState s) {
    s.histogram.record(s.value, Attributes.of(OtelState.KEY, s.regionName));
  }

  /** Micrometer {@code Timer.record(long, TimeUnit)}. */
  @Benchmark
  public void micrometerTimer(MicrometerState s) {
    s.timer.record(s.nanos, TimeUnit.NANOSECONDS);
  }

  @Benchmark
  @Threads(2)
  public void micrometerTimer2Threads(MicrometerState s) {
    s.timer.record(s.nanos, TimeUnit.NANOSECONDS);
  }

  @Benchmark
  @Threads(4)
  public void micrometerTimer4Threads(MicrometerState s) {
    s.timer.record(s.nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Micrometer's timing that may end on another thread: {@code Timer.start(registry)} (a sample
   * allocated, the registry's clock read) then {@code sample.stop(timer)}; the peer of {@link
   * #asyncRegionPair}.
   */
  @Benchmark
  public long micrometerSample(MicrometerState s) {
    return Timer.start(s.registry).stop(s.timer);
  }

  /** Prometheus client_java {@code labelValues(..).observe(..)}. */
  @Benchmark
  public void prometheusHistogram(PrometheusState s) {
    s.histogram.labelValues(s.regionName).observe(s.seconds);
  }

  @Benchmark
  @Threads(2)
  public void prometheusHistogram2Threads(PrometheusState s) {
    s.histogram.labelValues(s.regionName).observe(s.seconds);
  }

  @Benchmark
  @Threads(4)
  public void prometheusHistogram4Threads(PrometheusState s) {
    s.histogram.labelValues(s.regionName).observe(s.seconds);
  }

  /** HdrHistogram {@code Recorder.recordValue}. */
  @Benchmark
  public void hdrRecorder(HdrState s) {
    s.recorder.recordValue(s.nanos);
  }

  @Benchmark
  @Threads(2)
  public void hdrRecorder2Threads(HdrState s) {
    s.recorder.recordValue(s.nanos);
  }

  @Benchmark
  @Threads(4)
  public void hdrRecorder4Threads(HdrState s) {
    s.recorder.recordValue(s.nanos);
  }
}
