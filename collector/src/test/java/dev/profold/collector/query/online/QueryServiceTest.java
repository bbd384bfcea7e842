package dev.profold.collector.query.online;

import static dev.profold.collector.query.online.SnapshotFixtures.S;
import static dev.profold.collector.query.online.SnapshotFixtures.T0;
import static dev.profold.collector.query.online.SnapshotFixtures.interval;
import static dev.profold.collector.query.online.SnapshotFixtures.scheme;
import static dev.profold.collector.query.online.SnapshotFixtures.snapshot;
import static dev.profold.collector.query.online.SnapshotFixtures.time;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.proto.v1.Cell;
import dev.profold.proto.v1.QueryFormat;
import dev.profold.proto.v1.QueryGrpc;
import dev.profold.proto.v1.QueryRequest;
import dev.profold.proto.v1.QueryResponse;
import dev.profold.proto.v1.TimeInterval;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.SnapshotSource;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The profold.v1.Query service over in-process gRPC, on snapshots built from known values. */
class QueryServiceTest {
  private final AtomicReference<SnapshotSource> source = new AtomicReference<>();
  private final AtomicReference<Executor> executor = new AtomicReference<>(Runnable::run);
  private Server server;
  private ManagedChannel channel;
  private QueryGrpc.QueryBlockingStub stub;

  /**
   * Scheme "region": cumulative checkout/main 0.25, 0.5, 1.0 and search/main 2.0; retained
   * intervals 0 (checkout 0.25), 1 (checkout 0.5, search 2.0), 2 (checkout 1.0). Scheme "tenant"
   * exists to be listed.
   */
  private static CollectorSnapshot fixture() {
    return snapshot(
        scheme(
            "region",
            "SELECT service, sum(time) GROUP BY service ORDER BY service",
            List.of(time("checkout", "main", 0.25, 0.5, 1.0), time("search", "main", 2.0)),
            List.of(
                interval(0, time("checkout", "main", 0.25)),
                interval(1, time("checkout", "main", 0.5), time("search", "main", 2.0)),
                interval(2, time("checkout", "main", 1.0)))),
        scheme("tenant", "", List.of(), List.of()));
  }

  @BeforeEach
  void start() throws Exception {
    CollectorSnapshot fixed = fixture();
    source.set(() -> fixed);
    String name = InProcessServerBuilder.generateName();
    server =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(
                new QueryService(
                    new OnlineQuery(() -> source.get().snapshot()),
                    task -> executor.get().execute(task)))
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    stub = QueryGrpc.newBlockingStub(channel);
  }

  @AfterEach
  void stop() {
    channel.shutdownNow();
    server.shutdownNow();
  }

  private static QueryRequest.Builder query(String q) {
    return QueryRequest.newBuilder().setQuery(q);
  }

  private StatusRuntimeException failure(QueryRequest.Builder r) {
    return catchThrowableOfType(StatusRuntimeException.class, () -> stub.run(r.build()));
  }

  @Test
  void aQueryWhoseClientGaveUpWhileItWaitedForAThreadIsNotRun() {
    // Queued queries ran after their clients had gone (a deadline passed), and retries kept the
    // two query threads busy with answers nobody read.
    java.util.List<Runnable> held = new java.util.ArrayList<>();
    executor.set(held::add);
    java.util.concurrent.atomic.AtomicInteger reads =
        new java.util.concurrent.atomic.AtomicInteger();
    CollectorSnapshot fixed = fixture();
    source.set(
        () -> {
          reads.incrementAndGet();
          return fixed;
        });
    io.grpc.Context.CancellableContext client = io.grpc.Context.current().withCancellation();
    client.run(
        () ->
            QueryGrpc.newStub(channel)
                .run(
                    query("SELECT count()").build(),
                    new io.grpc.stub.StreamObserver<>() {
                      @Override
                      public void onNext(dev.profold.proto.v1.QueryResponse r) {}

                      @Override
                      public void onError(Throwable t) {}

                      @Override
                      public void onCompleted() {}
                    }));
    assertThat(held).hasSize(1);
    client.cancel(null);
    held.get(0).run();
    assertThat(reads).as("the snapshot was not even read").hasValue(0);
  }

