package dev.profold.client.internal.export;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the exporter reads from the gRPC statuses the collector answers with. Stateless. */
final class Statuses {
  /** How gRPC describes a message over its limit: "gRPC message exceeds maximum size N: M". */
  private static final Pattern TOO_LARGE = Pattern.compile("exceeds maximum size (\\d{1,18})");

  private Statuses() {}

  /**
   * A status in one line, for the log and the stats: code, description and the message of its cause
   * (gRPC's own {@code toString} carries the cause's whole stack trace).
   */
  static String describe(Status status) {
    StringBuilder text = new StringBuilder(status.getCode().name());
    if (status.getDescription() != null) {
      text.append(": ").append(status.getDescription());
    }
    for (Throwable c = status.getCause(); c != null; c = c.getCause()) {
      if (c.getMessage() != null) { // the outermost message: it names the address, say
        text.append(" (").append(c.getMessage()).append(')');
        break;
      }
    }
    if (text.indexOf("First received frame was not SETTINGS") >= 0) {
      text.append(
          " (the endpoint does not speak gRPC's HTTP/2: is it the collector's HTTP port, for"
              + " /metrics, rather than its gRPC port?)");
    }
    return text.toString().replace('\n', ' ');
  }

  /** The RetryInfo delay in {@code status}'s details, if any; a negative one is zero. */
  static Optional<Duration> retryDelay(com.google.rpc.Status status) {
    for (Any detail : status.getDetailsList()) {
      if (detail.is(RetryInfo.class)) {
        try {
          com.google.protobuf.Duration d = detail.unpack(RetryInfo.class).getRetryDelay();
          Duration delay = Duration.ofSeconds(d.getSeconds(), d.getNanos());
          return Optional.of(delay.isNegative() ? Duration.ZERO : delay);
        } catch (InvalidProtocolBufferException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  /**
   * The message size limit a RESOURCE_EXHAUSTED status's {@code description} names (at least 1), if
   * it names one: gRPC's words when a peer refuses a message as too large.
   */
  static OptionalLong messageLimit(String description) {
    Matcher m = TOO_LARGE.matcher(description == null ? "" : description);
    return m.find()
        ? OptionalLong.of(Math.max(1, Long.parseLong(m.group(1))))
        : OptionalLong.empty();
  }
}
