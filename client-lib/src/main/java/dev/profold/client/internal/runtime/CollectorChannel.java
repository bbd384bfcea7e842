package dev.profold.client.internal.runtime;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gRPC channel to the collector, on threads of its own, all named {@code profold-*}: one Netty
 * event loop over NIO ({@code profold-grpc-loop-*}) and two threads ({@code profold-grpc-N}) for
 * the channel's callbacks and its blocking work (resolving the endpoint's name).
 *
 * <p>gRPC's defaults are JVM-wide pools named like the application's own gRPC threads ({@code
 * grpc-default-worker-ELG-*}, {@code grpc-default-executor-*}): the runtime's threads would be
 * reported as application thread groups, merged with the application's own gRPC threads, and their
 * CPU time would be missing from the client's overhead. Threads named {@code profold-*} are left
 * out of the thread groups ({@code JvmThreads}) and of the agent's events, and their CPU time is
 * reported as the client's overhead. NIO, not epoll: the agent jar leaves Netty's native transports
 * out. An application that left {@code grpc-netty-shaded} out of its class path gets gRPC's default
 * transport instead (said once at INFO): its event loop threads are then gRPC's.
 *
 * <p>The threads are daemons, started when first needed, and end after {@link #close()}.
 * Thread-safe.
 */
final class CollectorChannel {
  private static final System.Logger LOG = System.getLogger("dev.profold.client");

  /** How long {@link #close()} waits for the channel to finish closing its connection. */
  private static final long CLOSE_WAIT_MILLIS = 1_000;

  private static final AtomicInteger EXECUTOR_THREADS = new AtomicInteger();

  private static final String DNS_SCHEME = "dns:///";

  /** Where the agent jar relocates its dependencies (client-lib's shade configuration). */
  private static final String RELOCATED = "dev.profold.shaded.";

  /**
   * The relocated gRPC's root logger, kept so its level holds (java.util.logging keeps loggers
   * weakly); null without relocation or without java.util.logging.
   */
  @SuppressWarnings("unused") // held, not read
  private static final Object RELOCATED_GRPC_LOGGER = quietRelocatedGrpc();

  private final ExecutorService executor;
  private final OwnLoop loop; // null without grpc-netty-shaded
  private final ManagedChannel channel;

  /** A plaintext channel to {@code endpoint} ({@code host:port}, or {@code dns:///host:port}). */
  CollectorChannel(String endpoint) {
    // gRPC resolves a target without a scheme by DNS anyway; written with it, a bracketed IPv6
    // address is no valid URI, and gRPC then finds no resolver for it.
    endpoint = endpoint.startsWith(DNS_SCHEME) ? endpoint.substring(DNS_SCHEME.length()) : endpoint;
    this.executor =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "profold-grpc-" + EXECUTOR_THREADS.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    OwnLoop l = null;
    ManagedChannelBuilder<?> builder;
    try {
      l = new OwnLoop(new DefaultThreadFactory("profold-grpc-loop", true));
      builder = l.builder(endpoint);
    } catch (LinkageError e) {
      LOG.log(
          System.Logger.Level.INFO,
          "Profold: grpc-netty-shaded is not on the class path ({0}); the channel to the collector"
              + " uses gRPC''s default transport, whose threads show as an application thread group",
          e.toString());
      builder = ManagedChannelBuilder.forTarget(endpoint);
    }
    this.loop = l;
    try {
      this.channel = builder.usePlaintext().executor(executor).offloadExecutor(executor).build();
    } catch (RuntimeException e) {
      // The loop's selector and the threads are not left behind by a start that failed here.
      executor.shutdown();
      if (l != null) {
        l.close();
      }
      throw e;
    }
  }

  /**
   * In the agent jar, the relocated gRPC logs every failed attempt to resolve or reach the
   * collector at WARNING with a stack trace into the application's stderr, again at each retry (a
   * host name that does not resolve: 237 lines a minute); the exporter says what went wrong itself,
   * once. So the relocated copy's loggers, which nothing else uses, log SEVERE only. Without
   * relocation (the library jar, whose gRPC the application may share) nothing is set.
   */
  private static Object quietRelocatedGrpc() {
    String grpc = ManagedChannelBuilder.class.getPackageName();
    if (!grpc.startsWith(RELOCATED)) {
      return null;
    }
    try {
      java.util.logging.Logger l = java.util.logging.Logger.getLogger(grpc);
      l.setLevel(java.util.logging.Level.SEVERE);
      return l;
    } catch (LinkageError | SecurityException e) {
      return null;
    }
  }

  ManagedChannel channel() {
    return channel;
  }

  /**
   * Closes the channel at once, waits (at most {@value #CLOSE_WAIT_MILLIS} ms) for it to finish, so
   * that no callback of it meets a stopped executor, then stops the threads.
   */
  void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    executor.shutdown();
    if (loop != null) {
      loop.close();
    }
  }

  /**
   * The Netty event loop of the channel. Netty's classes are named only here, so that without them
   * the error is met when this class is loaded, in the constructor's {@code try}.
   */
  private static final class OwnLoop {
    private final EventLoopGroup group;

    OwnLoop(ThreadFactory threads) {
      keepRelocatedNettyOffNativeCode();
      this.group = new MultiThreadIoEventLoopGroup(1, threads, NioIoHandler.newFactory());
    }

    ManagedChannelBuilder<?> builder(String endpoint) {
      return NettyChannelBuilder.forTarget(endpoint)
          .eventLoopGroup(group)
          .channelType(NioSocketChannel.class);
    }

    /**
     * In the agent jar, Netty is Profold's own relocated copy, without its native transports (the
     * jar leaves them out). gRPC still probes for epoll when its Netty classes are first used, and
     * the probe's {@code System.loadLibrary} makes Java 24 and later print a four-line warning
     * about restricted methods into the application's stderr (a later release is to refuse the
     * call). Setting the copy's own, relocated {@code noNative} property, which no other Netty
     * reads, stops it trying. Without relocation (the library jar, whose gRPC and Netty the
     * application may share) nothing is set.
     */
    private static void keepRelocatedNettyOffNativeCode() {
      String channels = EventLoopGroup.class.getPackageName(); // <netty>.channel
      if (!channels.startsWith(RELOCATED) || !channels.endsWith(".channel")) {
        return;
      }
      String property =
          channels.substring(0, channels.length() - ".channel".length()) + ".transport.noNative";
      try {
        if (System.getProperty(property) == null) {
          System.setProperty(property, "true");
        }
      } catch (SecurityException e) {
        LOG.log(System.Logger.Level.DEBUG, "Profold: cannot set " + property, e);
      }
    }

    void close() {
      // No listener on the returned future: notifying it would start a thread of Netty's own.
      var unused = group.shutdownGracefully(0, CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    }
  }
}
