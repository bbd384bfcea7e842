package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.collector.testing.RunningCollector;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@code GET /api/v1/query} on a real collector (Netty gRPC ingest, JDK HTTP server). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueryHttpTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private RunningCollector collector;

  @BeforeAll
  void start() throws Exception {
    collector = RunningCollector.withData();
  }

  @AfterAll
  void stop() throws Exception {
    if (collector != null) {
      collector.close();
    }
  }

  private HttpResponse<String> get(String pathAndQuery) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(collector.httpBase() + pathAndQuery)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> query(String... params) throws Exception {
    StringBuilder q = new StringBuilder("/api/v1/query");
    for (int i = 0; i < params.length; i += 2) {
      q.append(i == 0 ? '?' : '&')
          .append(params[i])
          .append('=')
          .append(URLEncoder.encode(params[i + 1], StandardCharsets.UTF_8));
    }
    return get(q.toString());
  }

  @Test
  void jsonByDefaultAnArrayOfRowObjectsWithExactValues() throws Exception {
    HttpResponse<String> r =
        query("q", "SELECT path, count(), sum(time), avg(time), max(time) GROUP BY path");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json; charset=utf-8");
    assertThat(r.headers().firstValue("Profold-Intervals")).hasValue("cumulative");
    assertThat(r.headers().firstValue("Profold-Note")).isEmpty();
    JsonNode rows = JSON.readTree(r.body());
    assertThat(rows.isArray()).isTrue();
    Map<String, JsonNode> byPath = new HashMap<>();
    rows.forEach(row -> byPath.put(row.get("path").textValue(), row));
    assertThat(byPath).containsOnlyKeys("main", "main/db.query");
    JsonNode db = byPath.get("main/db.query");
    assertThat(db.get("count").longValue()).isEqualTo(2);
    assertThat(db.get("sum#time").doubleValue()).isEqualTo(0.75);
    assertThat(db.get("avg#time").doubleValue()).isEqualTo(0.375);
    assertThat(byPath.get("main").get("max#time").doubleValue()).isEqualTo(2.0);
  }

  @Test
  void otherFormatsOnRequest() throws Exception {
    HttpResponse<String> csv =
        query(
            "q",
            "SELECT service, kind, count() GROUP BY service, kind ORDER BY kind",
            "format",
            "csv");
    assertThat(csv.statusCode()).isEqualTo(200);
    assertThat(csv.headers().firstValue("Content-Type")).hasValue("text/csv; charset=utf-8");
    assertThat(csv.body())
        .isEqualTo("service,kind,count\r\ncheckout,compute,2\r\ncheckout,io,2\r\n");

    HttpResponse<String> table = query("q", "SELECT sum(time)", "format", "table");
    assertThat(table.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
    assertThat(table.body()).isEqualTo(String.format("sum#time%n    3.75%n"));
  }

  @Test
  void withoutAQueryTheSchemesOwnRuns() throws Exception {
    HttpResponse<String> r = query("scheme", "region");
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode rows = JSON.readTree(r.body());
    assertThat(rows).hasSize(2);
    assertThat(rows.get(0).has("sum#time")).isTrue();
  }

  @Test
  void aBadQueryIs400WithTheParsersMessage() throws Exception {
    HttpResponse<String> r = query("q", "select count( group by f");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json; charset=utf-8");
    assertThat(JSON.readTree(r.body()).get("error").textValue())
        .isEqualTo("bad query: at column 21: expected ',' or ')', found 'by'");
  }

  @Test
  void badParametersAre400() throws Exception {
    assertThat(error(query("q", "SELECT count()", "format", "xml"), 400))
        .isEqualTo("format: 'xml' is not one of table, json, csv, tree");
    assertThat(error(query("q", "SELECT count()", "from", "yesterday"), 400))
        .startsWith("from: 'yesterday' is not a time");
    assertThat(error(query("query", "SELECT count()"), 400))
        .isEqualTo("unknown parameter 'query'; known: q, scheme, from, to, format");
    assertThat(error(get("/api/v1/query?q=a&q=b"), 400))
        .isEqualTo("parameter 'q' given more than once");
    assertThat(error(query("from", "now", "to", "-1h"), 400)).startsWith("the range is empty");
  }

  @Test
  void anUnknownSchemeIs404ListingTheSchemes() throws Exception {
    assertThat(error(query("scheme", "nope"), 404))
        .isEqualTo("unknown scheme 'nope'; schemes: region");
  }

  @Test
  void onlyGet() throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(collector.httpBase() + "/api/v1/query"))
                .POST(HttpRequest.BodyPublishers.ofString("q=x"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(405);
    assertThat(r.headers().firstValue("Allow")).hasValue("GET");
  }

  @Test
  void aRangeWithoutRetainedDataIsAnEmptyArrayWithANote() throws Exception {
    // The clock stands right after the only delta's interval: nothing has closed yet.
    HttpResponse<String> r = query("q", "SELECT path, sum(time) GROUP BY path", "from", "-1h");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo(String.format("[]%n"));
    assertThat(r.headers().firstValue("Profold-Intervals")).hasValue("");
    assertThat(r.headers().firstValue("Profold-Note").orElseThrow())
        .startsWith("no closed interval is retained yet (scheme 'region', interval 10s)");
  }

  private static String error(HttpResponse<String> r, int status) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    return JSON.readTree(r.body()).get("error").textValue();
  }
}