  @Test
  void theCumulativeStateGivesTypedCellsAndTheRenderedTable() {
    QueryResponse r =
        stub.run(
            query("SELECT service, count(), sum(time), avg(time) GROUP BY service ORDER BY service")
                .build());

    assertThat(r.getScheme()).isEqualTo("region");
    assertThat(r.getCumulative()).isTrue();
    assertThat(r.getIntervalsList()).isEmpty();
    assertThat(r.getNote()).isEmpty();
    assertThat(r.getColumnsList()).containsExactly("service", "count", "sum#time", "avg#time");
    assertThat(r.getRowsList()).hasSize(2);
    List<Cell> checkout = r.getRows(0).getCellsList();
    assertThat(checkout.get(0).getStringValue()).isEqualTo("checkout");
    assertThat(checkout.get(1).getValueCase()).isEqualTo(Cell.ValueCase.INT_VALUE);
    assertThat(checkout.get(1).getIntValue()).isEqualTo(3);
    assertThat(checkout.get(2).getDoubleValue()).isEqualTo(1.75);
    assertThat(checkout.get(3).getDoubleValue()).isEqualTo(1.75 / 3);
    assertThat(r.getRows(1).getCells(0).getStringValue()).isEqualTo("search");
    assertThat(r.getFormat()).isEqualTo(QueryFormat.QUERY_FORMAT_TABLE);
    assertThat(r.getRendered())
        .isEqualTo(
            String.format(
                "service   count  sum#time  avg#time%n"
                    + "checkout      3      1.75  0.583333%n"
                    + "search        1         2         2%n"));
  }

  @Test
  void aRangeMergesTheRetainedIntervalsInsideItAndReportsThem() {
    QueryResponse r =
        stub.run(
            query("SELECT service, count(), sum(time) GROUP BY service ORDER BY service")
                .setFromUnixNanos(T0 + 10 * S)
                .setToUnixNanos(T0 + 30 * S)
                .build());

    assertThat(r.getCumulative()).isFalse();
    assertThat(r.getIntervalsList())
        .containsExactly(
            TimeInterval.newBuilder()
                .setStartUnixNanos(T0 + 10 * S)
                .setEndUnixNanos(T0 + 20 * S)
                .build(),
            TimeInterval.newBuilder()
                .setStartUnixNanos(T0 + 20 * S)
                .setEndUnixNanos(T0 + 30 * S)
                .build());
    assertThat(r.getNote()).isEmpty();
    assertThat(r.getRows(0).getCells(1).getIntValue()).isEqualTo(2); // 0.5 and 1.0
    assertThat(r.getRows(0).getCells(2).getDoubleValue()).isEqualTo(1.5);
    assertThat(r.getRows(1).getCells(2).getDoubleValue()).isEqualTo(2.0);
  }

  @Test
  void aRangeReachingBackBeforeTheRetainedDataSaysSo() {
    QueryResponse r = stub.run(query("SELECT sum(time)").setToUnixNanos(T0 + 20 * S).build());
    assertThat(r.getIntervalsCount()).isEqualTo(2);
    assertThat(r.getRows(0).getCells(0).getDoubleValue()).isEqualTo(2.75);
    assertThat(r.getNote())
        .contains("reaches back before the oldest retained interval")
        .contains("[2024-01-01T00:00:00Z, 2024-01-01T00:00:30Z)");
  }

