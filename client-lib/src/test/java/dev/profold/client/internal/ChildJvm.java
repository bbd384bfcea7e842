package dev.profold.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Runs a few statements as a program in a child JVM: this JVM's own ({@link #current()}), or one of
 * Java 21 or later for code that needs virtual threads while the build runs on Java 17 ({@link
 * #java21()}: this JVM if it is recent enough, else a JDK installed next to it). Without one {@link
 * #java21()} aborts the test (reported skipped); CI sets {@code PROFOLD_REQUIRE_EXTERNAL_TOOLS=1},
 * which makes that a failure.
 */
public final class ChildJvm {
  private static final Pattern VERSION = Pattern.compile("JAVA_VERSION=\"(\\d+)");

  private ChildJvm() {}

  /** {@code bin/java} of this JVM. */
  public static Path current() {
    return Path.of(System.getProperty("java.home"), "bin", "java");
  }

  /** {@code bin/java} of a JDK 21 or later; else the test fails or is aborted (see below). */
  public static Path java21() throws IOException {
    return atLeast(21);
  }

  /**
   * {@code bin/java} of a JDK of feature release {@code feature} or later (this JVM if recent
   * enough, else the newest next to it). Without one, under {@code
   * PROFOLD_REQUIRE_EXTERNAL_TOOLS=1}, the test fails, else it is aborted (reported skipped, not
   * passed): either way the caller's test ends here.
   */
  public static Path atLeast(int feature) throws IOException {
    Optional<Path> java = find(feature);
    if (java.isPresent()) {
      return java.get();
    }
    String msg = "no JDK " + feature + " or later next to " + System.getProperty("java.home");
    if ("1".equals(System.getenv("PROFOLD_REQUIRE_EXTERNAL_TOOLS"))) {
      fail(msg + " (PROFOLD_REQUIRE_EXTERNAL_TOOLS=1)");
    }
    return org.junit.jupiter.api.Assumptions.abort(msg);
  }

  /**
   * Runs the statements {@code body} as the main method of class {@code name} (a single source
   * file, with this JVM's class path) under {@code java}; what it printed, after checking that it
   * exited with 0 within {@code seconds}.
   */
  public static String run(Path java, String name, int seconds, String... body) throws Exception {
    Path dir = Files.createTempDirectory("profold-" + name);
    Path main = dir.resolve(name + ".java");
    Files.writeString(
        main,
        "public class "
            + name
            + " {\n  public static void main(String[] args) throws Exception {\n"
            + String.join("\n", body)
            + "\n  }\n}\n");
    // Output to a file, not a pipe read to its end: reading would wait for the child to exit, and
    // the timeout below would never apply to a child that hangs.
    Path log = dir.resolve("out.txt");
    Process p =
        new ProcessBuilder(
                java.toString(), "-cp", System.getProperty("java.class.path"), main.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    boolean exited = p.waitFor(seconds, TimeUnit.SECONDS);
    if (!exited) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    String out = new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
    assertThat(exited).as("exited within %d s; it printed:%n%s", seconds, out).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  private static Optional<Path> find(int feature) throws IOException {
    Path home = Path.of(System.getProperty("java.home")).toRealPath();
    if (Runtime.version().feature() >= feature) {
      return Optional.of(home.resolve("bin").resolve("java"));
    }
    Path parent = home.getParent();
    if (parent == null) {
      return Optional.empty();
    }
    try (Stream<Path> siblings = Files.list(parent)) {
      return siblings
          .filter(d -> Files.isExecutable(d.resolve("bin").resolve("java")))
          .filter(d -> feature(d) >= feature)
          .max(Comparator.comparingInt(ChildJvm::feature))
          .map(d -> d.resolve("bin").resolve("java"));
    }
  }

  /**
   * The feature release of the JDK at {@code home}, from its {@code release} file; 0 if unknown.
   */
  private static int feature(Path home) {
    try {
      Matcher m = VERSION.matcher(Files.readString(home.resolve("release")));
      return m.find() ? Integer.parseInt(m.group(1)) : 0;
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }
}
