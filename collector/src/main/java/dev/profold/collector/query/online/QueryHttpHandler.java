package dev.profold.collector.query.online;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.profold.collector.query.OutputFormat;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /api/v1/query?q=QUERY&scheme=NAME&from=T&to=T&format=json|csv|table|tree}: an online
 * query over HTTP (see docs/calql.md).
 *
 * <p>200 with the result in the format asked for, else the query's FORMAT clause, else JSON (an
 * array of row objects, as {@code profold query --format json} prints it). The header {@code
 * Profold-Intervals} says what was read ({@code cumulative}, or {@code start-end} runs of touching
 * intervals in unix nanoseconds separated by commas, or nothing for a range with no retained data),
 * {@code Profold-Interval-Count} how many intervals (0 for the cumulative state), and {@code
 * Profold-Note} carries the note when there is one. Errors are JSON {@code {"error": "..."}}: 400
 * for a bad query or parameter, 404 for an unknown scheme, 405 for a method other than GET, 503
 * with {@code Retry-After} when {@link #MAX_RUNNING} queries are running already (each holds one of
 * the server's few threads), 500 for a bug (logged, never sent as a stack trace). Thread-safe.
 */
public final class QueryHttpHandler implements HttpHandler {
  /** The path this handler serves. */
  public static final String PATH = "/api/v1/query";

  private static final Logger log = LoggerFactory.getLogger(QueryHttpHandler.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final List<String> PARAMETERS = List.of("q", "scheme", "from", "to", "format");

  /** Queries run at most at once; the server's other threads stay free for scrapes and health. */
  public static final int MAX_RUNNING = 2;

  private final OnlineQuery queries;
  private final InstantSource clock;
  private final Semaphore running = new Semaphore(MAX_RUNNING);

  /**
   * @param clock what {@code now} and relative times in {@code from} and {@code to} refer to
   */
  public QueryHttpHandler(OnlineQuery queries, InstantSource clock) {
    this.queries = queries;
    this.clock = clock;
  }

  /**
   * {@code text} as a header value: printable ASCII as it is, a backslash doubled, every other
   * character (a line break, a control character, anything beyond ASCII, which the JDK's server
   * would write as its low byte) as a backslash, {@code u} and four hex digits, so that text from a
   * query (a note names its attributes) can neither break the header nor add one.
   */
  static String headerValue(String text) {
    StringBuilder b = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\\') {
        b.append("\\\\");
      } else if (c >= 0x20 && c < 0x7f) {
        b.append(c);
      } else {
        b.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
      }
    }
    return b.toString();
  }

  @Override
  public void handle(HttpExchange ex) throws IOException {
    try {
      if (!ex.getRequestURI().getPath().equals(PATH)) {
        error(ex, 404, "not found; the query endpoint is " + PATH);
        return;
      }
      if (!ex.getRequestMethod().equals("GET")) {
        ex.getResponseHeaders().set("Allow", "GET");
        error(ex, 405, "use GET");
        return;
      }
      OnlineQuery.Request request;
      try {
        request = request(parameters(ex.getRequestURI().getRawQuery()));
      } catch (IllegalArgumentException e) {
        error(ex, 400, e.getMessage());
        return;
      }
      if (!running.tryAcquire()) {
        ex.getResponseHeaders().set("Retry-After", "1");
        error(
            ex,
            503,
            MAX_RUNNING
                + " queries are running already; retry in a second (over gRPC, with profold"
                + " query, up to 16 queries wait for their turn)");
        return;
      }
      OnlineQuery.Answer answer;
      try {
        answer = queries.run(request, OutputFormat.JSON);
      } catch (OnlineQueryException e) {
        if (e.reason() == OnlineQueryException.Reason.NOT_READY) {
          ex.getResponseHeaders().set("Retry-After", "1");
        }
        error(
            ex,
            switch (e.reason()) {
              case NOT_FOUND -> 404;
              case NOT_READY, ABANDONED -> 503;
              case INVALID -> 400;
            },
            e.getMessage());
        return;
      } catch (OutOfMemoryError | StackOverflowError e) {
        log.warn(
            "query over HTTP ran out of {}: {}",
            e instanceof OutOfMemoryError ? "memory" : "stack",
            e.toString());
        error(ex, 503, OnlineQuery.outOfResources(e));
        return;
      } finally {
        running.release();
      }
      ex.getResponseHeaders()
          .set("Profold-Intervals", intervals(answer.cumulative(), answer.intervals()));
      ex.getResponseHeaders()
          .set("Profold-Interval-Count", Integer.toString(answer.intervals().size()));
      if (!answer.note().isEmpty()) {
        ex.getResponseHeaders().set("Profold-Note", headerValue(answer.note()));
      }
      send(
          ex,
          200,
          contentType(answer.format()),
          answer.rendered().getBytes(StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      log.error("query over HTTP failed: {}", ex.getRequestURI(), e);
      error(ex, 500, "internal error running the query: " + e);
    } finally {
      ex.close();
    }
  }

  private OnlineQuery.Request request(Map<String, String> p) {
    OutputFormat format = null;
    if (p.containsKey("format")) {
      format = OutputFormat.named(p.get("format"));
      if (format == null) {
        throw new IllegalArgumentException(
            "format: '" + p.get("format") + "' is not one of " + OutputFormat.names());
      }
    }
    InstantSource now = InstantSource.fixed(clock.instant()); // one "now" for both bounds
    Long from = p.containsKey("from") ? time("from", p.get("from"), now) : null;
    Long to = p.containsKey("to") ? time("to", p.get("to"), now) : null;
    return new OnlineQuery.Request(p.get("scheme"), p.get("q"), TimeRange.of(from, to), format);
  }

  private static long time(String name, String value, InstantSource now) {
    try {
      return TimeArgument.parseTime(value, now);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
  }

  /** The parameters that hold a time. */
  private static final java.util.Set<String> TIMES = java.util.Set.of("from", "to");

  /** The query string's parameters; each known one at most once, no unknown ones. */
  static Map<String, String> parameters(String rawQuery) {
    Map<String, String> out = new HashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return out;
    }
    int start = 0;
    while (start <= rawQuery.length()) {
      int amp = rawQuery.indexOf('&', start);
      int end = amp < 0 ? rawQuery.length() : amp;
      String pair = rawQuery.substring(start, end);
      start = end + 1;
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq));
      String raw = eq < 0 ? "" : pair.substring(eq + 1);
      // A time's offset typed into a URL (from=...T14:00:00+02:00) keeps its '+' (in the query
      // itself '+' stands for a space, as usual); only the date's separator may be a space.
      String value = decode(TIMES.contains(name) ? raw.replace("+", "%2B") : raw);
      if (TIMES.contains(name) && value.length() > 10 && value.charAt(10) == '+') {
        // "2024-05-01 12:00:00Z" from a form encoder: its space, not an offset
        value = value.substring(0, 10) + ' ' + value.substring(11);
      }
      if (!PARAMETERS.contains(name)) {
        throw new IllegalArgumentException(
            "unknown parameter '" + name + "'; known: " + String.join(", ", PARAMETERS));
      }
      if (out.put(name, value) != null) {
        throw new IllegalArgumentException("parameter '" + name + "' given more than once");
      }
    }
    return out;
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("malformed query string: " + e.getMessage(), e);
    }
  }

  /**
   * The {@code Profold-Intervals} header: {@code cumulative}, or the intervals read as {@code
   * start-end} runs in unix nanoseconds separated by commas, touching intervals joined into one run
   * (so its length does not grow with the range: 360 retained intervals of a day are one run, not
   * 14 KB of header, more than proxies take).
   */
  static String intervals(boolean cumulative, List<Interval> read) {
    if (cumulative) {
      return "cumulative";
    }
    StringJoiner j = new StringJoiner(",");
    boolean open = false; // a run is being built
    long start = 0;
    long end = 0;
    for (Interval i : read) {
      if (open && i.startUnixNanos() == end) {
        end = i.endUnixNanos();
        continue;
      }
      if (open) {
        j.add(start + "-" + end);
      }
      open = true;
      start = i.startUnixNanos();
      end = i.endUnixNanos();
    }
    if (open) {
      j.add(start + "-" + end);
    }
    return j.toString();
  }

  private static String contentType(OutputFormat f) {
    return switch (f) {
      case JSON -> "application/json; charset=utf-8";
      case CSV -> "text/csv; charset=utf-8";
      case TABLE, TREE -> "text/plain; charset=utf-8";
    };
  }

  private static void error(HttpExchange ex, int code, String message) throws IOException {
    byte[] body;
    try {
      body = MAPPER.writeValueAsBytes(Map.of("error", message));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("writing a one-member JSON object", e);
    }
    send(ex, code, "application/json; charset=utf-8", body);
  }

  private static void send(HttpExchange ex, int code, String contentType, byte[] body)
      throws IOException {
    ex.getResponseHeaders().set("Content-Type", contentType);
    ex.getResponseHeaders()
        .set("Cache-Control", "no-store"); // 'from=-15m' means another range later
    ex.sendResponseHeaders(code, body.length == 0 ? -1 : body.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(body);
    }
  }
}
