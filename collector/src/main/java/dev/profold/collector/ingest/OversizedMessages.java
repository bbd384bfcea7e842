package dev.profold.collector.ingest;

import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.telemetry.RejectReason;
import dev.profold.proto.v1.IngestGrpc;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the Ingest messages that gRPC refused as larger than {@code limits.max_message_bytes}.
 * Such a message never reaches {@link IngestService}: gRPC ends the call with RESOURCE_EXHAUSTED
 * ("gRPC message exceeds maximum size N: M"), so without this the collector would not know a
 * client's data was turned away. Counted as {@code
 * profold_deltas_rejected_total{reason="too_large"}} and logged once, with what to change.
 *
 * <p>Thread-safe: gRPC calls the tracers on its transport threads.
 */
public final class OversizedMessages extends ServerStreamTracer.Factory {
  private static final Logger log = LoggerFactory.getLogger(OversizedMessages.class);

  /** What gRPC's deframer says of a message over the limit. */
  static final String TOO_LARGE = "exceeds maximum size";

  private static final ServerStreamTracer NOTHING = new ServerStreamTracer() {};

  private final CollectorMetrics metrics;
  private final int maxMessageBytes;
  private final AtomicBoolean logged = new AtomicBoolean();

  /** Counts into {@code metrics}; {@code maxMessageBytes} is the configured limit, for the log. */
  public OversizedMessages(CollectorMetrics metrics, int maxMessageBytes) {
    this.metrics = metrics;
    this.maxMessageBytes = maxMessageBytes;
  }

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    if (!fullMethodName.startsWith(IngestGrpc.SERVICE_NAME + "/")) {
      return NOTHING;
    }
    return new ServerStreamTracer() {
      @Override
      public void streamClosed(Status status) {
        if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED
            && status.getDescription() != null
            && status.getDescription().contains(TOO_LARGE)) {
          // Received, and rejected: so that rejected never exceeds received (its bytes were not
          // read, so the received bytes leave it out).
          metrics.deltaReceived(0);
          metrics.deltaRejected(RejectReason.TOO_LARGE);
          if (logged.compareAndSet(false, true)) {
            log.warn(
                "a client sent a message larger than limits.max_message_bytes ({} bytes): {}."
                    + " gRPC refused it before the collector saw it, and the client's data in it"
                    + " is lost. Raise limits.max_message_bytes, or set the client's"
                    + " PROFOLD_MAX_MESSAGE_BYTES to {} (logged once; counted in"
                    + " profold_deltas_rejected_total{reason=\"too_large\"})",
                maxMessageBytes,
                status.getDescription(),
                maxMessageBytes);
          }
        }
      }
    };
  }
}
