package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.collector.testing.RunningCollector;
import dev.profold.proto.v1.RegionKind;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A large scrape reaches the JDK's server in slices, so it costs no native memory of its size. */
class SlicedResponseTest {
  @Test
  void aLargeWriteIsHandedOnInSlicesWithEveryByte() throws Exception {
    List<Integer> writes = new ArrayList<>();
    ByteArrayOutputStream received = new ByteArrayOutputStream();
    OutputStream recording =
        new OutputStream() {
          @Override
          public void write(int b) {
            writes.add(1);
            received.write(b);
          }

          @Override
          public void write(byte[] b, int off, int len) {
            writes.add(len);
            received.write(b, off, len);
          }
        };
    byte[] body = new byte[1_000_000];
    new java.util.Random(7).nextBytes(body);

    try (OutputStream out = SlicedResponse.sliced(recording)) {
      out.write(body, 0, 10);
      out.write(body, 10, body.length - 10);
    }

    assertThat(received.toByteArray()).isEqualTo(body);
    assertThat(writes).allMatch(n -> n <= SlicedResponse.SLICE).hasSize(1 + 16);
  }

  @Test
  void closingTheBodyClosesTheServersStreamWithoutFlushingItFirst() throws Exception {
    List<String> calls = new ArrayList<>();
    OutputStream afterAFailedExchange =
        new OutputStream() {
          @Override
          public void write(int b) {
            calls.add("write");
          }

          @Override
          public void flush() throws java.io.IOException {
            calls.add("flush");
            throw new java.io.IOException("stream is closed");
          }

          @Override
          public void close() {
            calls.add("close");
          }
        };

    SlicedResponse.sliced(afterAFailedExchange).close(); // as the server's own stream: silent

    assertThat(calls).containsExactly("close");
  }

  @Test
  void aScrapeOfManyMegabytesLeavesNoDirectBufferOfItsSize() throws Exception {
    MutableClock clock = MutableClock.atNanos(Deltas.DEFAULT_START + 10_000_000_001L);
    CollectorServer server =
        new CollectorServer(CollectorConfig.defaults().withOverrides(null, 0, 0, null), clock);
    server.start();
    try {
      // 300 regions with names of 4000 characters (as deep call paths have): a scrape of about
      // 13 MB, every line carrying one such path.
      Deltas.Builder b = Deltas.source("checkout", "i-1").seq(1);
      for (int r = 1; r <= 300; r++) {
        String name = String.format("%04d", r) + "x".repeat(3996);
        b.region(r, name, RegionKind.REGION_KIND_COMPUTE).entry(r, 0.001 * r, 0.01 * r, 0.1 * r);
      }
      RunningCollector.push(server.grpcPort(), b.build());
      BufferPoolMXBean direct =
          ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
              .filter(p -> p.getName().equals("direct"))
              .findFirst()
              .orElseThrow();
      long before = direct.getTotalCapacity();

      HttpResponse<byte[]> scrape =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + server.httpPort() + "/metrics"))
                      .build(),
                  HttpResponse.BodyHandlers.ofByteArray());

      assertThat(scrape.statusCode()).isEqualTo(200);
      int size = scrape.body().length;
      assertThat(size).isGreaterThan(10_000_000);
      assertThat(new String(scrape.body(), java.nio.charset.StandardCharsets.UTF_8))
          .contains("path=\"0300" + "x".repeat(3996) + "\"");
      // Before: the body went to the socket in one write, through a direct buffer of its size that
      // the HTTP thread then kept.
      assertThat(direct.getTotalCapacity() - before)
          .as("direct buffer bytes added by a scrape of %d bytes", size)
          .isLessThan(size / 4);
    } finally {
      server.stop();
    }
  }
}
