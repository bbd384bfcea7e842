package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.activity.LiveThread;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.util.List;
import org.junit.jupiter.api.Test;

class ActivityFeedTest {
  private static final long MS = 1_000_000;
  private final ThreadActivity activity =
      new ThreadActivity(() -> List.of(new LiveThread(12, "http-exec-3", 0)));
  private final EventMapper mapper = new EventMapper(JfrSettings.defaults());
  private final ActivityFeed feed = new ActivityFeed(activity);

  private void feed(String type, long nanos, String detail, long amount, String... frames) {
    JfrEvent e =
        new JfrEvent(
            type,
            type.equals(EventMapper.GARBAGE_COLLECTION) ? -1 : 12,
            type.equals(EventMapper.GARBAGE_COLLECTION) ? "" : "http-exec-3",
            false,
            List.of(frames),
            false,
            nanos,
            detail,
            amount,
            -1,
            -1);
    feed.accept(e, mapper.map(e));
  }

  @Test
  void blockingEventsPausesAndManagementSamplesReachTheirClasses() {
    activity.close(0, 0);
    feed(EventMapper.MONITOR_ENTER, 300 * MS, null, 0, "app.Cache.get");
    feed(EventMapper.SOCKET_READ, 200 * MS, null, 0, "java.net.Socket.read", "app.Db.query");
    feed(
        EventMapper.THREAD_PARK,
        400 * MS,
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject",
        0,
        "java.util.concurrent.LinkedBlockingQueue.take",
        "java.util.concurrent.ThreadPoolExecutor.getTask"); // waiting for work: idle
    feed(EventMapper.GARBAGE_COLLECTION, 0, "G1New", 50 * MS);
    feed(EventMapper.EXECUTION_SAMPLE, 0, null, 0, "java.lang.Thread.start", "app.Main.spawn");

    ThreadGroupActivity a = activity.close(0, 1000 * MS).get(0);

    assertThat(a.getSyncNanos()).isEqualTo(300 * MS);
    assertThat(a.getIoNanos()).isEqualTo(200 * MS);
    assertThat(a.getWaitNanos()).isZero();
    // The 50 ms pause counts for the half of the thread's off-CPU time no event reported (the
    // reported blocks hold the pauses that fell in them).
    assertThat(a.getRuntimeNanos()).isEqualTo(25 * MS);
    assertThat(a.getIdleNanos()).isEqualTo(475 * MS);
    assertThat(a.getThreadMgmtNanos()).isZero(); // no CPU time to take it from (clock says 0)
  }

  @Test
  void aWorkerContendingForItsQueuesLockOnTheWayToItsNextTaskIsBlocked() {
    // The queue-lock bottleneck of a busy fixed pool: the producers' side showed as sync, the
    // workers' side was dropped as waiting for work.
    activity.close(0, 0);
    feed(
        EventMapper.THREAD_PARK,
        300 * MS,
        "java.util.concurrent.locks.ReentrantLock$NonfairSync",
        0,
        "java.util.concurrent.locks.ReentrantLock.lockInterruptibly",
        "java.util.concurrent.LinkedBlockingQueue.take",
        "java.util.concurrent.ThreadPoolExecutor.getTask");
    feed(
        EventMapper.THREAD_PARK,
        400 * MS,
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject",
        0,
        "java.util.concurrent.LinkedBlockingQueue.take",
        "java.util.concurrent.ThreadPoolExecutor.getTask");

    ThreadGroupActivity a = activity.close(0, 1000 * MS).get(0);

    assertThat(a.getSyncNanos()).isEqualTo(300 * MS);
    assertThat(a.getWaitNanos()).as("the wait for the next task is idle").isZero();
  }

  @Test
  void managementTakesTheShareOfTheSamplesNotTheirCountTimesThePeriod() {
    long[] cpu = {0};
    ThreadActivity busy =
        new ThreadActivity(() -> List.of(new LiveThread(12, "http-exec-3", cpu[0])));
    ActivityFeed f = new ActivityFeed(busy);
    busy.close(0, 0);
    cpu[0] = 800 * MS;
    // four samples, one in executor code: a quarter of the 800 ms, however few samples JFR took
    String[][] stacks = {
      {"java.util.concurrent.ThreadPoolExecutor.execute", "app.Ingest.submit"},
      {"app.Ingest.parse"},
      {"app.Ingest.parse"},
      {"app.Ingest.store"}
    };
    for (String[] frames : stacks) {
      JfrEvent e =
          new JfrEvent(
              EventMapper.EXECUTION_SAMPLE,
              12,
              "http-exec-3",
              false,
              List.of(frames),
              false,
              0,
              null,
              0,
              -1,
              -1);
      f.accept(e, mapper.map(e));
    }
    ThreadGroupActivity a = busy.close(0, 1000 * MS).get(0);
    assertThat(a.getThreadMgmtNanos()).isEqualTo(200 * MS);
    assertThat(a.getComputeNanos()).isEqualTo(600 * MS);
  }

  @Test
  void aBlockInsideATimedStartIsThatStartsTimeNotSyncAsWell() {
    activity.startsTimed(true);
    activity.close(0, 0);
    // the timed start: 400 ms off CPU, reported as it returned
    activity.offCpu(12, dev.profold.client.Kind.THREAD_MGMT, 400 * MS);
    // JFR's report of the thread group's lock taken inside that start, 300 ms of the 400
    feed(
        EventMapper.MONITOR_ENTER,
        300 * MS,
        null,
        0,
        "java.lang.ThreadGroup.add",
        "java.lang.Thread.start",
        "app.Main.spawn");

    ThreadGroupActivity a = activity.close(0, 1000 * MS).get(0);

    assertThat(a.getSyncNanos()).isZero();
    assertThat(a.getThreadMgmtNanos()).isEqualTo(400 * MS);
    assertThat(a.getIdleNanos()).isEqualTo(600 * MS);
  }

  @Test
  void aBlockWhileCreatingStartingOrEndingAThreadIsThreadManagement() {
    activity.close(0, 0); // starts not timed: the start's block is reported by JFR alone
    feed(
        EventMapper.MONITOR_ENTER,
        100 * MS,
        null,
        0,
        "java.lang.ThreadGroup.addUnstarted",
        "java.lang.Thread.<init>",
        "app.Main.spawn");
    feed(
        EventMapper.MONITOR_ENTER,
        200 * MS,
        null,
        0,
        "java.lang.ThreadGroup.add",
        "java.lang.Thread.start",
        "app.Main.spawn");
    feed(
        EventMapper.MONITOR_ENTER,
        50 * MS,
        null,
        0,
        "java.lang.ThreadGroup.threadTerminated",
        "java.lang.Thread.exit");
    // starting a virtual thread (Java 21) is management, but the agent does not time it
    activity.startsTimed(true);
    feed(
        EventMapper.MONITOR_ENTER,
        25 * MS,
        null,
        0,
        "java.lang.ThreadGroup.add",
        "java.lang.Thread.startVirtualThread",
        "app.Main.spawn");
    activity.startsTimed(false);
    // a lock taken by a task under the pool's run loop stays the application's own
    feed(
        EventMapper.MONITOR_ENTER,
        150 * MS,
        null,
        0,
        "app.Cache.get",
        "app.Task.run",
        "java.util.concurrent.ThreadPoolExecutor.runWorker");

    ThreadGroupActivity a = activity.close(0, 1000 * MS).get(0);

    assertThat(a.getThreadMgmtNanos()).isEqualTo(350 * MS + 25 * MS);
    assertThat(a.getSyncNanos()).isEqualTo(150 * MS);
  }
}
