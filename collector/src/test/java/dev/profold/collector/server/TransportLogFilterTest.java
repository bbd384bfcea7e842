package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.profold.collector.testing.JulRecords;
import dev.profold.collector.testing.RunningCollector;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * An HTTP/1 request on the gRPC port (a scrape or health check aimed at the wrong port) gives one
 * line that names the right port, not grpc-netty's thirty-line stack trace per request.
 */
class TransportLogFilterTest {
  private static LogRecord transportFailed(Throwable t) {
    LogRecord r = new LogRecord(java.util.logging.Level.INFO, "Transport failed");
    r.setThrown(t);
    return r;
  }

  private static ListAppender<ILoggingEvent> capture() {
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    ch.qos.logback.classic.Logger log =
        (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(TransportLogFilter.class);
    log.addAppender(lines);
    return lines;
  }

  private static void release(ListAppender<ILoggingEvent> lines) {
    ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(TransportLogFilter.class))
        .detachAppender(lines);
  }

  @Test
  void http1RequestsGiveOneLineEveryTenMinutesWithTheCountLeftOut() {
    AtomicLong now = new AtomicLong(0);
    TransportLogFilter f = new TransportLogFilter(null, now::get);
    Exception probe =
        new IllegalStateException(
            "wrapped", new RuntimeException(TransportLogFilter.HTTP1 + " GET /healthz ", null));
    ListAppender<ILoggingEvent> lines = capture();
    try {
      assertThat(f.isLoggable(transportFailed(probe))).isFalse();
      now.set(TimeUnit.MINUTES.toNanos(9));
      assertThat(f.isLoggable(transportFailed(probe))).isFalse();
      assertThat(f.isLoggable(transportFailed(probe))).isFalse();
      now.set(TimeUnit.MINUTES.toNanos(10));
      assertThat(f.isLoggable(transportFailed(probe))).isFalse();
    } finally {
      release(lines);
    }
    List<ILoggingEvent> warnings =
        lines.list.stream().filter(e -> e.getLevel() == Level.WARN).toList();
    assertThat(warnings).hasSize(2);
    assertThat(warnings.get(0).getFormattedMessage())
        .contains("(GET /healthz)")
        .contains("HTTP port (http_port, 7764 by default)")
        .doesNotContain("more since");
    assertThat(warnings.get(1).getFormattedMessage()).contains("(2 more since the last line)");
    assertThat(warnings).allMatch(e -> e.getThrowableProxy() == null);
  }

  @Test
  void otherRecordsPassAndOtherTransportFailuresAreKeptFromTheLog() {
    TransportLogFilter f =
        new TransportLogFilter(r -> !r.getMessage().equals("vetoed"), System::nanoTime);
    assertThat(f.isLoggable(new LogRecord(java.util.logging.Level.WARNING, "something else")))
        .isTrue();
    assertThat(f.isLoggable(new LogRecord(java.util.logging.Level.WARNING, "vetoed"))).isFalse();
    assertThat(f.isLoggable(transportFailed(new IllegalStateException("handshake failed"))))
        .isFalse();
    assertThat(TransportLogFilter.http1Request(new IllegalStateException("handshake failed")))
        .isNull();
  }

  @Test
  void anHttp1RequestOnTheRunningCollectorsGrpcPortGivesTheLineAndNoStackTrace() throws Exception {
    JulRecords jul = JulRecords.capture();
    ListAppender<ILoggingEvent> lines = capture();
    try (RunningCollector c = RunningCollector.withData()) {
      int port = c.server.grpcPort();
      try (Socket s = new Socket("127.0.0.1", port)) {
        OutputStream out = s.getOutputStream();
        out.write("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        s.setSoTimeout(10_000);
        while (in.read() >= 0) { // until the server closes the connection
          continue;
        }
      } catch (IOException closedHard) {
        // a reset is a close too
      }
    } finally {
      jul.close();
      release(lines);
    }
    assertThat(jul.records())
        .as("grpc-netty's records of the failed connection")
        .noneMatch(r -> "Transport failed".equals(r.getMessage()));
    assertThat(lines.list)
        .as("the line, unless another test of this JVM sent an HTTP/1 request first")
        .anyMatch(e -> e.getFormattedMessage().contains("(GET /metrics)"));
    assertThat(java.util.logging.Logger.getLogger(TransportLogFilter.LOGGER).getFilter())
        .isInstanceOf(TransportLogFilter.class);
  }
}
