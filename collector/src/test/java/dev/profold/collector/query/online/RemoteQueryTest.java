package dev.profold.collector.query.online;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Status;
import java.net.ConnectException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How {@code profold query --collector} reports a failed call: one line and an exit code. */
class RemoteQueryTest {
  private static final Duration TEN_SECONDS = Duration.ofSeconds(10);

  private static RemoteQuery.Failure failure(Status status) {
    return RemoteQuery.failure("db-1:7763", TEN_SECONDS, status);
  }

  @Test
  void theCallersMistakesExitWith2WithTheCollectorsMessage() {
    RemoteQuery.Failure bad =
        failure(Status.INVALID_ARGUMENT.withDescription("bad query: at column 3: expected x"));
    assertThat(bad.exitCode()).isEqualTo(2);
    assertThat(bad).hasMessage("bad query: at column 3: expected x");
    assertThat(failure(Status.NOT_FOUND.withDescription("unknown scheme 'x'")).exitCode())
        .isEqualTo(2);
  }

  @Test
  void aCollectorStillStartingIsSaidSoNotUnreachable() {
    RemoteQuery.Failure starting =
        failure(Status.UNAVAILABLE.withDescription("the collector " + OnlineQuery.STARTING));
    assertThat(starting.exitCode()).isEqualTo(1);
    assertThat(starting)
        .hasMessage(
            "the collector at db-1:7763 is starting and has no snapshot of its schemes yet; retry"
                + " in a second");
  }

  @Test
  void transportAndServerProblemsExitWith1() {
    RemoteQuery.Failure down =
        failure(
            Status.UNAVAILABLE
                .withDescription("io exception")
                .withCause(new ConnectException("Connection refused")));
    assertThat(down.exitCode()).isEqualTo(1);
    assertThat(down)
        .hasMessage("cannot reach the collector at db-1:7763: io exception (Connection refused)");
    assertThat(failure(Status.DEADLINE_EXCEEDED))
        .hasMessage("the collector at db-1:7763 did not answer within 10s (--deadline)");
    assertThat(failure(Status.UNIMPLEMENTED))
        .hasMessage("the collector at db-1:7763 does not serve queries (profold.v1.Query)");
    assertThat(failure(Status.INTERNAL.withDescription("internal error\nrunning")))
        .hasMessage("query failed: INTERNAL: internal error running");
  }

  @Test
  void targetsAreHostColonPort() throws Exception {
    assertThat(RemoteQuery.HostPort.parse("localhost:7763"))
        .isEqualTo(new RemoteQuery.HostPort("localhost", 7763));
    assertThat(RemoteQuery.HostPort.parse("[::1]:7763"))
        .isEqualTo(new RemoteQuery.HostPort("::1", 7763));
    for (String bad : new String[] {"localhost", ":7763", "host:0", "host:70000", "host:x"}) {
      RemoteQuery.Failure f =
          catchThrowableOfType(RemoteQuery.Failure.class, () -> RemoteQuery.HostPort.parse(bad));
      assertThat(f).as(bad).isNotNull();
      assertThat(f.exitCode()).isEqualTo(2);
    }
  }
}
