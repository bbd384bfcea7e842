package dev.profold.collector.ingest;

import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Keeps grpc-netty's stack trace for a message over {@code limits.max_message_bytes} out of the
 * log. For each such message grpc-netty logs, through java.util.logging on its {@code
 * NettyServerStream} logger, a WARNING "Exception processing message" with a {@link
 * StatusRuntimeException} (RESOURCE_EXHAUSTED, "gRPC message exceeds maximum size") and its stack
 * trace. A client sending too much is no fault of the collector, and {@link OversizedMessages}
 * already counts it and logs one line naming the limit to raise. This filter drops those records
 * only; every other record of the logger goes on to the filter that was there before, if any.
 *
 * <p>Thread-safe: immutable once installed.
 */
public final class OversizedMessageLogFilter implements Filter {
  /** The logger grpc-netty's server stream logs to (shaded package included). */
  static final String LOGGER = NettyServerBuilder.class.getPackageName() + ".NettyServerStream";

  /** Held so that the filtered logger is the one grpc-netty gets: JUL keeps loggers weakly. */
  private static final Logger GRPC_STREAM_LOG = Logger.getLogger(LOGGER);

  private final Filter previous; // null: none

  private OversizedMessageLogFilter(Filter previous) {
    this.previous = previous;
  }

  /** Puts the filter on grpc-netty's logger, in front of any filter it has; once per JVM. */
  public static synchronized void install() {
    Filter current = GRPC_STREAM_LOG.getFilter();
    if (!(current instanceof OversizedMessageLogFilter)) {
      GRPC_STREAM_LOG.setFilter(new OversizedMessageLogFilter(current));
    }
  }

  @Override
  public boolean isLoggable(LogRecord record) {
    if (isOversizedMessage(record.getThrown())) {
      return false;
    }
    return previous == null || previous.isLoggable(record);
  }

  /** True for the error gRPC's deframer raises for a message over the inbound limit. */
  static boolean isOversizedMessage(Throwable t) {
    if (!(t instanceof StatusRuntimeException || t instanceof StatusException)) {
      return false;
    }
    Status s = Status.fromThrowable(t);
    return s.getCode() == Status.Code.RESOURCE_EXHAUSTED
        && s.getDescription() != null
        && s.getDescription().contains(OversizedMessages.TOO_LARGE);
  }
}
