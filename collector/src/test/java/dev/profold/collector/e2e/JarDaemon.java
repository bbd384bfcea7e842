package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The built collector jar running as a daemon on ephemeral ports, for the end-to-end tests: started
 * with {@code collector --grpc-port 0 --http-port 0} plus the given arguments, ready once it prints
 * its listening line. Its stderr goes to a file (a pipe may be closed under a reader when the
 * process exits).
 */
final class JarDaemon {
  private static final Pattern READY =
      Pattern.compile("profold collector listening: grpc=([^:]+):(\\d+) http=http://[^:]+:(\\d+)/");

  final Process process;
  final Path stderr;
  final int grpcPort;
  final int httpPort;
  final ManagedChannel channel;
  private final BufferedReader stdout;
  private final HttpClient http = HttpClient.newHttpClient();

  private JarDaemon(
      Process process, BufferedReader stdout, Path stderr, int grpcPort, int httpPort) {
    this.process = process;
    this.stdout = stdout;
    this.stderr = stderr;
    this.grpcPort = grpcPort;
    this.httpPort = httpPort;
    this.channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build();
  }

  /** Starts {@code profold.jar collector --grpc-port 0 --http-port 0 ARGS...} and waits ready. */
  static JarDaemon start(String... args) throws Exception {
    return startUnder(List.of(), args);
  }

  /** As {@link #start}, the command run by {@code prefix} (such as {@code nohup}). */
  static JarDaemon startUnder(List<String> prefix, String... args) throws Exception {
    Path stderr = Files.createTempFile("profold-daemon", ".log");
    Path jar = jar();
    List<String> command = new ArrayList<>(prefix);
    command.addAll(List.of(javaBin(), "-jar", jar.toString()));
    command.addAll(List.of("collector", "--grpc-port", "0", "--http-port", "0"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    assertThat(line).as("first stdout line; stderr: %s", Files.readString(stderr)).isNotNull();
    Matcher m = READY.matcher(line);
    assertThat(m.find()).as("ready line: %s", line).isTrue();
    return new JarDaemon(
        p, out, stderr, Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
  }

  /** The fat jar under test (built before the integration tests run). */
  static Path jar() {
    Path jar = Path.of(System.getProperty("profold.jar", "target/profold.jar"));
    assertThat(jar).as("the fat jar is built before integration tests").exists();
    return jar;
  }

  static String javaBin() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** GET {@code path} on the daemon's HTTP port. */
  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The /metrics text (asserting status 200). */
  String scrape() throws IOException, InterruptedException {
    HttpResponse<String> r = get("/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body();
  }

  /** The next line the daemon printed after its listening line (null at the end). */
  String nextStdoutLine() throws IOException {
    return stdout.readLine();
  }

  String stderrText() throws IOException {
    return Files.readString(stderr);
  }

  /** Closes the channel and kills the process if it still runs. */
  void kill() {
    channel.shutdownNow();
    if (process.isAlive()) {
      process.destroyForcibly();
    }
  }
}
