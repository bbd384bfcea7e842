package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds and runs the external programs some end-to-end tests use (promtool from Debian's {@code
 * prometheus}, Alertmanager from {@code prometheus-alertmanager}, a python3 with Debian's {@code
 * python3-grpcio} and {@code python3-grpc-tools}).
 *
 * <p>On a machine without them those tests are aborted (reported skipped), so {@code mvn verify}
 * works with only a JDK and Maven. CI installs the packages and sets {@code
 * PROFOLD_REQUIRE_EXTERNAL_TOOLS=1}, which turns a missing tool into a failure.
 */
final class ExternalTools {
  private ExternalTools() {}

  /** Output and exit code of a finished program. */
  record Result(int exitCode, String output) {}

  private static boolean required() {
    return "1".equals(System.getenv("PROFOLD_REQUIRE_EXTERNAL_TOOLS"));
  }

  private static Path missing(String what, String debianPackage) {
    String msg =
        what
            + " not found on PATH; install the Debian package "
            + debianPackage
            + " to run this check";
    if (required()) {
      fail(msg + " (PROFOLD_REQUIRE_EXTERNAL_TOOLS=1)");
    }
    // Reported as skipped, not passed: the caller's test ends here.
    return org.junit.jupiter.api.Assumptions.abort(msg);
  }

  /**
   * The executable {@code name} on PATH; without it the test fails (when required) or is aborted.
   */
  static Path find(String name, String debianPackage) {
    for (Path p : onPath(name)) {
      return p;
    }
    return missing(name, debianPackage);
  }

  private static List<Path> onPath(String name) {
    String path = System.getenv().getOrDefault("PATH", "");
    return java.util.Arrays.stream(path.split(File.pathSeparator))
        .filter(s -> !s.isEmpty())
        .map(dir -> Path.of(dir, name))
        .filter(Files::isExecutable)
        .toList();
  }

  /** The first python3 on PATH that can import grpc and grpc_tools; else as {@link #find}. */
  static Path pythonWithGrpc() throws Exception {
    for (Path p : onPath("python3")) {
      Result r =
          run(
              List.of(p.toString(), "-c", "import grpc, grpc_tools.protoc"),
              null,
              Duration.ofSeconds(30));
      if (r.exitCode() == 0) {
        return p;
      }
    }
    return missing("python3 with grpc and grpc_tools", "python3-grpcio and python3-grpc-tools");
  }

  /** Copies classpath resource {@code name} under {@code dir} (keeping its relative path). */
  static Path extractResource(String name, Path dir) throws IOException {
    Path target = dir.resolve(name);
    Files.createDirectories(target.getParent());
    try (InputStream in = ExternalTools.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new IOException("resource " + name + " is not on the test classpath");
      }
      Files.copy(in, target);
    }
    return dir;
  }

  /** Runs {@code command} with stdin from {@code input} (or none), stdout and stderr merged. */
  static Result run(List<String> command, Path input, Duration timeout) throws Exception {
    // Output to a file, not a pipe read to its end: reading would wait for the process to exit,
    // and the timeout would never apply to one that hangs.
    Path log = Files.createTempFile("profold-tool", ".out");
    try {
      ProcessBuilder pb =
          new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      if (input != null) {
        pb.redirectInput(input.toFile());
      }
      Process p = pb.start();
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        return new Result(
            -1,
            "timed out after "
                + timeout
                + "\n"
                + new String(Files.readAllBytes(log), StandardCharsets.UTF_8));
      }
      return new Result(p.exitValue(), new String(Files.readAllBytes(log), StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
