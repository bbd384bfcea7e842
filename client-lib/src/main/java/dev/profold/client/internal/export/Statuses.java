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
  /**
   * How gRPC describes a message over its limit, naming the limit: grpc-java's "gRPC message
   * exceeds maximum size N: M", and grpc-go's "received message larger than max (M vs. N)".
   */
  private static final Pattern TOO_LARGE =
      Pattern.compile(
          "exceeds maximum size (\\d{1,18})|larger than max \\(\\d{1,18} vs\\. (\\d{1,18})\\)");

  /**
   * Words of a status saying that a message was too large, without naming the limit. gRPC's HTTP/2
   * ENHANCE_YOUR_CALM (a connection closed for too many pings or resets) is RESOURCE_EXHAUSTED too,
   * and is not about size.
   */
  private static final Pattern ABOUT_SIZE =
      Pattern.compile("(?i)too (big|large)|larger than|exceeds|size");

  private static final Pattern NOT_ABOUT_SIZE = Pattern.compile("(?i)enhance_your_calm|pings");

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

  /**
   * The RetryInfo delay in {@code status}'s details, if any; a negative one is zero, one beyond
   * what a {@link Duration} holds is its whole seconds.
   */
  static Optional<Duration> retryDelay(com.google.rpc.Status status) {
    for (Any detail : status.getDetailsList()) {
      if (detail.is(RetryInfo.class)) {
        com.google.protobuf.Duration d;
        try {
          d = detail.unpack(RetryInfo.class).getRetryDelay();
        } catch (InvalidProtocolBufferException e) {
          return Optional.empty();
        }
        if (d.getSeconds() < 0 || (d.getSeconds() == 0 && d.getNanos() < 0)) {
          return Optional.of(Duration.ZERO);
        }
        try {
          return Optional.of(Duration.ofSeconds(d.getSeconds(), d.getNanos()));
        } catch (ArithmeticException e) { // seconds near Long.MAX_VALUE with nanos added
          return Optional.of(Duration.ofSeconds(d.getSeconds()));
        }
      }
    }
    return Optional.empty();
  }

  /**
   * The google.rpc.Status in {@code error}'s trailers, or null if it has none or one gRPC cannot
   * read (its code differs from the call's, as a proxy that rewrites statuses may leave it).
   */
  static com.google.rpc.Status details(Throwable error) {
    try {
      return io.grpc.protobuf.StatusProto.fromThrowable(error);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * Whether a RESOURCE_EXHAUSTED status's {@code description} says that a message was too large
   * (whether or not it names the limit), rather than another exhaustion: too many pings, streams or
   * requests.
   */
  static boolean aboutMessageSize(String description) {
    return description != null
        && ABOUT_SIZE.matcher(description).find()
        && !NOT_ABOUT_SIZE.matcher(description).find();
  }

  /**
   * The message size limit a RESOURCE_EXHAUSTED status's {@code description} names (at least 1), if
   * it names one: gRPC's words when a peer refuses a message as too large.
   */
  static OptionalLong messageLimit(String description) {
    Matcher m = TOO_LARGE.matcher(description == null ? "" : description);
    if (!m.find()) {
      return OptionalLong.empty();
    }
    String limit = m.group(1) != null ? m.group(1) : m.group(2);
    return OptionalLong.of(Math.max(1, Long.parseLong(limit)));
  }
}
