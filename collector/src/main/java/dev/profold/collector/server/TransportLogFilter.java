package dev.profold.collector.server;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns grpc-netty's "Transport failed" records into lines an operator can act on. grpc-netty logs
 * every connection that fails for a reason other than an I/O error at INFO with a full stack trace,
 * through java.util.logging: an HTTP/1 request on the gRPC port (Prometheus, curl or a load
 * balancer's health check pointed at 7763 instead of 7764) printed thirty lines per probe. Such a
 * request becomes one WARN line saying which port to use, at most every ten minutes with the count
 * of those left out; any other transport failure becomes one DEBUG line. Every other record of the
 * logger goes on to the filter that was there before, if any.
 *
 * <p>Thread-safe.
 */
final class TransportLogFilter implements Filter {
  private static final Logger log = LoggerFactory.getLogger(TransportLogFilter.class);

  /** The logger grpc-netty reports failed connections to (shaded package included). */
  static final String LOGGER =
      NettyServerBuilder.class.getPackageName() + ".NettyServerTransport.connections";

  /** Held so that the filtered logger is the one grpc-netty gets: JUL keeps loggers weakly. */
  private static final java.util.logging.Logger TRANSPORT_LOG =
      java.util.logging.Logger.getLogger(LOGGER);

  /** What grpc-netty's HTTP/2 codec says of an HTTP/1 request, before its request line. */
  static final String HTTP1 = "Unexpected HTTP/1.x request:";

  /** The least time between two lines about HTTP/1 requests. */
  static final long QUIET_NANOS = TimeUnit.MINUTES.toNanos(10);

  private final Filter previous; // null: none
  private final LongSupplier nanoClock;
  private final Object lock = new Object();
  private long nextLine = Long.MIN_VALUE; // guarded by lock; MIN_VALUE: none written yet
  private long unsaid; // guarded by lock: HTTP/1 requests left out since the last line

  TransportLogFilter(Filter previous, LongSupplier nanoClock) {
    this.previous = previous;
    this.nanoClock = nanoClock;
  }

  /** Puts the filter on grpc-netty's logger, in front of any filter it has; once per JVM. */
  static synchronized void install() {
    Filter current = TRANSPORT_LOG.getFilter();
    if (!(current instanceof TransportLogFilter)) {
      TRANSPORT_LOG.setFilter(new TransportLogFilter(current, System::nanoTime));
    }
  }

  @Override
  public boolean isLoggable(LogRecord record) {
    Throwable t = record.getThrown();
    if (t == null || !"Transport failed".equals(record.getMessage())) {
      return previous == null || previous.isLoggable(record);
    }
    String request = http1Request(t);
    if (request != null) {
      http1(request);
    } else {
      log.debug("a gRPC connection failed: {}", t.toString());
    }
    return false;
  }

  /** The request line of an HTTP/1 request in {@code t}'s causes ("GET /healthz"), or null. */
  static String http1Request(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      String m = c.getMessage();
      if (m != null && m.startsWith(HTTP1)) {
        String line = m.substring(HTTP1.length()).strip();
        return line.length() > 80 ? line.substring(0, 80) + "..." : line;
      }
    }
    return null;
  }

  private void http1(String request) {
    long now = nanoClock.getAsLong();
    long more;
    synchronized (lock) {
      if (nextLine != Long.MIN_VALUE && now - nextLine < 0) {
        unsaid++;
        return;
      }
      nextLine = now + QUIET_NANOS;
      more = unsaid; // those left out before this line, not one racing with it
      unsaid = 0;
    }
    log.warn(
        "a client sent an HTTP/1 request ({}) to the gRPC port, which speaks HTTP/2 only: point"
            + " Prometheus and HTTP health checks at the HTTP port (http_port, 7764 by default);"
            + " logged at most every 10 minutes{}",
        request,
        more == 0 ? "" : " (" + more + " more since the last line)");
  }
}
