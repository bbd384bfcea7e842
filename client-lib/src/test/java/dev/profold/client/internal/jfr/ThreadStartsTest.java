package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Starts wait for their JFR event in a bounded table; starts that will never see theirs (a start
 * before the recording began, an event the agent leaves out) must not fill it for good.
 */
class ThreadStartsTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);
  private final ThreadStarts starts = new ThreadStarts(now::get);

  @Test
  void aStartGivesItsDurationOnceToItsEvent() {
    starts.started(7, 1_500);
    assertThat(starts.take(7)).isEqualTo(1_500);
    assertThat(starts.take(7)).isZero();
    assertThat(starts.take(8)).as("never timed").isZero();
  }

  @Test
  void aFullTableOfStartsThatNeverSawTheirEventsMakesRoomOnceTheyAreStale() {
    for (long id = 0; id < ThreadStarts.MAX; id++) {
      starts.started(id, 10);
    }
    now.addAndGet(TimeUnit.SECONDS.toNanos(5));
    starts.started(100_000, 20); // full of recent starts: this one gets no duration
    assertThat(starts.take(100_000)).isZero();

    now.addAndGet(ThreadStarts.STALE_NANOS);
    starts.started(100_001, 30); // the old ones are given up, this one waits
    assertThat(starts.take(100_001)).isEqualTo(30);
    assertThat(starts.take(5)).as("given up").isZero();
  }

  @Test
  void recentStartsAreKeptWhenTheTableFills() {
    for (long id = 0; id < ThreadStarts.MAX - 1; id++) {
      starts.started(id, 10);
    }
    now.addAndGet(ThreadStarts.STALE_NANOS + 1);
    starts.started(ThreadStarts.MAX - 1, 10); // fills the table, recent
    starts.started(50_000, 40); // full: the stale ones go, the recent one stays
    assertThat(starts.take(ThreadStarts.MAX - 1)).isEqualTo(10);
    assertThat(starts.take(50_000)).isEqualTo(40);
  }
}
