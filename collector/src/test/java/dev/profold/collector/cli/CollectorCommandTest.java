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
}
