package dev.profold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogManager;
import org.junit.jupiter.api.Test;

/**
 * A process that calls the API without ever starting Profold pays nothing, its logging setup
 * included: a {@code java.util.logging} manager the application sets after the first call is still
 * the one it gets. In a JVM of its own, since the logging manager is set once per JVM.
 */
class UntouchedLoggingTest {
  /** The probe's own manager, named by the system property the probe sets. */
  public static final class ProbeManager extends LogManager {}

  /** Calls the API, then sets the manager and prints which one it got. */
  public static void main(String[] args) {
    try (Region r = Profold.region("work", Kind.COMPUTE);
        Scope s = Profold.with("tenant", "a")) {
      Profold.record("bytes", 1);
    }
    Profold.measure("payload", "bytes").record(2);
    System.setProperty("java.util.logging.manager", ProbeManager.class.getName());
    System.out.println(LogManager.getLogManager().getClass().getName());
  }

  @Test
  void theApplicationsLogManagerIsStillTakenAfterTheApiWasCalled() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p =
        new ProcessBuilder(
                List.of(
                    java,
                    "-cp",
                    System.getProperty("java.class.path"),
                    UntouchedLoggingTest.class.getName()))
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    // Before: Profold's logger, made when the class was first used, had set up the default one.
    assertThat(out).isEqualTo(ProbeManager.class.getName());
  }
}
