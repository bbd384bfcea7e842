package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import org.junit.jupiter.api.Test;

class StartFailureTest {
  /** What one call to a logger carried. */
  private record Logged(Level level, String message, Throwable thrown) {}

  /** A logger that keeps every call, at every level. */
  private static final class Recording implements System.Logger {
    final List<Logged> calls = new ArrayList<>();

    @Override
    public String getName() {
      return "dev.profold.client";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      calls.add(new Logged(level, msg, thrown));
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      calls.add(new Logged(level, format, null));
    }
  }

  @Test
  void theWarningSaysWhatWentWrongInOneLineAndTheStackTraceIsAtDebug() {
    Recording log = new Recording();
    IllegalStateException e = new IllegalStateException("no name resolver for 'http'");

    StartFailure.log(log, "Profold", e);

    assertThat(log.calls).hasSize(2);
    Logged warning = log.calls.get(0);
    assertThat(warning.level()).isEqualTo(Level.WARNING);
    assertThat(warning.thrown()).as("no stack trace at WARNING").isNull();
    assertThat(warning.message())
        .startsWith(
            "Profold could not start (java.lang.IllegalStateException: no name resolver for"
                + " 'http'); the application runs on without it.")
        .doesNotContain("\n");
    Logged debug = log.calls.get(1);
    assertThat(debug.level()).isEqualTo(Level.DEBUG);
    assertThat(debug.thrown()).isSameAs(e);
  }
}
