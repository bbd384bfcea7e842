package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** The address alerts link back to when alerts.external_url is not set. */
class OwnUrlTest {
  @Test
  void aHostNameOrIpv4AddressIsWrittenAsIs() {
    assertThat(CollectorServer.ownUrl("127.0.0.1", 7764)).isEqualTo("http://127.0.0.1:7764");
    assertThat(CollectorServer.ownUrl("collector.local", 80))
        .isEqualTo("http://collector.local:80");
  }

  @Test
  void anIpv6AddressGoesInBracketsAndItsZoneIsEscaped() {
    assertThat(CollectorServer.ownUrl("::1", 7764)).isEqualTo("http://[::1]:7764");
    // Before: "http://[fe80::1%eth0]:7764", which URI.create refused, failing the start with a
    // stack trace when Alertmanager was configured.
    String zoned = CollectorServer.ownUrl("fe80::1%eth0", 7764);
    assertThat(zoned).isEqualTo("http://[fe80::1%25eth0]:7764");
    assertThat(URI.create(zoned + "/api/v1/alerts").getPort()).isEqualTo(7764);
  }

  @Test
  void theStartLinesAddressesBracketAnIpv6Address() {
    // "grpc=::1:7763 http=http://::1:7764/metrics": neither a gRPC target nor a URL.
    assertThat(CollectorServer.hostPort("::1", 7763)).isEqualTo("[::1]:7763");
    assertThat(CollectorServer.hostPort("127.0.0.1", 7763)).isEqualTo("127.0.0.1:7763");
  }
}
