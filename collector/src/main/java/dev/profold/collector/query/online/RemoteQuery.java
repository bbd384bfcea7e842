package dev.profold.collector.query.online;

import dev.profold.proto.v1.QueryGrpc;
import dev.profold.proto.v1.QueryRequest;
import dev.profold.proto.v1.QueryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The client side of {@code profold query --collector}: one call of {@code profold.v1.Query/Run}
 * over a plaintext channel, with every failure turned into a one-line message and an exit code.
 * Each call opens and closes its own channel.
 */
public final class RemoteQuery {
  /** Largest response accepted: results of big schemes can exceed gRPC's 4 MiB default. */
  static final int MAX_RESPONSE_BYTES = 64 << 20;

  private RemoteQuery() {}

  /** A failure for the user: the message is one line; the exit code says which kind. */
  public static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    /** Exit code for the caller's mistakes: a bad query or option, an unknown scheme. */
    public static final int USAGE = 2;

    /** Exit code for everything else: unreachable collector, deadline, server errors. */
    public static final int OTHER = 1;

    private final int exitCode;

    Failure(int exitCode, String message) {
      super(message);
      this.exitCode = exitCode;
    }

    public int exitCode() {
      return exitCode;
    }
  }

  /**
   * Runs {@code request} against the collector at {@code target}.
   *
   * @param target {@code host:port} of the collector's gRPC port ({@code [::1]:7763} for IPv6)
   * @param deadline how long to wait for the answer, connecting included
   * @throws Failure with a one-line message when the call fails
   */
  public static QueryResponse run(String target, QueryRequest request, Duration deadline)
      throws Failure {
    HostPort at = HostPort.parse(target);
    ManagedChannel channel;
    try {
      channel =
          NettyChannelBuilder.forAddress(at.host(), at.port())
              .usePlaintext()
              .maxInboundMessageSize(MAX_RESPONSE_BYTES)
              .build();
    } catch (IllegalArgumentException e) { // a host gRPC cannot take ("[::1", "local host")
      throw new Failure(
          Failure.USAGE,
          "--collector: '"
              + target
              + "' is not HOST:PORT ("
              + e.getMessage()
              + "; e.g. localhost:7763, [::1]:7763)");
    }
    try {
      return QueryGrpc.newBlockingStub(channel)
          .withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS)
          .run(request);
    } catch (StatusRuntimeException e) {
      throw failure(target, deadline, e.getStatus());
    } finally {
      channel.shutdownNow();
      try {
        channel.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  static Failure failure(String target, Duration deadline, Status status) {
    String description = status.getDescription() == null ? "" : status.getDescription();
    return switch (status.getCode()) {
      case INVALID_ARGUMENT, NOT_FOUND -> new Failure(Failure.USAGE, description);
      case UNAVAILABLE ->
          description.equals("the collector " + OnlineQuery.STARTING)
              ? new Failure(
                  Failure.OTHER, "the collector at " + target + " " + OnlineQuery.STARTING)
              : new Failure(
                  Failure.OTHER,
                  "cannot reach the collector at " + target + ": " + reason(description, status));
      case DEADLINE_EXCEEDED ->
          new Failure(
              Failure.OTHER,
              "the collector at "
                  + target
                  + " did not answer within "
                  + OnlineQuery.durationText(deadline.toNanos())
                  + " (--deadline)");
      case UNIMPLEMENTED ->
          new Failure(
              Failure.OTHER,
              "the collector at " + target + " does not serve queries (profold.v1.Query)");
      default ->
          new Failure(
              Failure.OTHER,
              "query failed: " + status.getCode() + ": " + reason(description, status));
    };
  }

  /** The description, with the innermost cause's message when there is one (one line). */
  private static String reason(String description, Status status) {
    String text = description;
    Throwable c = status.getCause();
    if (c != null) {
      while (c.getCause() != null) {
        c = c.getCause();
      }
      String m = c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
      text = text.isEmpty() ? m : text + " (" + m + ")";
    }
    return text.isEmpty() ? status.getCode().toString() : text.replace('\n', ' ');
  }

  /** A parsed {@code host:port}. */
  record HostPort(String host, int port) {
    static HostPort parse(String target) throws Failure {
      int colon = target.lastIndexOf(':');
      String host = colon < 0 ? "" : target.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      int port = -1;
      if (colon >= 0) {
        try {
          port = Integer.parseInt(target.substring(colon + 1));
        } catch (NumberFormatException e) {
          port = -1;
        }
      }
      if (host.isEmpty() || port < 1 || port > 65535) {
        throw new Failure(
            Failure.USAGE,
            "--collector: '" + target + "' is not HOST:PORT (e.g. localhost:7763, the gRPC port)");
      }
      return new HostPort(host, port);
    }
  }
}
