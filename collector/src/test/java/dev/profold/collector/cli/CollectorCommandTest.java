package dev.profold.collector.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class CollectorCommandTest {
  @Test
  void aPortInUseIsOneClearLineAndExitStatus1WithoutAStackTrace() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      StringWriter err = new StringWriter();
      int code =
          Main.commandLine()
              .setErr(new PrintWriter(err))
              .execute(
                  "collector",
                  "--grpc-port",
                  Integer.toString(taken.getLocalPort()),
                  "--http-port",
                  "0");
      assertThat(code).as("documented in configuration.md").isEqualTo(1);
      assertThat(err.toString())
          .contains("profold: cannot bind 127.0.0.1 (gRPC port " + taken.getLocalPort())
          .contains("choose other ports with --grpc-port / --http-port")
          .doesNotContain("Exception")
          .doesNotContain("\tat ");
    }
  }

  @Test
  void anIntervalTooLongIsOneClearLineAndExitStatus2WithoutAStackTrace() {
    for (String interval : new String[] {"99999999999999999999s", "3000000h"}) {
      StringWriter err = new StringWriter();
      int code =
          Main.commandLine()
              .setErr(new PrintWriter(err))
              .execute("collector", "--grpc-port", "0", "--http-port", "0", "--interval", interval);
      assertThat(code).as(interval).isEqualTo(2);
      assertThat(err.toString())
          .contains("profold: --interval: '" + interval + "' is not a duration of 100ms..100000h")
          .doesNotContain("Exception")
          .doesNotContain("\tat ");
    }
  }
}
