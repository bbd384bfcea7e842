package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import java.time.Duration;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class StatusesTest {
  @Test
  void readsTheLimitGrpcNamesWhenItRefusesAMessageAsTooLarge() {
    assertThat(Statuses.messageLimit("gRPC message exceeds maximum size 4194304: 5000000"))
        .isEqualTo(OptionalLong.of(4_194_304));
    assertThat(Statuses.messageLimit("exceeds maximum size 0: 12")).isEqualTo(OptionalLong.of(1));
    assertThat(Statuses.messageLimit("too many requests")).isEmpty();
    assertThat(Statuses.messageLimit(null)).isEmpty();
    // More digits than a long holds are not a limit (the pattern takes at most 18).
    assertThat(Statuses.messageLimit("exceeds maximum size 1234567890123456789"))
        .hasValue(123_456_789_012_345_678L);
  }

  @Test
  void readsTheRetryDelayFromTheStatusDetails() {
    com.google.rpc.Status withRetry =
        com.google.rpc.Status.newBuilder()
            .setCode(8)
            .addDetails(
                Any.pack(
                    RetryInfo.newBuilder()
                        .setRetryDelay(
                            com.google.protobuf.Duration.newBuilder().setSeconds(2).setNanos(5))
                        .build()))
            .build();
    assertThat(Statuses.retryDelay(withRetry)).hasValue(Duration.ofSeconds(2, 5));

    com.google.rpc.Status negative =
        withRetry.toBuilder()
            .setDetails(
                0,
                Any.pack(
                    RetryInfo.newBuilder()
                        .setRetryDelay(com.google.protobuf.Duration.newBuilder().setSeconds(-1))
                        .build()))
            .build();
    assertThat(Statuses.retryDelay(negative)).hasValue(Duration.ZERO);
    assertThat(Statuses.retryDelay(com.google.rpc.Status.newBuilder().setCode(8).build()))
        .isEmpty();
  }

  private static com.google.rpc.Status retryAfter(long seconds, int nanos) {
    return com.google.rpc.Status.newBuilder()
        .setCode(8)
        .addDetails(
            Any.pack(
                RetryInfo.newBuilder()
                    .setRetryDelay(
                        com.google.protobuf.Duration.newBuilder()
                            .setSeconds(seconds)
                            .setNanos(nanos))
                    .build()))
        .build();
  }

  @Test
  void aRetryDelayBeyondWhatADurationHoldsIsItsWholeSecondsNotAnException() {
    // Nanos over a second (a message that breaks protobuf's rule) carry into the seconds, and
    // Duration.ofSeconds then throws ArithmeticException: the exporter kept a dead stream and
    // never reconnected.
    assertThat(Statuses.retryDelay(retryAfter(Long.MAX_VALUE, Integer.MAX_VALUE)))
        .hasValue(Duration.ofSeconds(Long.MAX_VALUE));
    assertThat(Statuses.retryDelay(retryAfter(0, -5))).hasValue(Duration.ZERO);
  }

  @Test
  void readsGrpcGosWordsForAMessageOverTheLimit() {
    assertThat(
            Statuses.messageLimit("grpc: received message larger than max (5000000 vs. 4194304)"))
        .isEqualTo(OptionalLong.of(4_194_304));
  }

  @Test
  void tellsAMessageTooLargeFromOtherExhaustion() {
    assertThat(Statuses.aboutMessageSize("gRPC message exceeds maximum size 4194304: 5000000"))
        .isTrue();
    assertThat(Statuses.aboutMessageSize("too big")).isTrue();
    assertThat(Statuses.aboutMessageSize("Request entity too large")).isTrue();
    assertThat(Statuses.aboutMessageSize("too many streams")).isFalse();
    assertThat(Statuses.aboutMessageSize("rate limited")).isFalse();
    assertThat(Statuses.aboutMessageSize(null)).isFalse();
    // gRPC's HTTP/2 ENHANCE_YOUR_CALM (too many pings) is RESOURCE_EXHAUSTED too.
    assertThat(
            Statuses.aboutMessageSize(
                "Bandwidth exhausted HTTP/2 error code: ENHANCE_YOUR_CALM Received Goaway"
                    + " too_many_pings"))
        .isFalse();
  }

  @Test
  void detailsThatGrpcCannotReadAreNone() {
    com.google.rpc.Status other = com.google.rpc.Status.newBuilder().setCode(14).build();
    io.grpc.Metadata trailers = new io.grpc.Metadata();
    trailers.put(
        io.grpc.Metadata.Key.of("grpc-status-details-bin", io.grpc.Metadata.BINARY_BYTE_MARSHALLER),
        other.toByteArray());
    assertThat(Statuses.details(io.grpc.Status.INTERNAL.asRuntimeException(trailers))).isNull();
    assertThat(Statuses.details(io.grpc.Status.UNAVAILABLE.asRuntimeException(trailers)))
        .isEqualTo(other);
  }
}