  @Test
  void aRangeWithoutRetainedDataIsAnEmptyResultWithANote() {
    QueryResponse r =
        stub.run(
            query("SELECT service, sum(time) GROUP BY service")
                .setFromUnixNanos(T0 + 12 * S)
                .setToUnixNanos(T0 + 18 * S)
                .setFormat(QueryFormat.QUERY_FORMAT_JSON)
                .build());
    assertThat(r.getRowsList()).isEmpty();
    assertThat(r.getIntervalsList()).isEmpty();
    assertThat(r.getRendered()).isEqualTo(String.format("[]%n"));
    assertThat(r.getNote())
        .isEqualTo(
            "no retained interval lies wholly inside"
                + " [2024-01-01T00:00:12Z, 2024-01-01T00:00:18Z);"
                + " retained intervals span [2024-01-01T00:00:00Z, 2024-01-01T00:00:30Z)");
  }

  @Test
  void aSchemeWithoutRetainedIntervalsSaysSoInTheNote() {
    QueryResponse r =
        stub.run(query("SELECT count()").setScheme("tenant").setFromUnixNanos(T0).build());
    assertThat(r.getRowsList()).isEmpty();
    assertThat(r.getNote()).startsWith("no closed interval is retained yet (scheme 'tenant'");
  }

  @Test
  void anEmptyQueryRunsTheSchemesOwn() {
    QueryResponse r = stub.run(QueryRequest.getDefaultInstance());
    assertThat(r.getQuery())
        .isEqualTo("SELECT service, sum(time) GROUP BY service ORDER BY service");
    assertThat(r.getColumnsList()).containsExactly("service", "sum#time");
    assertThat(r.getRows(0).getCells(1).getDoubleValue()).isEqualTo(1.75);
  }

  @Test
  void theFormatIsTheRequestsThenTheQuerysThenTable() throws Exception {
    QueryResponse csv = stub.run(query("SELECT count() FORMAT csv").build());
    assertThat(csv.getFormat()).isEqualTo(QueryFormat.QUERY_FORMAT_CSV);
    assertThat(csv.getRendered()).isEqualTo("count\r\n4\r\n");

    QueryResponse json =
        stub.run(
            query("SELECT service, count() GROUP BY service ORDER BY service FORMAT csv")
                .setFormat(QueryFormat.QUERY_FORMAT_JSON)
                .build());
    assertThat(json.getFormat()).isEqualTo(QueryFormat.QUERY_FORMAT_JSON);
    JsonNode rows = new ObjectMapper().readTree(json.getRendered());
    assertThat(rows.get(0).get("service").textValue()).isEqualTo("checkout");
    assertThat(rows.get(0).get("count").longValue()).isEqualTo(3);

    QueryResponse tree =
        stub.run(query("SELECT count()").setFormat(QueryFormat.QUERY_FORMAT_TREE).build());
    assertThat(tree.getFormat()).isEqualTo(QueryFormat.QUERY_FORMAT_TREE);
    assertThat(tree.getRendered()).isEqualTo(String.format("count%n    4%n"));
  }

  @Test
  void structuredValuesArriveAsJsonCellsAndMissingValuesAsEmptyCells() throws Exception {
    QueryResponse r =
        stub.run(
            query(
                    "SELECT service, histogram(time), ratio(time, missing) GROUP BY service"
                        + " ORDER BY service")
                .build());
    Cell histogram = r.getRows(1).getCells(1); // search: one value, 2.0
    assertThat(histogram.getValueCase()).isEqualTo(Cell.ValueCase.JSON_VALUE);
    JsonNode h = new ObjectMapper().readTree(histogram.getJsonValue());
    assertThat(h.get("buckets")).hasSize(1);
    assertThat(h.get("buckets").get(0).get("count").longValue()).isEqualTo(1);
    assertThat(h.get("buckets").get(0).get("upper").doubleValue()).isEqualTo(2.0);
    assertThat(r.getRows(1).getCells(2).getValueCase()).isEqualTo(Cell.ValueCase.VALUE_NOT_SET);
  }

  @Test
  void aBadQueryIsInvalidArgumentWithTheParsersColumn() {
    StatusRuntimeException e = failure(query("select count( group by f"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription())
        .isEqualTo("bad query: at column 21: expected ',' or ')', found 'by'");
  }

  @Test
  void aDeeplyNestedQueryIsInvalidArgumentNotAnError() {
    StatusRuntimeException e =
        failure(query("select count() where " + "(".repeat(30_000) + "a" + ")".repeat(30_000)));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription())
        .startsWith("bad query: at column 122: expected a condition nested at most 100 deep");
  }

