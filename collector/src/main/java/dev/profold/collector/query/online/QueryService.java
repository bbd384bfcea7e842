package dev.profold.collector.query.online;

import dev.profold.collector.query.JsonRecords;
import dev.profold.collector.query.OutputFormat;
import dev.profold.proto.v1.Cell;
import dev.profold.proto.v1.QueryFormat;
import dev.profold.proto.v1.QueryGrpc;
import dev.profold.proto.v1.QueryRequest;
import dev.profold.proto.v1.QueryResponse;
import dev.profold.proto.v1.Row;
import dev.profold.proto.v1.TimeInterval;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC {@code profold.v1.Query} service: converts requests and answers of {@link OnlineQuery}
 * to and from protobuf. Errors are statuses with a one-line message (INVALID_ARGUMENT, NOT_FOUND,
 * RESOURCE_EXHAUSTED when the query executor refuses more work, INTERNAL for a bug, which is logged
 * here and never sent as a stack trace). Thread-safe.
 *
 * <p>Queries run on the given executor, not on gRPC's threads: getting a snapshot waits for the
 * fold thread, and evaluating a large scheme takes CPU, neither of which ingest calls should queue
 * behind.
 */
public final class QueryService extends QueryGrpc.QueryImplBase {
  private static final Logger log = LoggerFactory.getLogger(QueryService.class);

  private final OnlineQuery queries;
  private final Executor executor;

  /**
   * @param executor where queries run; it may refuse work ({@link RejectedExecutionException}),
   *     which the caller sees as RESOURCE_EXHAUSTED
   */
  public QueryService(OnlineQuery queries, Executor executor) {
    this.queries = queries;
    this.executor = executor;
  }

  @Override
  public void run(QueryRequest request, StreamObserver<QueryResponse> response) {
    // The call's context goes along: a query whose client gave up (its deadline passed, or it
    // cancelled) while it waited for a thread is not run.
    io.grpc.Context call = io.grpc.Context.current();
    try {
      executor.execute(
          call.wrap(
              () -> {
                if (call.isCancelled()) {
                  return; // nobody waits for the answer
                }
                answer(request, response);
              }));
    } catch (RejectedExecutionException e) {
      response.onError(
          Status.RESOURCE_EXHAUSTED
              .withDescription("the collector is running too many queries; try again shortly")
              .asRuntimeException());
    }
  }

  private void answer(QueryRequest request, StreamObserver<QueryResponse> response) {
    TimeRange range;
    try {
      if (request.getFormat() == QueryFormat.UNRECOGNIZED) {
        throw new IllegalArgumentException(
            "format: "
                + request.getFormatValue()
                + " is not a QueryFormat this collector knows (table, json, csv, tree)");
      }
      range =
          TimeRange.of(
              request.hasFromUnixNanos()
                  ? nanos("from_unix_nanos", request.getFromUnixNanos())
                  : null,
              request.hasToUnixNanos() ? nanos("to_unix_nanos", request.getToUnixNanos()) : null);
    } catch (IllegalArgumentException e) {
      response.onError(
          Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
      return;
    }
    OnlineQuery.Answer answer;
    try {
      io.grpc.Context call = io.grpc.Context.current();
      answer =
          queries.run(
              new OnlineQuery.Request(
                  request.getScheme(), request.getQuery(), range, format(request.getFormat())),
              OutputFormat.TABLE,
              call::isCancelled);
    } catch (OnlineQueryException e) {
      Status status =
          switch (e.reason()) {
            case NOT_FOUND -> Status.NOT_FOUND;
            case NOT_READY -> Status.UNAVAILABLE;
            case INVALID -> Status.INVALID_ARGUMENT;
            case ABANDONED -> Status.CANCELLED; // nobody reads it
          };
      response.onError(status.withDescription(e.getMessage()).asRuntimeException());
      return;
    } catch (OutOfMemoryError | StackOverflowError e) {
      // The thread goes on to the next query; without an answer the client waited for ever.
      log.warn(
          "query ran out of {}: {}",
          e instanceof OutOfMemoryError ? "memory" : "stack",
          e.toString());
      response.onError(
          Status.RESOURCE_EXHAUSTED
              .withDescription(OnlineQuery.outOfResources(e))
              .asRuntimeException());
      return;
    } catch (RuntimeException e) {
      log.error("query failed: {}", request.getQuery(), e);
      response.onError(
          Status.INTERNAL
              .withDescription("internal error running the query: " + e)
              .asRuntimeException());
      return;
    }
    response.onNext(toProto(answer));
    response.onCompleted();
  }

  /** {@code n} checked as {@link TimeArgument#checkedNanos} checks it, the field named. */
  private static long nanos(String field, long n) {
    try {
      return TimeArgument.checkedNanos(n, Long.toString(n));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(field + ": " + e.getMessage(), e);
    }
  }

  /** The answer as a response message. */
  static QueryResponse toProto(OnlineQuery.Answer a) {
    QueryResponse.Builder b =
        QueryResponse.newBuilder()
            .setScheme(a.scheme())
            .setQuery(a.query())
            .addAllColumns(a.result().columns())
            .setFormat(wireFormat(a.format()))
            .setRendered(a.rendered())
            .setCumulative(a.cumulative())
            .setNote(a.note());
    List<String> columns = a.result().columns();
    for (Map<String, Object> row : a.result().rows()) {
      Row.Builder r = Row.newBuilder();
      for (String c : columns) {
        r.addCells(cell(row.get(c)));
      }
      b.addRows(r);
    }
    for (Interval i : a.intervals()) {
      b.addIntervals(
          TimeInterval.newBuilder()
              .setStartUnixNanos(i.startUnixNanos())
              .setEndUnixNanos(i.endUnixNanos()));
    }
    return b.build();
  }

  /** A result value as a typed cell (see query.proto); null is the empty cell. */
  static Cell cell(Object v) {
    Cell.Builder c = Cell.newBuilder();
    if (v == null) {
      return c.build();
    }
    if (v instanceof Long l) {
      c.setIntValue(l);
    } else if (v instanceof Double d) {
      c.setDoubleValue(d);
    } else if (v instanceof String s) {
      c.setStringValue(s);
    } else if (v instanceof Boolean bool) {
      c.setBoolValue(bool);
    } else if (v instanceof List<?> path) {
      StringBuilder text = new StringBuilder();
      for (Object element : path) {
        if (text.length() > 0) {
          text.append('/');
        }
        text.append(element);
      }
      c.setStringValue(text.toString());
    } else {
      c.setJsonValue(JsonRecords.valueJson(v));
    }
    return c.build();
  }

  /** The request's format, or null for "the query's own, else the default". */
  static OutputFormat format(QueryFormat f) {
    return switch (f) {
      case QUERY_FORMAT_TABLE -> OutputFormat.TABLE;
      case QUERY_FORMAT_JSON -> OutputFormat.JSON;
      case QUERY_FORMAT_CSV -> OutputFormat.CSV;
      case QUERY_FORMAT_TREE -> OutputFormat.TREE;
      case QUERY_FORMAT_UNSPECIFIED, UNRECOGNIZED -> null;
    };
  }

  /** The wire name of {@code f}. */
  public static QueryFormat wireFormat(OutputFormat f) {
    return switch (f) {
      case TABLE -> QueryFormat.QUERY_FORMAT_TABLE;
      case JSON -> QueryFormat.QUERY_FORMAT_JSON;
      case CSV -> QueryFormat.QUERY_FORMAT_CSV;
      case TREE -> QueryFormat.QUERY_FORMAT_TREE;
    };
  }
}
