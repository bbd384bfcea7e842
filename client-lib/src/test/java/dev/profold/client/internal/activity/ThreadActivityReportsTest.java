package dev.profold.client.internal.activity;

import static dev.profold.client.internal.activity.ActivityGroups.group;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.proto.v1.ThreadGroupActivity;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** How start and end reports reach the close that counts them. */
class ThreadActivityReportsTest {
  private static final long S = 1_000_000_000L;

  private final FakeThreads threads = new FakeThreads();
  private final ThreadActivity activity = new ThreadActivity(threads);

  @Test
  void timedStartsAndEndsWithinTheirBoundsAreAllCounted() {
    // Each bound (MAX_STARTS_AND_ENDS) held on its own before the reports were queued: 50,000
    // timed starts and 50,000 ends in one interval (5,000 a second, a 10 s interval) were all
    // counted, and a timed start's thread_mgmt time was never dropped.
    threads.set(new LiveThread(1, "spawner", 0));
    activity.close(0, 0);
    int n = 50_000;
    for (int i = 0; i < n; i++) {
      activity.timedStart(100 + i, S, 1, 0, 1_000); // 1 µs off CPU in each start
      activity.ended(100 + i, "burst-" + i, 1_000, 2 * S);
    }
    threads.set(new LiveThread(1, "spawner", S));

    List<ThreadGroupActivity> groups = activity.close(0, 10 * S);

    assertThat(group(groups, "burst-*").getThreads()).as("every ended thread").isEqualTo(n);
    assertThat(group(groups, "spawner").getThreadMgmtNanos())
        .as("every timed start's time off CPU")
        .isEqualTo(n * 1_000L);
  }

  @Test
  void anEndPublishedBehindOneStillBeingWrittenCountsInTheIntervalItEndedIn()
      throws InterruptedException {
    threads.set(new LiveThread(1, "spawner", 0), new LiveThread(50, "slow-50", 0));
    activity.close(0, 0);
    EndRing ring = activity.reports().ring;
    // A hang guard, not the 50 ms of production: the thread resuming below must not have to be
    // scheduled within a bound for the test to pass on a loaded machine.
    activity.reports().endWriteWaitNanos = 30_000_000_000L;
    // Thread 50, ending, claimed a slot for its end and was descheduled before publishing it.
    long seq = ring.claim();
    activity.started(7, S);
    activity.ended(7, "worker-7", S / 2, 3 * S); // published, and thread 7 is gone
    threads.set(new LiveThread(1, "spawner", S), new LiveThread(50, "slow-50", S));
    Thread resumes =
        new Thread(
            () -> {
              try {
                Thread.sleep(5);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
              ring.publish(seq, 50, "slow-50", S, 9 * S, false);
            });
    resumes.start();

    List<ThreadGroupActivity> groups = activity.close(0, 10 * S);
    resumes.join();

    assertThat(group(groups, "worker-*").getWallNanos())
        .as("thread 7 ended before the close looked: counted in this interval, from 1 s to 3 s")
        .isEqualTo(2 * S);
  }

  @Test
  void aRingReaderReenteredFromTheLogNeitherWedgesTheRingNorLosesEnds() {
    activity.close(0, 0);
    for (int i = 0; i < StartsAndEnds.END_RING; i++) { // the ring full of ends
      activity.ended(100 + i, "early-" + i, 1_000, S);
    }
    List<AtomicInteger> bounds =
        List.of(activity.reports().startsWaiting, activity.reports().endsWaiting);
    bounds.forEach(b -> b.set(1 << 29)); // the queue full: the next report logs the bound
    Logger log = Logger.getLogger("dev.profold.client");
    Level level = log.getLevel();
    AtomicBoolean once = new AtomicBoolean();
    Handler handler =
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            if (once.getAndSet(true)) {
              return;
            }
            // A logging backend that starts a thread (timed: a start report) as it logs, after
            // which threads end.
            bounds.forEach(b -> b.set(0));
            activity.started(999, S);
            for (int k = 0; k < 10; k++) {
              activity.ended(5000 + k, "late-" + k, 1_000, 2 * S);
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    log.setLevel(Level.INFO);
    log.addHandler(handler);
    try {
      activity.onCpuSample(1, false); // the JFR feed moves the ring's ends on, and logs the bound
    } finally {
      log.removeHandler(handler);
      log.setLevel(level);
    }
    assertThat(once).as("the bound was logged").isTrue();

    List<ThreadGroupActivity> groups = activity.close(0, 10 * S);

    assertThat(group(groups, "late-*").getThreads()).isEqualTo(10);
    assertThat(activity.reports().ring.waiting()).as("nothing left in the ring").isZero();
  }
}
