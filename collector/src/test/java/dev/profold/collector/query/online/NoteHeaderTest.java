package dev.profold.collector.query.online;

import static dev.profold.collector.query.online.SnapshotFixtures.scheme;
import static dev.profold.collector.query.online.SnapshotFixtures.snapshot;
import static dev.profold.collector.query.online.SnapshotFixtures.time;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The note goes into the {@code Profold-Note} response header, and it names attributes as the query
 * wrote them: characters beyond printable ASCII are escaped, so a query can neither break the
 * header nor add one. (The JDK's server refuses CR and LF in a header value but writes any other
 * character as its low byte: U+010D U+010A would go out as CR LF.)
 */
class NoteHeaderTest {
  private final CollectorSnapshot s =
      snapshot(scheme("region", "", List.of(time("checkout", "handle", 0.25)), List.of()));

  /** The response headers to a raw request for {@code query}. */
  private List<String> headers(String query) throws Exception {
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext(
        QueryHttpHandler.PATH,
        new QueryHttpHandler(new OnlineQuery(() -> s), InstantSource.fixed(Instant.EPOCH)));
    http.start();
    try (Socket c = new Socket("127.0.0.1", http.getAddress().getPort())) {
      c.getOutputStream()
          .write(
              ("GET "
                      + QueryHttpHandler.PATH
                      + "?q="
                      + URLEncoder.encode(query, StandardCharsets.UTF_8)
                      + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.ISO_8859_1));
      BufferedReader r =
          new BufferedReader(
              new InputStreamReader(c.getInputStream(), StandardCharsets.ISO_8859_1));
      List<String> headers = new ArrayList<>();
      for (String l; (l = r.readLine()) != null && !l.isEmpty(); ) {
        headers.add(l);
      }
      return headers;
    } finally {
      http.stop(0);
    }
  }

  @Test
  void aQueryCannotAddResponseHeaders() throws Exception {
    List<String> headers = headers("SELECT \"x\u010D\u010ASet-Cookie: session=attacker\", count()");

    assertThat(headers).first().asString().startsWith("HTTP/1.1 200");
    assertThat(headers)
        .as("before the fix: a Set-Cookie header of the query's making")
        .noneMatch(h -> h.toLowerCase(Locale.ROOT).startsWith("set-cookie"));
    assertThat(headers)
        .filteredOn(h -> h.toLowerCase(Locale.ROOT).startsWith("profold-note: "))
        .singleElement()
        .asString()
        .contains("'x\\u010d\\u010aSet-Cookie: session=attacker'");
  }

  @Test
  void aLineBreakInANameIsEscapedNotAnInternalError() throws Exception {
    List<String> headers = headers("SELECT \"a\nb\", count()");

    assertThat(headers).first().asString().startsWith("HTTP/1.1 200");
    assertThat(headers)
        .anyMatch(
            h ->
                h.toLowerCase(Locale.ROOT).startsWith("profold-note: ")
                    && h.contains("'a\\u000ab'"));
  }

  @Test
  void headerValuesKeepPrintableAsciiAndEscapeTheRest() {
    assertThat(QueryHttpHandler.headerValue("plain text: 1, 2; 'x'"))
        .isEqualTo("plain text: 1, 2; 'x'");
    assertThat(QueryHttpHandler.headerValue("a\\b\tc\u00e9")).isEqualTo("a\\\\b\\u0009c\\u00e9");
  }

  @Test
  void aTimesOffsetTypedIntoAUrlKeepsItsPlus() {
    // URL decoding made "+02:00" " 02:00", and the time was refused with a 400.
    assertThat(
            QueryHttpHandler.parameters("q=select+count()&from=2024-05-01T14:00:00+02:00&to=now"))
        .containsEntry("from", "2024-05-01T14:00:00+02:00")
        .containsEntry("q", "select count()")
        .containsEntry("to", "now");
    // A form encoder writes the date's space separator as '+': still a space.
    assertThat(QueryHttpHandler.parameters("from=2024-05-01+12:00:00%2B02:00"))
        .containsEntry("from", "2024-05-01 12:00:00+02:00");
  }
}
