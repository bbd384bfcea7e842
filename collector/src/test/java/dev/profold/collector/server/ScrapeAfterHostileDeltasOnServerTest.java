package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.RunningCollector;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.ExponentialHistogram;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.proto.v1.RegionKind;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * A second, hostile or buggy client (evil/e-1) sends deltas at the edges of the protocol; /metrics
 * must still answer, in text and in protobuf, with the well-behaved client's data (checkout/i-1,
 * pushed by {@link RunningCollector#withData()}). Each of these inputs used to make every scrape
 * fail with HTTP 500 until the collector restarted.
 */
class ScrapeAfterHostileDeltasOnServerTest {
  private static final String PROTOBUF =
      "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;"
          + " encoding=delimited";

  private static HttpResponse<String> scrape(RunningCollector c) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(c.httpBase() + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString());
  }

  private static int protobufScrape(RunningCollector c) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(c.httpBase() + "/metrics"))
                .header("Accept", PROTOBUF)
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private static void assertScrapeServesCheckout(RunningCollector c) throws Exception {
    HttpResponse<String> r = scrape(c);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body()).contains("service=\"checkout\"");
    assertThat(protobufScrape(c)).isEqualTo(200);
  }

  private static Deltas.Builder evil(long seq) {
    return Deltas.source("evil", "e-1").seq(seq).region(1, "main", RegionKind.REGION_KIND_COMPUTE);
  }

  private static Delta evil(long seq, MetricState state) {
    return evil(seq).entry(entry(state)).build();
  }

  private static Entry entry(MetricState state) {
    return Entry.newBuilder()
        .addKey(Deltas.regionKey(1))
        .addMeasurements(Measurement.newBuilder().setAttributeId(Deltas.TIME).setState(state))
        .build();
  }

  private static MetricState.Builder moments(long count) {
    return MetricState.newBuilder()
        .setCount(count)
        .setSum(1)
        .setMin(1)
        .setMax(1)
        .setSumOfSquares(1);
  }

  /** One value in bucket {@code offset} at {@code scale}. */
  private static MetricState state(int scale, int offset) {
    return moments(1)
        .setHistogram(
            ExponentialHistogram.newBuilder()
                .setScale(scale)
                .setPositive(
                    ExponentialHistogram.Buckets.newBuilder().setOffset(offset).addCounts(1)))
        .build();
  }

  private static void assertRefused(RunningCollector c, Delta d, String message) {
    assertThatThrownBy(() -> c.push(d))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).contains(message);
            });
  }

  /** Scale 0, one value in bucket 2000: a bound of 2^2001, which no double has. */
  @Test
  void aBucketBeyondTheDoublesIsRefusedAndScrapesGoOn() throws Exception {
    try (RunningCollector c = RunningCollector.withData()) {
      assertRefused(c, evil(1, state(0, 2000)), "bucket 2000 (offset 2000 + 0) is outside");
      assertScrapeServesCheckout(c);
    }
  }

  /** Runs at scale -10 near Integer.MAX_VALUE and MIN_VALUE drove the group below scale -10. */
  @Test
  void farApartBucketRunsAreRefusedAndScrapesGoOn() throws Exception {
    try (RunningCollector c = RunningCollector.withData()) {
      assertRefused(c, evil(1, state(-10, Integer.MAX_VALUE - 10)), "is outside -2..0");
      assertRefused(c, evil(2, state(-10, Integer.MIN_VALUE)), "is outside -2..0");
      assertScrapeServesCheckout(c);
    }
  }

  /**
   * A consistent state at scale -5, inside the protocol's -10..20 but below Prometheus's lowest
   * native schema -4: exposed with classic buckets only.
   */
  @Test
  void aHistogramAtScaleMinus5IsExposedWithClassicBuckets() throws Exception {
    try (RunningCollector c = RunningCollector.withData()) {
      c.push(evil(1, state(-5, -1))); // 1.0 is in bucket -1 at every scale <= 0
      assertScrapeServesCheckout(c);
      assertThat(scrape(c).body())
          .contains(
              "profold_region_time_seconds_bucket{instance=\"e-1\",kind=\"compute\","
                  + "path=\"main\",service=\"evil\",le=\"1.0\"} 1\n");
    }
  }

  /** count = 2^63 - 1, then 1: the cumulative count wrapped to a negative number. */
  @Test
  void anAbsurdCountIsRefusedAndScrapesGoOn() throws Exception {
    try (RunningCollector c = RunningCollector.withData()) {
      assertRefused(
          c,
          evil(1, moments(Long.MAX_VALUE).build()),
          "state.count: too large: at most 2^53 (9007199254740992) values per measurement");
      c.push(evil(2, moments(1).build()));
      assertScrapeServesCheckout(c);
    }
  }

  /**
   * Counts of 2^53 are allowed, and 1024 of them reach 2^63: the group's count stops at 2^63 - 1,
   * the series keeps only its +Inf bucket and the saturation is counted.
   */
  @Test
  void aCumulativeCountSaturatesInsteadOfWrapping() throws Exception {
    try (RunningCollector c = RunningCollector.withData()) {
      Deltas.Builder b = evil(1);
      MetricState most =
          moments(1L << 53)
              .setHistogram(
                  ExponentialHistogram.newBuilder()
                      .setScale(0)
                      .setPositive(
                          ExponentialHistogram.Buckets.newBuilder()
                              .setOffset(-1)
                              .addCounts(1L << 53)))
              .build();
      for (int i = 0; i < 1025; i++) {
        b.entry(entry(most));
      }
      c.push(b.build());
      assertScrapeServesCheckout(c);
      String body = scrape(c).body();
      String l = "instance=\"e-1\",kind=\"compute\",path=\"main\",service=\"evil\"";
      assertThat(body)
          .contains(
              "profold_region_time_seconds_bucket{" + l + ",le=\"+Inf\"} 9223372036854775807\n")
          .doesNotContain("profold_region_time_seconds_bucket{" + l + ",le=\"1.0\"}")
          .contains("profold_scheme_counts_saturated_total{scheme=\"region\"}")
          .doesNotContain("profold_scheme_counts_saturated_total{scheme=\"region\"} 0.0\n");
    }
  }
}
