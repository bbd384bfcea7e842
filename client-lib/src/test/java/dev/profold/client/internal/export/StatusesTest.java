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
}
