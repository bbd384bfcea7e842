package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CollectorChannelTest {
  @Test
  void anEndpointWrittenWithGrpcsDnsSchemeReachesTheSameAuthority() {
    // Before: "dns:///[::1]:7763" is no valid URI, and gRPC found no resolver for it.
    for (String endpoint : new String[] {"dns:///[::1]:7763", "[::1]:7763"}) {
      CollectorChannel c = new CollectorChannel(endpoint);
      try {
        assertThat(c.channel().authority()).as(endpoint).isEqualTo("[::1]:7763");
      } finally {
        c.close();
      }
    }
  }
}
