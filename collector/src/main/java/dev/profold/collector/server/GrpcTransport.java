package dev.profold.collector.server;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC server's connection settings, beyond gRPC's defaults (docs/configuration.md, "Fixed
 * limits"). Immutable.
 *
 * <ul>
 *   <li>A client whose host vanished without closing its connection (a node lost, a NAT or load
 *       balancer that dropped the flow) held its Push stream, and the dictionary entries its ids
 *       refer to, for gRPC's default of two hours and more. The server now pings a connection after
 *       {@link #KEEPALIVE_SECONDS} without a frame from it and closes it when the ping is not
 *       answered within {@link #KEEPALIVE_TIMEOUT_SECONDS}.
 *   <li>Clients may ping every {@link #PERMIT_KEEPALIVE_SECONDS} (gRPC refuses pings more often
 *       than every 5 minutes by default, and ends the connection of a client that keeps them up),
 *       with or without calls: a client's own keepalive is allowed down to that.
 *   <li>At most {@link #MAX_CALLS_PER_CONNECTION} calls at once per connection (a process needs one
 *       Push stream and the odd query); more wait in the client for a call to end.
 *   <li>At most {@link #MAX_RESETS} streams reset by the client per {@link #RESET_WINDOW_SECONDS}
 *       seconds on a connection (HTTP/2 "rapid reset", CVE-2023-44487): beyond it the connection is
 *       closed. gRPC leaves this check off by default.
 * </ul>
 */
final class GrpcTransport {
  static final long KEEPALIVE_SECONDS = 60;
  static final long KEEPALIVE_TIMEOUT_SECONDS = 20;
  static final long PERMIT_KEEPALIVE_SECONDS = 10;
  static final int MAX_CALLS_PER_CONNECTION = 64;
  static final int MAX_RESETS = 200;
  static final int RESET_WINDOW_SECONDS = 10;

  private GrpcTransport() {}

  /** {@code b} with the settings above. */
  static NettyServerBuilder configure(NettyServerBuilder b) {
    return b.keepAliveTime(KEEPALIVE_SECONDS, TimeUnit.SECONDS)
        .keepAliveTimeout(KEEPALIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)
        .permitKeepAliveTime(PERMIT_KEEPALIVE_SECONDS, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        .maxConcurrentCallsPerConnection(MAX_CALLS_PER_CONNECTION)
        .maxRstFramesPerWindow(MAX_RESETS, RESET_WINDOW_SECONDS);
  }
}