  @Test
  void aCollectorWithNoSnapshotYetIsUnavailableNotAnUnknownScheme() {
    // Right after start: "unknown scheme 'region'" (NOT_FOUND, HTTP 404) for the built-in one.
    source.set(CollectorSnapshot::empty);
    StatusRuntimeException e = failure(query("SELECT count()"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.getStatus().getDescription())
        .isEqualTo(
            "the collector is starting and has no snapshot of its schemes yet; retry in a second");
  }

  @Test
  void anUnknownSchemeIsNotFoundAndListsTheSchemes() {
    StatusRuntimeException e = failure(query("SELECT count()").setScheme("nope"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(e.getStatus().getDescription())
        .isEqualTo("unknown scheme 'nope'; schemes: region, tenant");
  }

  @Test
  void anEmptyRangeIsInvalidArgument() {
    StatusRuntimeException e =
        failure(query("SELECT count()").setFromUnixNanos(T0 + S).setToUnixNanos(T0));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription()).startsWith("the range is empty: from (");
  }

  @Test
  void aSchemeWithoutAQueryNeedsOne() {
    StatusRuntimeException e = failure(QueryRequest.newBuilder().setScheme("tenant"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription()).contains("scheme 'tenant' has no configured query");
  }

  @Test
  void aFailureInsideIsInternalWithoutAStackTrace() {
    source.set(
        () -> {
          throw new IllegalStateException("snapshot broke");
        });
    StatusRuntimeException e = failure(query("SELECT count()"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(e.getStatus().getDescription())
        .contains("snapshot broke")
        .doesNotContain("\n")
        .doesNotContain("\tat ");
  }

  @Test
  void aQueryTooLongOrWithTooManyItemsIsRefusedBeforeItRuns() {
    // An 8 MB query of 200,000 items ran for 31 s and took the heap from 0.5 to 3.6 GB.
    StatusRuntimeException e = failure(query("SELECT count() " + " ".repeat(70_000)));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription())
        .isEqualTo("the query is 70015 characters long; at most 65536");
    e = failure(query("SELECT " + "count(), ".repeat(600) + "count()"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription())
        .isEqualTo("the query has 601 SELECT items; at most 512");
  }

  @Test
  void anAnswerOfTooManyCellsIsRefusedNamingTheFix() {
    QueryServiceTest.Limited limited = new QueryServiceTest.Limited(3);
    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                limited
                    .stub()
                    .run(
                        query(
                                "SELECT service, count(), sum(time), min(time), max(time),"
                                    + " avg(time), quantile(time, 0.5), quantile(time, 0.9),"
                                    + " quantile(time, 0.99) GROUP BY service")
                            .build()));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription())
        .startsWith("the answer would have 2 rows of 9 columns, more than 3 cells; narrow it");
    // At most 8 cells per record read: the scheme's own query answers, whatever the limit.
    assertThat(limited.stub().run(QueryRequest.newBuilder().build()).getRowsCount()).isEqualTo(2);
    assertThat(
            limited
                .stub()
                .run(query("SELECT service, count() GROUP BY service").build())
                .getRowsCount())
        .isEqualTo(2);
    limited.close();
  }

  /** A query service whose answers may have at most {@code maxCells} cells. */
  private final class Limited {
    final Server limitedServer;
    final ManagedChannel limitedChannel;

    Limited(long maxCells) {
      String name = InProcessServerBuilder.generateName();
      try {
        limitedServer =
            InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(
                    new QueryService(
                        new OnlineQuery(
                            () -> source.get().snapshot(), () -> null, () -> 0, maxCells),
                        Runnable::run))
                .build()
                .start();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      limitedChannel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    QueryGrpc.QueryBlockingStub stub() {
      return QueryGrpc.newBlockingStub(limitedChannel);
    }

    void close() {
      limitedChannel.shutdownNow();
      limitedServer.shutdownNow();
    }
  }

  @Test
  void aQueryThatRunsOutOfMemoryIsAnsweredResourceExhausted() {
    // The error ended the query thread's task without an answer: the client waited its whole
    // deadline, or for ever.
    source.set(
        () -> {
          throw new OutOfMemoryError("planted by the test");
        });
    StatusRuntimeException e = failure(query("SELECT count()"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.getStatus().getDescription())
        .contains("OutOfMemoryError: planted by the test")
        .contains("narrow it");
  }

  @Test
  void aTimeInSecondsOrAnUnknownFormatIsRefusedAsOverHttp() {
    StatusRuntimeException e = failure(query("SELECT count()").setFromUnixNanos(1_714_564_800L));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription())
        .startsWith(
            "from_unix_nanos: '1714564800' would be unix nanoseconds in January 1970; for seconds");
    e = failure(query("SELECT count()").setFormatValue(99));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription()).startsWith("format: 99 is not a QueryFormat");
  }

  @Test
  void afterTheFoldThreadFailedQueriesAreUnavailableSayingWhy() throws Exception {
    // They answered 200 from a snapshot that no longer changed, without a word.
    OnlineQuery failed =
        new OnlineQuery(
            () -> source.get().snapshot(), () -> "java.lang.OutOfMemoryError: x", () -> 0);
    OnlineQueryException e =
        catchThrowableOfType(
            OnlineQueryException.class,
            () ->
                failed.run(
                    new OnlineQuery.Request(null, "SELECT count()", TimeRange.of(null, null), null),
                    dev.profold.collector.query.OutputFormat.JSON));
    assertThat(e.reason()).isEqualTo(OnlineQueryException.Reason.NOT_READY);
    assertThat(e.getMessage())
        .isEqualTo(
            "the collector's fold thread failed (java.lang.OutOfMemoryError: x) and its data no"
                + " longer changes; it must be restarted");
  }

  @Test
  void anAnswerFromASnapshotTheFoldThreadLeftOldSaysSo() throws Exception {
    // The fold thread did not answer within the snapshot timeout: the previous snapshot was
    // served, and the answer read as current.
    OnlineQuery.Request request =
        new OnlineQuery.Request(null, "SELECT count()", TimeRange.of(null, null), null);
    OnlineQuery stale =
        new OnlineQuery(() -> source.get().snapshot(), () -> null, () -> 7_400_000_000L);
    assertThat(stale.run(request, dev.profold.collector.query.OutputFormat.JSON).note())
        .isEqualTo("the fold thread is behind: this reads its last snapshot, 7s old");
    OnlineQuery fresh =
        new OnlineQuery(() -> source.get().snapshot(), () -> null, () -> 900_000_000L);
    assertThat(fresh.run(request, dev.profold.collector.query.OutputFormat.JSON).note()).isEmpty();
  }

  @Test
  void aQueryWhoseCallerGaveUpStopsBetweenItsSteps() throws Exception {
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    OnlineQuery q = new OnlineQuery(() -> source.get().snapshot());
    OnlineQueryException e =
        catchThrowableOfType(
            OnlineQueryException.class,
            () ->
                q.run(
                    new OnlineQuery.Request(null, "SELECT count()", TimeRange.of(null, null), null),
                    dev.profold.collector.query.OutputFormat.JSON,
                    () -> asked.incrementAndGet() > 1)); // gone after the records were read
    assertThat(e.reason()).isEqualTo(OnlineQueryException.Reason.ABANDONED);
    assertThat(asked).hasValue(2);
  }

  @Test
  void aQueryTheExecutorRefusesIsResourceExhausted() {
    executor.set(
        task -> {
          throw new RejectedExecutionException("full");
        });
    StatusRuntimeException e = failure(query("SELECT count()"));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.getStatus().getDescription()).contains("too many queries");
  }
}
