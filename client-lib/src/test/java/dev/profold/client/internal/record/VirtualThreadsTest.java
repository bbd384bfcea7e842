package dev.profold.client.internal.record;

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
import org.junit.jupiter.api.Test;

/**
 * Real virtual threads (Java 21 and later) record through pooled states: 20,000 of them, 50 at a
 * time, each sleeping inside nested regions (so it leaves its carrier and may come back on
 * another), record every value under as many states as run at once, in the {@code virtual} group.
 *
 * <p>The build runs on Java 17, so the check runs in a child JVM of Java 21 or later: this JVM if
 * it is one, else a JDK installed next to it. Without one it logs why and passes; CI sets {@code
 * PROFOLD_REQUIRE_EXTERNAL_TOOLS=1}, which makes that a failure.
 */
class VirtualThreadsTest {
  private static final Pattern VERSION = Pattern.compile("JAVA_VERSION=\"(\\d+)");

  @Test
  void twentyThousandVirtualThreadsRecordThroughAsManyStatesAsRunAtOnce() throws Exception {
    Optional<Path> java = javaOf21OrLater();
    if (java.isEmpty()) {
      String msg = "no JDK 21 or later next to " + System.getProperty("java.home");
      if ("1".equals(System.getenv("PROFOLD_REQUIRE_EXTERNAL_TOOLS"))) {
        fail(msg + " (PROFOLD_REQUIRE_EXTERNAL_TOOLS=1)");
      }
      System.err.println("SKIPPED CHECK: " + msg);
      return;
    }
    String out =
        run(
            java.get(),
            "var encoder = new dev.profold.client.internal.export.DeltaEncoder(",
            "    dev.profold.proto.v1.SourceIdentity.newBuilder().setService(\"s\")",
            "        .setInstance(\"i\").setIncarnationId(1).build());",
            "var recorder = new dev.profold.client.internal.record.Recorder(",
            "    encoder, 1024, Integer.MAX_VALUE);",
            "var gate = new java.util.concurrent.Semaphore(50);",
            "try (var ex = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {",
            "  for (int i = 0; i < 20_000; i++) {",
            "    ex.submit(() -> {",
            "      gate.acquireUninterruptibly();",
            "      try (var r = recorder.region(\"handle\", dev.profold.client.Kind.COMPUTE)) {",
            "        try (var q = recorder.region(\"db.query\", dev.profold.client.Kind.IO)) {",
            "          Thread.sleep(1);",
            "        }",
            "      } catch (InterruptedException e) {",
            "        throw new IllegalStateException(e);",
            "      } finally {",
            "        gate.release();",
            "      }",
            "    });",
            "  }",
            "}",
            "var snapshots = recorder.collect();",
            "long values = 0;",
            "var groups = new java.util.TreeSet<String>();",
            "for (var t : snapshots) {",
            "  groups.add(t.group());",
            "  for (var c : t.cells()) values += c.state().count();",
            "}",
            "System.out.println(\"states=\" + snapshots.size() + \" values=\" + values",
            "    + \" groups=\" + groups + \" misuse=\" + recorder.misuseCounts().values().stream()",
            "    .mapToLong(Long::longValue).sum());");
    Matcher m =
        Pattern.compile("states=(\\d+) values=(\\d+) groups=\\[(.*)] misuse=(\\d+)").matcher(out);
    assertThat(m.find()).as(out).isTrue();
    assertThat(Integer.parseInt(m.group(1))).as(out).isBetween(1, 50);
    assertThat(Long.parseLong(m.group(2))).as(out).isEqualTo(40_000);
    assertThat(m.group(3)).isEqualTo("virtual");
    assertThat(m.group(4)).isEqualTo("0");
  }

  /** Runs the statements {@code body} as a main method under {@code java}; what it printed. */
  private static String run(Path java, String... body) throws Exception {
    Path dir = Files.createTempDirectory("profold-virtual");
    Path main = dir.resolve("VirtualThreadsProbe.java");
    Files.writeString(
        main,
        "public class VirtualThreadsProbe {\n"
            + "  public static void main(String[] args) throws Exception {\n"
            + String.join("\n", body)
            + "\n  }\n}\n");
    Process p =
        new ProcessBuilder(
                java.toString(), "-cp", System.getProperty("java.class.path"), main.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  /** {@code bin/java} of this JVM if it is 21 or later, else of the newest such JDK beside it. */
  private static Optional<Path> javaOf21OrLater() throws IOException {
    Path home = Path.of(System.getProperty("java.home")).toRealPath();
    if (Runtime.version().feature() >= 21) {
      return Optional.of(home.resolve("bin").resolve("java"));
    }
    Path parent = home.getParent();
    if (parent == null) {
      return Optional.empty();
    }
    try (Stream<Path> siblings = Files.list(parent)) {
      return siblings
          .filter(d -> Files.isExecutable(d.resolve("bin").resolve("java")))
          .filter(d -> feature(d) >= 21)
          .max(Comparator.comparingInt(VirtualThreadsTest::feature))
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
