package dev.profold.collector.server;

import dev.profold.proto.v1.IngestGrpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
 *   <li>Ingest calls are handled (deltas parsed and decoded, acks of rejections queued) on {@link
 *       #callThreads()} threads named {@code profold-grpc-call-N}, and the other services' calls
 *       (health, queries) on {@link #CONTROL_THREADS} of their own, not on gRPC's default pool,
 *       which starts a thread for every call event that finds none free: a burst of deltas from a
 *       thousand clients made a thousand threads, each decoding on the same few CPUs. Nothing a
 *       call does there blocks (the fold thread answers deltas), so one thread per CPU keeps them
 *       busy; call events beyond them wait their turn, at most one per call, since gRPC runs a
 *       call's events one at a time.
 * </ul>
 */
final class GrpcTransport {
  static final long KEEPALIVE_SECONDS = 60;
  static final long KEEPALIVE_TIMEOUT_SECONDS = 20;
  static final long PERMIT_KEEPALIVE_SECONDS = 10;
  static final int MAX_CALLS_PER_CONNECTION = 64;
  static final int MAX_RESETS = 200;
  static final int RESET_WINDOW_SECONDS = 10;

  private static final String CALL_THREAD_PREFIX = "profold-grpc-call-";
  private static final String CONTROL_THREAD_PREFIX = "profold-grpc-control-";

  private GrpcTransport() {}

  /** Threads that handle calls: one per CPU the JVM may use, at least 2. */
  static int callThreads() {
    return Math.max(2, Runtime.getRuntime().availableProcessors());
  }

  /** Threads that handle the other services' calls (health, queries, reflection). */
  static final int CONTROL_THREADS = 2;

  /**
   * A new executor for the server's Ingest calls: {@link #callThreads()} daemon threads, started as
   * call events come, and an unbounded queue (bounded in practice by the calls open, see above).
   * The caller shuts it down after the server has terminated; events that come after (a transport
   * still closing) are dropped, not thrown at Netty's threads.
   */
  static ThreadPoolExecutor callExecutor() {
    return pool(callThreads(), CALL_THREAD_PREFIX);
  }

  /**
   * A new executor for the other services' calls: health checks, which a supervisor probes, and
   * queries, each of which hands its work to a pool of its own, so that neither waits behind deltas
   * being decoded. {@link #CONTROL_THREADS} threads; shut down as {@link #callExecutor()}.
   */
  static ThreadPoolExecutor controlExecutor() {
    return pool(CONTROL_THREADS, CONTROL_THREAD_PREFIX);
  }

  private static ThreadPoolExecutor pool(int threads, String prefix) {
    AtomicInteger made = new AtomicInteger();
    return new ThreadPoolExecutor(
        threads,
        threads,
        0,
        TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(),
        r -> {
          Thread t = new Thread(r, prefix + made.incrementAndGet());
          t.setDaemon(true);
          return t;
        },
        new ThreadPoolExecutor.DiscardPolicy());
  }

  /**
   * Calls of the Ingest service run on {@code ingest}; the others on the server's default executor
   * (the {@link #controlExecutor()}).
   */
  static ServerCallExecutorSupplier ingestOn(Executor ingest) {
    return new ServerCallExecutorSupplier() {
      @Override
      public <ReqT, RespT> Executor getExecutor(ServerCall<ReqT, RespT> call, Metadata headers) {
        return IngestGrpc.SERVICE_NAME.equals(call.getMethodDescriptor().getServiceName())
            ? ingest
            : null;
      }
    };
  }

  /** Whether {@code t} is one of the threads of a {@link #callExecutor()}. */
  static boolean isCallThread(Thread t) {
    return t.getName().startsWith(CALL_THREAD_PREFIX);
  }

  /** Whether {@code t} is one of the threads of a {@link #controlExecutor()}. */
  static boolean isControlThread(Thread t) {
    return t.getName().startsWith(CONTROL_THREAD_PREFIX);
  }

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
