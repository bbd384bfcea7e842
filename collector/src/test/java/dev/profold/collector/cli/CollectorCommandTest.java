package dev.profold.collector.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code profold collector} fails to start with one line on stderr naming the problem and the fix,
 * an exit status from configuration.md, and no stack trace (on the command's stream or the log).
 */
class CollectorCommandTest {
  @TempDir Path dir;

  /** What a run printed: the command's error stream, and System.err (the log). */
  private record Run(int code, String err, String log) {}

  private static Run run(String... args) {
    StringWriter err = new StringWriter();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream systemErr = System.err;
    int code;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try {
      code = Main.commandLine().setErr(new PrintWriter(err)).execute(args);
    } finally {
      System.setErr(systemErr);
    }
    return new Run(code, err.toString(), log.toString(StandardCharsets.UTF_8));
  }

  private static void assertNoStackTrace(Run r) {
    for (String text : List.of(r.err(), r.log())) {
      assertThat(text).doesNotContain("Exception").doesNotContain("\tat ");
    }
    assertThat(r.err().lines()).as("one line").hasSize(1);
  }

  @Test
  void theFilesSettingsThatOptionsReplaceAreSaidAtStart() throws Exception {
    // A port changed in the file had no effect under --http-port, and nothing said why.
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Path file = dir.resolve("collector.yaml");
      java.nio.file.Files.writeString(file, "grpc_port: 0\nhttp_port: 7765\ninterval: 10s\n");
      Run r =
          run(
              "collector",
              "--config",
              file.toString(),
              "--http-port",
              Integer.toString(taken.getLocalPort()),
              "--interval",
              "250ms");
      assertThat(r.code()).isEqualTo(1); // the port is taken: it ends there
      assertThat(r.log())
          .contains(
              "command-line options win over "
                  + file
                  + ": --http-port "
                  + taken.getLocalPort()
                  + " over http_port 7765, --interval 250ms over interval 10s");
    }
  }

  @Test
  void anIntervalOptionThatLeavesTheRegionSchemesIntervalApartUnderARegionRuleIsRefused()
      throws Exception {
    Path file = dir.resolve("collector.yaml");
    java.nio.file.Files.writeString(
        file,
        "interval: 1m\nschemes:\n  - name: region\n    interval: 1m\n"
            + "alerts: {rules: [{name: Out, expr: 'instance_outlier > 0'}]}\n");
    Run r = run("collector", "--config", file.toString(), "--interval", "10s");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err())
        .startsWith("profold: collector.yaml: alerts.rules[0].expr ('Out'): instance_outlier")
        .contains("whose interval (60000 ms) is not the collector's (10000 ms)");
  }

  @Test
  void aGrpcPortInUseIsOneLineNamingThePortItsOptionAndKey() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      Run r = run("collector", "--grpc-port", Integer.toString(port), "--http-port", "0");
      assertThat(r.code()).as("documented in configuration.md").isEqualTo(1);
      assertThat(r.err())
          .startsWith("profold: cannot listen for gRPC on 127.0.0.1:" + port + ": ")
          .containsIgnoringCase("already in use")
          .as("the system's reason without Netty's prefix")
          .doesNotContain("bind(..)")
          .contains(
              "; choose another port with --grpc-port or grpc_port in the config file (0 picks a"
                  + " free one)");
      assertNoStackTrace(r);
      assertThat(r.log())
          .as("a start that failed has nothing to shut down")
          .doesNotContain("shutting down");
    }
  }

  @Test
  void anHttpPortInUseIsOneLineNamingThePortItsOptionAndKey() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      Run r = run("collector", "--grpc-port", "0", "--http-port", Integer.toString(port));
      assertThat(r.code()).isEqualTo(1);
      assertThat(r.err())
          .startsWith("profold: cannot listen for HTTP on 127.0.0.1:" + port + ": ")
          .containsIgnoringCase("already in use")
          .contains("; choose another port with --http-port or http_port in the config file");
      assertNoStackTrace(r);
      assertThat(r.log()).doesNotContain("shutting down").doesNotContain("stopped");
    }
  }

  @Test
  void aMissingConfigFileIsOneLineAndExitStatus2() {
    Path missing = dir.resolve("collector.yaml");
    Run r = run("collector", "--config", missing.toString(), "--grpc-port", "0");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err())
        .isEqualTo(
            "profold: no such file: "
                + missing
                + " (the config file; check the path given to --config)"
                + System.lineSeparator());
    assertNoStackTrace(r);
  }

  @Test
  void theExitStatusesAreDocumented() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
    String section = doc.substring(doc.indexOf("## Exit status"), doc.indexOf("## Config file"));
    List<String> statuses =
        section
            .lines()
            .filter(l -> l.matches("\\| `\\d+` \\|.*"))
            .map(l -> l.substring(3, l.indexOf('`', 3)))
            .toList();
    // 1 and 2 as the tests above see them; 130 and 143 as CollectorJarIT sees SIGTERM's.
    assertThat(statuses).containsExactly("0", "1", "2", "130", "143");
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

  @Test
  void aBugAtStartIsOneLineNamingTheFileWithItsTrace() throws Exception {
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine().setErr(new PrintWriter(err));
    ((CollectorCommand) cl.getSubcommands().get("collector").getCommand()).servers =
        (config, clock) -> {
          throw new IllegalStateException("a bug in the making of the server");
        };

    int code = cl.execute("collector", "--grpc-port", "0", "--http-port", "0");

    // Before: one line saying to report it, with the trace at DEBUG (not shown): nothing to report
    // but the line; and a failure in making the server escaped to picocli's own stack trace.
    assertThat(code).isEqualTo(1);
    String line = err.toString().strip();
    assertThat(line)
        .doesNotContain("\n")
        .startsWith(
            "profold: cannot start: java.lang.IllegalStateException: a bug in the making of the"
                + " server (a bug: please report it; its details are in ");
    Path file = Path.of(line.substring(line.indexOf("details are in ") + 15, line.length() - 1));
    try {
      assertThat(Files.readString(file))
          .contains("IllegalStateException: a bug in the making of the server")
          .contains("\tat ");
    } finally {
      Files.deleteIfExists(file);
    }
  }
}
