package dev.profold.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.Status;
import dev.profold.collector.telemetry.RejectReason;
import dev.profold.proto.v1.SourceIdentity;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The holds of refused Export calls: which delta is held, until when, and for whom. */
class ExportHoldsTest {
  final AtomicLong now = new AtomicLong(1_000);
  final ExportHolds holds = new ExportHolds(now::get);
  final Status refused = Status.newBuilder().setCode(8).setMessage("full").build();

  static SourceIdentity source(String instance, long incarnation) {
    return SourceIdentity.newBuilder()
        .setService("search")
        .setInstance(instance)
        .setIncarnationId(incarnation)
        .build();
  }

  @Test
  void theEarliestRefusedDeltaHoldsTheLaterOnesUntilItComesAgain() {
    holds.refused(source("a", 1), 7, RejectReason.OVERLOADED, refused);
    holds.refused(source("a", 1), 9, RejectReason.DICTIONARY_FULL, refused); // 7 is still held
    holds.refused(source("a", 1), 5, RejectReason.OVERLOADED, refused); // an earlier one: held

    assertThat(holds.holding(source("a", 1), 6).from()).isEqualTo(5);
    assertThat(holds.holding(source("b", 1), 6)).as("another instance").isNull();
    assertThat(holds.holding(source("a", 2), 6)).as("another incarnation").isNull();
    assertThat(holds.holding(source("a", 1), 5)).as("the held delta again").isNull();
    assertThat(holds.holding(source("a", 1), 6)).as("the hold ended").isNull();
    assertThat(holds.size()).isZero();
  }

  @Test
  void aHoldIsForgottenAfterItsTime() {
    holds.refused(source("a", 1), 7, RejectReason.OVERLOADED, refused);
    now.addAndGet(ExportHolds.TTL_NANOS - 1);
    assertThat(holds.holding(source("a", 1), 8)).isNotNull();
    now.addAndGet(1);
    assertThat(holds.holding(source("a", 1), 8)).as("a client that gave 7 up").isNull();
    assertThat(holds.size()).isZero();
  }

  @Test
  void atMostMaxSourcesAreHeldAndExpiredOnesMakeRoom() {
    for (int i = 0; i < ExportHolds.MAX; i++) {
      holds.refused(source("i-" + i, 1), 3, RejectReason.OVERLOADED, refused);
    }
    holds.refused(source("one-more", 1), 3, RejectReason.OVERLOADED, refused);
    assertThat(holds.holding(source("one-more", 1), 4)).as("beyond the bound").isNull();
    assertThat(holds.size()).isEqualTo(ExportHolds.MAX);

    now.addAndGet(ExportHolds.TTL_NANOS);
    holds.refused(source("one-more", 1), 3, RejectReason.OVERLOADED, refused);
    assertThat(holds.holding(source("one-more", 1), 4)).isNotNull();
    assertThat(holds.size()).isOne();
  }
}
