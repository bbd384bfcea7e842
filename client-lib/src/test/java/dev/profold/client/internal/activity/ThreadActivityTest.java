package dev.profold.client.internal.activity;

import static dev.profold.client.internal.activity.ActivityGroups.classes;
import static dev.profold.client.internal.activity.ActivityGroups.group;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class ThreadActivityTest {
  private static final long S = 1_000_000_000L;

  private final FakeThreads threads = new FakeThreads();
  private final ThreadActivity activity = new ThreadActivity(threads);

  @Test
  void splitsEachThreadsIntervalIntoClassesThatAddUpToItsWallTime() {
    threads.set(new LiveThread(1, "worker-1", 5 * S), new LiveThread(2, "worker-2", 7 * S));
    activity.close(0, 0); // baseline
    threads.set(new LiveThread(1, "worker-1", 5 * S + 4 * S), new LiveThread(2, "worker-2", 8 * S));
    activity.offCpu(1, Kind.SYNC, 3 * S);
    activity.offCpu(2, Kind.IO, 2 * S);
    activity.offCpu(2, Kind.WAIT, 1 * S);
    activity.onCpuSample(2, true); // half of its samples in management code
    activity.onCpuSample(2, false);
    activity.pause(S / 10);

    ThreadGroupActivity w = group(activity.close(0, 10 * S), "worker-*");

    assertThat(w.getThreads()).isEqualTo(2);
    assertThat(w.getWallNanos()).isEqualTo(20 * S);
    assertThat(w.getComputeNanos()).isEqualTo(4 * S + S / 2); // 4 s + (1 s - 0.5 s of management)
    assertThat(w.getThreadMgmtNanos()).isEqualTo(S / 2);
    assertThat(w.getSyncNanos()).isEqualTo(3 * S);
    assertThat(w.getIoNanos()).isEqualTo(2 * S);
    assertThat(w.getWaitNanos()).isEqualTo(S);
    // The pause stopped both threads; it counts for the part of each one's off-CPU time that no
    // report covers (a reported block holds the pauses in it): 3 of 6 s, and 6 of 9 s.
    long runtime = S / 10 * 3 / 6 + S / 10 * 6 / 9;
    assertThat(w.getRuntimeNanos()).isEqualTo(runtime);
    assertThat(w.getIdleNanos()).isEqualTo(20 * S - 4 * S - S - 3 * S - 2 * S - S - runtime);
    assertThat(classes(w)).isEqualTo(w.getWallNanos());
    assertThat(w.getCpuMinNanos()).isEqualTo(S);
    assertThat(w.getCpuMaxNanos()).isEqualTo(4 * S);
    assertThat(w.getCpuSumNanos()).isEqualTo(5 * S);
  }

  @Test
  void samplesInsideAMeasuredThreadStartAreNotCountedTwice() {
    threads.set(new LiveThread(1, "spawner", 0));
    activity.close(0, 0);
    threads.set(new LiveThread(1, "spawner", S));
    activity.managementCpu(1, S / 2); // timed starts
    activity.onCpuSample(1, true, true); // inside Thread.start: within the measured half
    activity.onCpuSample(1, false, false); // application code
    ThreadGroupActivity g = group(activity.close(0, 10 * S), "spawner");
    assertThat(g.getThreadMgmtNanos()).isEqualTo(S / 2);
    assertThat(g.getComputeNanos()).isEqualTo(S / 2);

    // Starts not timed (threads.timing=false): the sample in Thread.start is the only measure.
    threads.set(new LiveThread(1, "spawner", 2 * S));
    ThreadActivity untimed = new ThreadActivity(threads);
    untimed.close(0, 0);
    threads.set(new LiveThread(1, "spawner", 3 * S));
    untimed.onCpuSample(1, true, true);
    untimed.onCpuSample(1, false, false);
    ThreadGroupActivity u = group(untimed.close(0, 10 * S), "spawner");
    assertThat(u.getThreadMgmtNanos()).isEqualTo(S / 2);
    assertThat(u.getComputeNanos()).isEqualTo(S / 2);
  }

  @Test
  void measuredManagementCpuComesFirstAndOnlyTheRestIsSplitBySamples() {
    threads.set(new LiveThread(1, "spawner", 0));
    activity.close(0, 0); // baseline
    threads.set(new LiveThread(1, "spawner", 4 * S));
    activity.managementCpu(1, 3 * S); // timed thread starts, on CPU in the JVM
    activity.offCpu(1, Kind.THREAD_MGMT, 2 * S); // and off CPU
    activity.onCpuSample(1, true); // a quarter of the samples of the other 1 s in management
    activity.onCpuSample(1, false);
    activity.onCpuSample(1, false);
    activity.onCpuSample(1, false);

    ThreadGroupActivity g = group(activity.close(0, 10 * S), "spawner");

    assertThat(g.getThreadMgmtNanos()).isEqualTo(3 * S + S / 4 + 2 * S);
    assertThat(g.getComputeNanos()).isEqualTo(S - S / 4);
    assertThat(g.getIdleNanos()).isEqualTo(10 * S - 4 * S - 2 * S);

    threads.set(new LiveThread(1, "spawner", 5 * S));
    activity.managementCpu(1, 3 * S); // more than the thread's CPU in the interval: capped
    ThreadGroupActivity next = group(activity.close(10 * S, 20 * S), "spawner");
    assertThat(next.getThreadMgmtNanos()).isEqualTo(S);
    assertThat(next.getComputeNanos()).isZero();

    threads.set(new LiveThread(1, "spawner", 6 * S));
    ThreadGroupActivity after = group(activity.close(20 * S, 30 * S), "spawner");
    assertThat(after.getThreadMgmtNanos())
        .as("measured CPU is for one interval; the samples' share carries over one")
        .isEqualTo(0);
  }

  @Test
  void managementIsTheSampleShareOverThisAndThePreviousInterval() {
    threads.set(new LiveThread(1, "ingest", 0));
    activity.close(0, 0); // baseline
    threads.set(new LiveThread(1, "ingest", S));
    activity.onCpuSample(1, true); // JFR's batch for the first interval: 3 of 4 in management
    activity.onCpuSample(1, true);
    activity.onCpuSample(1, true);
    activity.onCpuSample(1, false);
    assertThat(group(activity.close(0, 2 * S), "ingest").getThreadMgmtNanos()).isEqualTo(3 * S / 4);
    threads.set(new LiveThread(1, "ingest", 3 * S));
    // no batch arrived in this interval: the previous one's share still stands
    assertThat(group(activity.close(2 * S, 4 * S), "ingest").getThreadMgmtNanos())
        .isEqualTo(3 * (2 * S) / 4);
    threads.set(new LiveThread(1, "ingest", 5 * S));
    // two intervals without samples: nothing is known to be management
    assertThat(group(activity.close(4 * S, 6 * S), "ingest").getThreadMgmtNanos()).isZero();
  }

  @Test
  void offCpuReportsBeyondTheThreadsOffCpuTimeAreScaledDownInProportion() {
    threads.set(new LiveThread(1, "t", 0));
    activity.close(0, 0);
    threads.set(new LiveThread(1, "t", 6 * S));
    activity.offCpu(1, Kind.SYNC, 6 * S); // a wait that began intervals ago, reported now
    activity.offCpu(1, Kind.WAIT, 2 * S);

    ThreadGroupActivity t = group(activity.close(0, 10 * S), "t");

    assertThat(t.getComputeNanos()).isEqualTo(6 * S);
    assertThat(t.getSyncNanos()).isEqualTo(3 * S); // 4 s of room shared 6:2
    assertThat(t.getWaitNanos()).isEqualTo(S);
    assertThat(t.getIdleNanos()).isZero();

    // What did not fit (3 s of sync, 1 s of wait) lands in the next interval.
    threads.set(new LiveThread(1, "t", 7 * S));
    ThreadGroupActivity next = group(activity.close(10 * S, 20 * S), "t");
    assertThat(next.getSyncNanos()).isEqualTo(3 * S);
    assertThat(next.getWaitNanos()).isEqualTo(S);
    assertThat(next.getIdleNanos()).isEqualTo(5 * S);
  }

  @Test
  void atMostOneIntervalIsCarriedAndNothingForThreadsThatEnded() {
    threads.set(new LiveThread(1, "t", 0), new LiveThread(2, "u", 0));
    activity.close(0, 0);
    activity.offCpu(1, Kind.WAIT, 35 * S); // a wait of 35 s, reported when it ended
    activity.offCpu(2, Kind.IO, 15 * S);
    assertThat(group(activity.close(0, 10 * S), "t").getWaitNanos()).isEqualTo(10 * S);

    threads.set(new LiveThread(1, "t", 0)); // u ended
    List<ThreadGroupActivity> second = activity.close(10 * S, 20 * S);
    assertThat(group(second, "t").getWaitNanos()).isEqualTo(10 * S); // 25 s over, 10 s carried
    assertThat(second).extracting(ThreadGroupActivity::getThreadGroup).containsExactly("t");
    assertThat(group(activity.close(20 * S, 30 * S), "t").getWaitNanos()).isZero();
  }

  @Test
  void carriedTimeIsCarriedOnceAndWhatStillDoesNotFitIsDropped() {
    threads.set(new LiveThread(1, "t", 0));
    activity.close(0, 0);
    activity.offCpu(1, Kind.WAIT, 60 * S); // a 60 s wait ends; the thread then runs flat out
    threads.set(new LiveThread(1, "t", 10 * S));
    assertThat(group(activity.close(0, 10 * S), "t").getWaitNanos()).isZero(); // 10 s carried
    long cpu = 10 * S;
    for (int i = 1; i <= 30; i++) { // five minutes fully on CPU
      cpu += 10 * S;
      threads.set(new LiveThread(1, "t", cpu));
      ThreadGroupActivity busy = group(activity.close(i * 10 * S, (i + 1) * 10 * S), "t");
      assertThat(busy.getWaitNanos()).isZero();
      assertThat(busy.getComputeNanos()).isEqualTo(10 * S);
    }
    // The thread now idles (parks under the threshold): nothing of the old wait is left.
    ThreadGroupActivity idle = group(activity.close(310 * S, 320 * S), "t");
    assertThat(idle.getWaitNanos()).isZero();
    assertThat(idle.getIdleNanos()).isEqualTo(10 * S);
  }

  @Test
  void carriedTimeFillsTheRoomBeforeNewReportsAndOnlyNewReportsAreCarriedOn() {
    threads.set(new LiveThread(1, "t", 0));
    activity.close(0, 0);
    activity.offCpu(1, Kind.WAIT, 20 * S);
    threads.set(new LiveThread(1, "t", 10 * S));
    activity.close(0, 10 * S); // no room: 10 s of WAIT carried

    activity.offCpu(1, Kind.IO, 3 * S);
    threads.set(new LiveThread(1, "t", 16 * S)); // 4 s of room
    ThreadGroupActivity second = group(activity.close(10 * S, 20 * S), "t");
    assertThat(second.getWaitNanos()).isEqualTo(4 * S); // the carried wait first, 6 s dropped
    assertThat(second.getIoNanos()).isZero(); // new, so carried once
    assertThat(second.getIdleNanos()).isZero();

    threads.set(new LiveThread(1, "t", 16 * S));
    ThreadGroupActivity third = group(activity.close(20 * S, 30 * S), "t");
    assertThat(third.getIoNanos()).isEqualTo(3 * S);
    assertThat(third.getWaitNanos()).isZero();
    assertThat(third.getIdleNanos()).isEqualTo(7 * S);
  }

  @Test
  void reportsAreForOneIntervalAndEndedThreadsAreNotCounted() {
    threads.set(new LiveThread(1, "a", 0), new LiveThread(2, "b", 0));
    activity.close(0, 0);
    activity.offCpu(1, Kind.IO, S);
    activity.offCpu(2, Kind.IO, S);
    threads.set(new LiveThread(1, "a", 0)); // b ended
    List<ThreadGroupActivity> first = activity.close(0, 10 * S);
    assertThat(first).extracting(ThreadGroupActivity::getThreadGroup).containsExactly("a");
    assertThat(first.get(0).getIoNanos()).isEqualTo(S);

    ThreadGroupActivity next = group(activity.close(10 * S, 20 * S), "a");
    assertThat(next.getIoNanos()).isZero();
    assertThat(next.getIdleNanos()).isEqualTo(10 * S);
  }

  @Test
  void aThreadThatReportedItsEndCountsUpToItsEndWithItsCpuThen() {
    threads.set(new LiveThread(1, "batch-1", 10 * S), new LiveThread(2, "batch-2", 10 * S));
    activity.close(0, 0);
    activity.offCpu(2, Kind.IO, S);
    activity.ended(2, "batch-2", 13 * S, 6 * S); // 3 s of CPU, 1 s of I/O, ended at 6 s
    threads.set(new LiveThread(1, "batch-1", 14 * S));

    ThreadGroupActivity g = group(activity.close(0, 10 * S), "batch-*");

    assertThat(g.getThreads()).isEqualTo(2);
    assertThat(g.getWallNanos()).isEqualTo(10 * S + 6 * S);
    assertThat(g.getComputeNanos()).isEqualTo(4 * S + 3 * S);
    assertThat(g.getIoNanos()).isEqualTo(S);
    assertThat(g.getIdleNanos()).isEqualTo(6 * S + 2 * S);
    assertThat(g.getCpuMinNanos()).isEqualTo(3 * S);
    assertThat(classes(g)).isEqualTo(g.getWallNanos());
    threads.set(new LiveThread(1, "batch-1", 14 * S));
    assertThat(group(activity.close(10 * S, 20 * S), "batch-*").getThreads())
        .as("counted once")
        .isEqualTo(1);
  }

  @Test
  void theIntervalsCpuTimeOfEachThreadIsKeptForItsSamples() {
    threads.set(
        new LiveThread(1, "batch-1", 10 * S),
        new LiveThread(2, "batch-2", 10 * S),
        new LiveThread(3, "virtual", -1));
    activity.close(0, 0);
    assertThat(activity.intervalCpu().nanos()).as("a baseline has no interval").isEmpty();
    activity.ended(2, "batch-2", 13 * S, 6 * S);
    threads.set(new LiveThread(1, "batch-1", 14 * S), new LiveThread(3, "virtual", -1));

    activity.close(0, 10 * S);

    // the live thread's CPU over the interval, the ended one's up to its end; none for a thread
    // whose CPU time is unknown
    assertThat(activity.intervalCpu().nanos()).isEqualTo(Map.of(1L, 4 * S, 2L, 3 * S));
  }

  @Test
  void carriersOfVirtualThreadsAreMarkedInTheIntervalsCpuTime() {
    threads.set(
        new LiveThread(1, "ForkJoinPool-1-worker-1", 0, null, true, true),
        new LiveThread(2, "ForkJoinPool-2-worker-1", 0)); // a pool of its own: no carrier
    activity.close(0, 0);
    threads.set(
        new LiveThread(1, "ForkJoinPool-1-worker-1", 5 * S, null, true, true),
        new LiveThread(2, "ForkJoinPool-2-worker-1", 2 * S));

    activity.close(0, 10 * S);

    assertThat(activity.intervalCpu().nanos()).isEqualTo(Map.of(1L, 5 * S, 2L, 2 * S));
    assertThat(activity.intervalCpu().carriers()).containsExactly(1L);
  }

  @Test
  void activityGivenBackFromAFailedFlushGoesWithTheNextIntervals() {
    threads.set(new LiveThread(1, "worker-1", 0), new LiveThread(2, "worker-2", 0));
    activity.close(0, 0);
    threads.set(new LiveThread(1, "worker-1", 4 * S), new LiveThread(2, "worker-2", 1 * S));
    activity.close(0, 10 * S);
    activity.giveBack(false);
    activity.giveBack(false); // once is enough
    threads.set(new LiveThread(1, "worker-1", 6 * S), new LiveThread(3, "loader", 3 * S));

    List<ThreadGroupActivity> next = activity.close(10 * S, 20 * S);

    ThreadGroupActivity workers = group(next, "worker-*");
    assertThat(workers.getThreads()).as("worker-1 in both intervals, worker-2 in one").isEqualTo(2);
    assertThat(workers.getWallNanos()).isEqualTo(30 * S);
    assertThat(workers.getComputeNanos()).isEqualTo(7 * S);
    assertThat(workers.getIdleNanos()).isEqualTo(23 * S);
    assertThat(workers.getCpuSumNanos()).isEqualTo(7 * S);
    assertThat(workers.getCpuMinNanos()).as("over thread-intervals").isEqualTo(1 * S);
    assertThat(workers.getCpuMaxNanos()).isEqualTo(4 * S);
    assertThat(group(next, "loader").getThreads()).isEqualTo(1);
    assertThat(activity.intervalCpu().nanos())
        .as("the CPU samples were valued: the failed interval's CPU time is not given again")
        .isEqualTo(Map.of(1L, 2 * S, 3L, 3 * S));
    // Once only: the interval after has its own activity alone.
    threads.set(new LiveThread(1, "worker-1", 6 * S));
    assertThat(group(activity.close(20 * S, 30 * S), "worker-*").getThreads()).isEqualTo(1);
  }

  @Test
  void activityGivenBackWithItsCpuTimeAddsThatToTheNextIntervalsCpuTime() {
    threads.set(new LiveThread(1, "worker-1", 0, null, false, true));
    activity.close(0, 0);
    threads.set(new LiveThread(1, "worker-1", 4 * S, null, false, true));
    activity.close(0, 10 * S);
    activity.giveBack(true); // the flush failed before the samples were valued
    threads.set(new LiveThread(1, "worker-1", 6 * S, null, false, true));

    activity.close(10 * S, 20 * S);

    assertThat(activity.intervalCpu().nanos()).isEqualTo(Map.of(1L, 6 * S));
    assertThat(activity.intervalCpu().carriers()).containsExactly(1L);
    assertThat(activity.intervalCpu().lengthNanos())
        .as("the time the CPU time was spent in: both intervals")
        .isEqualTo(20 * S);
  }

  @Test
  void cpuTimeOfThreadsWhoseSamplesWereLostIsNotGivenBack() {
    threads.set(new LiveThread(1, "worker-1", 0), new LiveThread(2, "worker-2", 0));
    activity.close(0, 0);
    threads.set(new LiveThread(1, "worker-1", 4 * S), new LiveThread(2, "worker-2", 3 * S));
    activity.close(0, 10 * S);
    // The collection failed after taking worker-2's table: its samples are lost.
    activity.giveBack(true, java.util.Set.of(2L));
    threads.set(new LiveThread(1, "worker-1", 6 * S), new LiveThread(2, "worker-2", 4 * S));

    activity.close(10 * S, 20 * S);

    assertThat(activity.intervalCpu().nanos())
        .as("worker-1's samples of both intervals, worker-2's of the new one")
        .isEqualTo(Map.of(1L, 6 * S, 2L, 1 * S));
  }

  @Test
  void threadsThatEndedAreMarkedAndSoAreEndedCarriers() {
    threads.set(new LiveThread(1, "a", 0), new LiveThread(2, "ForkJoinPool-1-worker-1", 0));
    activity.close(0, 0);
    activity.ended(1, "a", 2 * S, 5 * S);
    activity.ended(2, "ForkJoinPool-1-worker-1", 3 * S, 6 * S, true);
    threads.set();

    activity.close(0, 10 * S);

    assertThat(activity.intervalCpu().nanos()).isEqualTo(Map.of(1L, 2 * S, 2L, 3 * S));
    assertThat(activity.intervalCpu().ended()).containsExactlyInAnyOrder(1L, 2L);
    assertThat(activity.intervalCpu().carriers()).containsExactly(2L);
  }

  @Test
  void activityGivenBackKeepsToTheBoundOnGroupsAndNamesEachGroupOnce() {
    List<LiveThread> live = new ArrayList<>();
    for (int i = 0; i < ThreadActivity.MAX_GROUPS + 44; i++) {
      live.add(new LiveThread(i + 1, "t" + (char) ('a' + i % 26) + (char) ('a' + i / 26), 0));
    }
    threads.set(live.toArray(new LiveThread[0]));
    activity.close(0, 0);
    List<ThreadGroupActivity> failed = activity.close(0, 10 * S);
    assertThat(failed).extracting(ThreadGroupActivity::getThreadGroup).contains("_other_");
    activity.giveBack(false);

    List<ThreadGroupActivity> next = activity.close(10 * S, 20 * S);

    assertThat(next).hasSizeLessThanOrEqualTo(ThreadActivity.MAX_GROUPS);
    assertThat(next)
        .as("before the fix: _other_ twice, which the collector refuses")
        .extracting(ThreadGroupActivity::getThreadGroup)
        .doesNotHaveDuplicates();
    assertThat(next.get(next.size() - 1).getThreadGroup()).isEqualTo("_other_");
    assertThat(next.stream().mapToLong(ThreadGroupActivity::getThreads).sum())
        .as("every thread, once")
        .isEqualTo(ThreadActivity.MAX_GROUPS + 44);
  }

  @Test
  void flushesFailingInARowHoldTheIdsOfLiveThreadsOnlyAndCountEveryThreadOnce() {
    threads.set(new LiveThread(1, "worker-1", 0));
    activity.close(0, 0);
    long id = 100;
    for (int interval = 0; interval < 5; interval++) { // five failed flushes in a row
      long start = interval * 10 * S;
      for (int i = 0; i < 1000; i++, id++) { // a thousand short threads an interval
        activity.started(id, start + S);
        activity.ended(id, "worker-" + id, S / 1000, start + 2 * S);
      }
      threads.set(new LiveThread(1, "worker-1", (interval + 1) * S));
      activity.close(start, start + 10 * S);
      activity.giveBack(false);
      assertThat(activity.heldBackThreadIds())
          .as("the ended threads' ids are not held, only counted")
          .isEqualTo(1);
    }
    threads.set(new LiveThread(1, "worker-1", 6 * S));

    ThreadGroupActivity w = group(activity.close(50 * S, 60 * S), "worker-*");

    assertThat(w.getThreads()).as("worker-1 once, and each short thread").isEqualTo(1 + 5000);
    assertThat(w.getCpuSumNanos()).isEqualTo(6 * S + 5000 * (S / 1000));
    assertThat(w.getWallNanos()).isEqualTo(60 * S + 5000 * S);
  }

  @Test
  void aThreadStartedAndEndedWithinAnIntervalCountsItsLifetime() {
    threads.set(new LiveThread(1, "main", 0));
    activity.close(0, 0);
    activity.started(7, 2 * S);
    activity.ended(7, "worker-7", S / 2, 5 * S); // lived 3 s, of which 0.5 s on CPU
    activity.started(8, 4 * S); // still alive at the close: counts from its start
    threads.set(new LiveThread(1, "main", 0), new LiveThread(8, "worker-8", S));

    ThreadGroupActivity w = group(activity.close(0, 10 * S), "worker-*");

    assertThat(w.getThreads()).isEqualTo(2);
    assertThat(w.getWallNanos()).isEqualTo(3 * S + 6 * S);
    assertThat(w.getComputeNanos()).isEqualTo(S / 2 + S);
    assertThat(w.getIdleNanos()).isEqualTo(3 * S - S / 2 + 6 * S - S);
  }

  @Test
  void startsAndEndsAreReportedWithoutWaitingForTheLockAndCountAtTheNextClose() throws Exception {
    threads.set(new LiveThread(1, "spawner", 0));
    activity.close(0, 0);
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Thread holder =
        new Thread(
            () -> {
              synchronized (activity) { // as a close or the JFR feed holds it
                held.countDown();
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
            });
    holder.start();
    assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
    java.util.concurrent.ExecutorService reporter =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      java.util.concurrent.Future<?> reports =
          reporter.submit(
              () -> {
                // spawner (1) started worker 7 at 2 s: 0.25 s on CPU, 0.5 s off it
                activity.timedStart(7, 2 * S, 1, S / 4, S / 2);
                activity.ended(7, "worker-7", S / 2, 5 * S);
              });
      // Done while the lock is held: a report that took the lock would still be waiting.
      reports.get(10, TimeUnit.SECONDS);
    } finally {
      release.countDown();
      reporter.shutdown();
      holder.join();
    }
    threads.set(new LiveThread(1, "spawner", S));

    List<ThreadGroupActivity> groups = activity.close(0, 10 * S);

    ThreadGroupActivity spawner = group(groups, "spawner");
    assertThat(spawner.getThreadMgmtNanos()).isEqualTo(S / 4 + S / 2);
    assertThat(spawner.getComputeNanos()).isEqualTo(S - S / 4);
    ThreadGroupActivity w = group(groups, "worker-*");
    assertThat(w.getWallNanos()).as("from its reported start to its end").isEqualTo(3 * S);
  }

  @Test
  void moreEndsThanTheRingHoldsBetweenTwoClosesAreAllCounted() {
    activity.close(0, 0);
    int n = 3 * StartsAndEnds.END_RING;
    for (int i = 0; i < n; i++) { // starts move the ring's ends on as it fills
      activity.started(100 + i, S);
      activity.ended(100 + i, "burst-" + i, S / 10, 2 * S);
    }
    for (int i = n; i < 2 * n; i++) { // ends alone: a full ring's go to the queue
      activity.ended(100 + i, "burst-" + i, S / 10, 2 * S);
    }

    ThreadGroupActivity g = group(activity.close(0, 10 * S), "burst-*");

    assertThat(g.getThreads()).isEqualTo(2 * n);
    assertThat(g.getComputeNanos()).isEqualTo(2L * n * (S / 10));
  }

  @Test
  void anEndReportedByAThreadTheCloseStillFoundAliveCountsAtTheNextClose() {
    threads.set(new LiveThread(1, "w", 0));
    activity.close(0, 0);
    // It ends after the look read its CPU time (its end reports more than the look saw).
    activity.ended(1, "w", 2 * S, 10 * S + S / 10);
    threads.set(new LiveThread(1, "w", 2 * S - S / 100));
    ThreadGroupActivity first = group(activity.close(0, 10 * S), "w");
    assertThat(first.getWallNanos()).isEqualTo(10 * S);
    assertThat(first.getComputeNanos()).isEqualTo(2 * S - S / 100);

    threads.set();
    ThreadGroupActivity last = group(activity.close(10 * S, 20 * S), "w");
    assertThat(last.getComputeNanos()).as("the CPU used after the look").isEqualTo(S / 100);
    assertThat(last.getWallNanos()).isEqualTo(S / 10);
  }

  @Test
  void anEndBetweenTheIntervalsEndAndTheLookIsCountedOnce() {
    threads.set(new LiveThread(1, "w", 0));
    activity.close(0, 0);
    activity.ended(1, "w", 2 * S, 10 * S + S / 20); // ends; the look still lists it, all spent
    threads.set(new LiveThread(1, "w", 2 * S));
    assertThat(group(activity.close(0, 10 * S), "w").getComputeNanos()).isEqualTo(2 * S);
    threads.set();
    assertThat(activity.close(10 * S, 20 * S)).as("not again, with nothing").isEmpty();
  }

  @Test
  void theLaunchersThreadDoesNotCountTheInitialThreadsCpuAgain() {
    threads.set(new LiveThread(1, "main", S));
    activity.close(0, 0);
    activity.ended(1, "main", 3 * S, 5 * S);
    // The launcher's thread takes over main's OS thread: its clock holds main's 3 s.
    threads.set(new LiveThread(2, "DestroyJavaVM", 3 * S + S / 100));
    List<ThreadGroupActivity> groups = activity.close(0, 10 * S);
    assertThat(group(groups, "main").getComputeNanos()).isEqualTo(2 * S);
    assertThat(group(groups, "DestroyJavaVM").getComputeNanos()).isZero();
  }

  @Test
  void aThreadStartedAndEndedUnseenCountsWhatItIsKnownToHaveSpentNotTheInterval() {
    threads.set(new LiveThread(1, "main", 0));
    activity.close(0, 0);
    activity.offCpu(9, Kind.IO, S / 10);
    activity.ended(9, "pool-9", S / 20, 6 * S); // no start reported (a start the hook missed)
    threads.set(new LiveThread(1, "main", 0));
    ThreadGroupActivity p = group(activity.close(0, 10 * S), "pool-*");
    assertThat(p.getWallNanos()).isEqualTo(S / 20 + S / 10);
    assertThat(p.getIoNanos()).isEqualTo(S / 10);
    assertThat(p.getIdleNanos()).isZero();
  }

  @Test
  void theFirstCloseCountsAtMostTheIntervalOfOlderThreadsCpuAndLaterNewThreadsFully() {
    threads.set(new LiveThread(1, "old", 100 * S));
    ThreadGroupActivity old = group(activity.close(0, 10 * S), "old");
    assertThat(old.getComputeNanos()).isEqualTo(10 * S); // older than the interval: capped

    threads.set(new LiveThread(1, "old", 103 * S), new LiveThread(2, "young", 2 * S));
    List<ThreadGroupActivity> next = activity.close(10 * S, 20 * S);
    assertThat(group(next, "old").getComputeNanos()).isEqualTo(3 * S);
    assertThat(group(next, "young").getComputeNanos()).isEqualTo(2 * S);
  }

  @Test
  void aNewThreadWhoseClockHoldsMoreThanTheIntervalCountsFromTheNextIntervalOn() {
    threads.set(new LiveThread(1, "main", 5 * S));
    activity.close(0, 10 * S);
    // main returned; the launcher's thread, under a new id, carries main's CPU clock
    threads.set(new LiveThread(2, "DestroyJavaVM", 12 * S));
    ThreadGroupActivity last = group(activity.close(10 * S, 13 * S), "DestroyJavaVM");
    assertThat(last.getComputeNanos()).as("before the fix: all 3 s of the interval").isZero();
    assertThat(last.getIdleNanos()).isEqualTo(3 * S);
    threads.set(new LiveThread(2, "DestroyJavaVM", 12 * S + S / 10));
    assertThat(group(activity.close(13 * S, 23 * S), "DestroyJavaVM").getComputeNanos())
        .isEqualTo(S / 10);
  }

  /** Thread 1 ({@code stuck}) in a block held by thread 99: a monitor when {@code monitor}. */
  private void blocked(
      boolean monitor, String lockClass, long count, long cpu, LiveThread... more) {
    List<LiveThread> all = new ArrayList<>();
    all.add(
        new LiveThread(
            1, "stuck", cpu, new LiveThread.Block(monitor, lockClass, 0x5eed, count, 99), false));
    all.addAll(List.of(more));
    threads.set(all.toArray(new LiveThread[0]));
  }

  @Test
  void aThreadStuckOnALockIsSyncWhileItLastsAndItsReportAddsOnlyWhatWasNotCounted() {
    activity.countStuckLocks(c -> c.endsWith("Sync"));
    threads.set(new LiveThread(1, "stuck", 0));
    activity.close(0, 0);
    blocked(true, "java.lang.Object", 3, 0); // from 8 s on
    ThreadGroupActivity firstSeen = group(activity.close(0, 10 * S), "stuck");
    assertThat(firstSeen.getSyncNanos()).as("since when, is not known yet").isZero();
    assertThat(group(activity.close(10 * S, 20 * S), "stuck").getSyncNanos()).isEqualTo(10 * S);
    assertThat(group(activity.close(20 * S, 30 * S), "stuck").getSyncNanos()).isEqualTo(10 * S);
    // released at 33 s: the block's event began at 8 s and says 25 s
    threads.set(new LiveThread(1, "stuck", S));
    activity.offCpu(1, Kind.SYNC, 25 * S, 8 * S);
    ThreadGroupActivity released = group(activity.close(30 * S, 40 * S), "stuck");
    assertThat(released.getSyncNanos()).as("25 s, of which 20 s counted already").isEqualTo(5 * S);
    assertThat(released.getComputeNanos()).isEqualTo(S);
  }

  @Test
  void aLockParkCountsAsTheMonitorDoesAndOtherParksDoNot() {
    activity.countStuckLocks(c -> c.endsWith("Sync"));
    blocked(false, "java.util.concurrent.locks.ReentrantLock$NonfairSync", 9, 0);
    activity.close(0, 0);
    activity.close(0, 10 * S);
    assertThat(group(activity.close(10 * S, 20 * S), "stuck").getSyncNanos()).isEqualTo(10 * S);

    blocked(false, "com.example.PoolLock", 10, 0); // Object.wait on a monitor named like a lock
    activity.close(20 * S, 30 * S);
    ThreadGroupActivity waiting = group(activity.close(30 * S, 40 * S), "stuck");
    assertThat(waiting.getSyncNanos()).as("not an owned synchronizer").isZero();
    assertThat(waiting.getIdleNanos()).isEqualTo(10 * S);
  }

  @Test
  void aThreadThatLeftTheBlockInBetweenOrWithTheCountingOffIsNotStuck() {
    activity.countStuckLocks(c -> true);
    blocked(true, "java.lang.Object", 3, 0);
    activity.close(0, 0);
    activity.close(0, 10 * S);
    blocked(true, "java.lang.Object", 4, 0); // blocked again: it got the lock in between
    assertThat(group(activity.close(10 * S, 20 * S), "stuck").getSyncNanos()).isZero();

    activity.countStuckLocks(null);
    assertThat(group(activity.close(20 * S, 30 * S), "stuck").getSyncNanos()).isZero();
  }

  /**
   * The JDK's blocking accept holds a lock while it waits for a connection, so a second acceptor
   * parks on it for as long as the server is idle: not a lock held up, as its holder is runnable in
   * native code without using CPU. A holder that computes, or waits itself, makes it stuck.
   */
  @Test
  void aBlockBehindAHolderRunnableWithoutCpuIsNotStuck() {
    activity.countStuckLocks(c -> true);
    String sync = "java.util.concurrent.locks.ReentrantLock$NonfairSync";
    blocked(false, sync, 3, 0, new LiveThread(99, "acceptor-1", S, null, true));
    activity.close(0, 0);
    activity.close(0, 10 * S);
    blocked(false, sync, 3, 0, new LiveThread(99, "acceptor-1", S, null, true));
    assertThat(group(activity.close(10 * S, 20 * S), "stuck").getSyncNanos())
        .as("the holder sits in accept (before the fix: 10 s)")
        .isZero();
    blocked(false, sync, 3, 0, new LiveThread(99, "acceptor-1", 9 * S, null, true));
    assertThat(group(activity.close(20 * S, 30 * S), "stuck").getSyncNanos())
        .as("the holder computes under the lock: a lock block, first seen")
        .isZero();
    blocked(false, sync, 3, 0, new LiveThread(99, "acceptor-1", 17 * S, null, true));
    assertThat(group(activity.close(30 * S, 40 * S), "stuck").getSyncNanos())
        .as("the holder computes under the lock")
        .isEqualTo(10 * S);
    blocked(false, sync, 3, 0, new LiveThread(99, "acceptor-1", 17 * S, null, false));
    assertThat(group(activity.close(40 * S, 50 * S), "stuck").getSyncNanos())
        .as("the holder waits, with the lock held")
        .isEqualTo(10 * S);
  }

  @Test
  void onlyTheBlocksOwnReportSubtractsAndAtMostItself() {
    activity.countStuckLocks(c -> true);
    threads.set(new LiveThread(1, "stuck", 0));
    activity.close(0, 0);
    blocked(true, "java.lang.Object", 3, 0); // from 5 s on
    activity.close(0, 10 * S);
    activity.close(10 * S, 20 * S); // 10 s counted
    // an earlier block's event (1 s to 1.5 s), delivered late: not this block's report
    activity.offCpu(1, Kind.SYNC, S / 2, S);
    assertThat(group(activity.close(20 * S, 30 * S), "stuck").getSyncNanos())
        .as("stuck all along: the interval is sync, the late report dropped")
        .isEqualTo(10 * S);
    threads.set(new LiveThread(1, "stuck", 0));
    // its own report, shorter than what was counted (it began after the first close's time,
    // before its look at the threads, which comes a little later): subtracts itself only
    activity.offCpu(1, Kind.SYNC, 19 * S, 11_500_000_000L);
    assertThat(group(activity.close(30 * S, 40 * S), "stuck").getSyncNanos()).isZero();
    // a later block, after the counted one's report came: counted whole
    activity.offCpu(1, Kind.SYNC, 4 * S, 41 * S);
    assertThat(group(activity.close(40 * S, 50 * S), "stuck").getSyncNanos()).isEqualTo(4 * S);
  }

  /** Sync of thread 1's group over closes every 10 s from {@code from} to {@code to}. */
  private long syncOverCloses(long from, long to, Runnable beforeEach) {
    long sync = 0;
    for (long t = from; t < to; t += 10 * S) {
      beforeEach.run();
      sync += group(activity.close(t, t + 10 * S), "stuck").getSyncNanos();
    }
    return sync;
  }

  /**
   * As in production, with times since the epoch and a baseline at start: a thread already stuck
   * then is first seen at the first real close (a baseline's time is no look's), and its report,
   * which began before the start, is still matched.
   */
  @Test
  void aThreadStuckBeforeTheStartCountsOnceWithEpochTimes() {
    long t0 = 1_700_000_000L * S;
    activity.countStuckLocks(c -> true);
    blocked(true, "java.lang.Object", 3, 0); // since t0 - 1 s
    activity.baseline();
    long sync =
        group(activity.close(t0, t0 + 10 * S), "stuck").getSyncNanos()
            + group(activity.close(t0 + 10 * S, t0 + 20 * S), "stuck").getSyncNanos();
    threads.set(new LiveThread(1, "stuck", 0)); // released at t0 + 26 s: its report, 27 s
    activity.offCpu(1, Kind.SYNC, 27 * S, t0 - S);
    sync += syncOverCloses(t0 + 20 * S, t0 + 50 * S, () -> {});
    assertThat(sync).as("before the fix: 57 s").isEqualTo(27 * S);
  }

  /** A lock passed from holder to holder while the thread waits on: still the same block. */
  @Test
  void aBlockWhoseHolderChangesIsOneBlockAndCountsOnce() {
    activity.countStuckLocks(c -> true);
    threads.set(new LiveThread(1, "stuck", 0));
    activity.close(0, 0);
    long[] closes = {0};
    long sync =
        syncOverCloses(
            0,
            40 * S,
            () -> {
              long owner = closes[0]++ < 2 ? 99 : 98;
              threads.set(
                  new LiveThread(
                      1,
                      "stuck",
                      0,
                      new LiveThread.Block(true, "java.lang.Object", 7, 3, owner),
                      false));
            });
    assertThat(sync)
        .as("counted from the second close on, the holder's change aside")
        .isEqualTo(30 * S);
    threads.set(new LiveThread(1, "stuck", 0)); // released at 43 s; its report: from 3 s, 40 s
    activity.offCpu(1, Kind.SYNC, 40 * S, 3 * S);
    sync += syncOverCloses(40 * S, 70 * S, () -> {});
    assertThat(sync).as("before the fix: 40 s + 30 s split in two counts").isEqualTo(40 * S);
  }

  @Test
  void afterABaselineTheFirstCloseCountsOnlyTheCpuTimeSpentSinceIt() {
    threads.set(new LiveThread(1, "old", 100 * S));
    activity.baseline();
    threads.set(new LiveThread(1, "old", 103 * S), new LiveThread(2, "young", 2 * S));
    List<ThreadGroupActivity> first = activity.close(0, 10 * S);
    assertThat(group(first, "old").getComputeNanos()).isEqualTo(3 * S);
    assertThat(group(first, "old").getIdleNanos()).isEqualTo(7 * S);
    assertThat(group(first, "young").getComputeNanos()).isEqualTo(2 * S);
  }

  @Test
  void threadsWithoutACpuClockAreAllIdleUnlessReported() {
    threads.set(new LiveThread(1, "t", -1));
    activity.close(0, 0);
    activity.offCpu(1, Kind.WAIT, S);
    ThreadGroupActivity t = group(activity.close(0, 10 * S), "t");
    assertThat(t.getComputeNanos()).isZero();
    assertThat(t.getWaitNanos()).isEqualTo(S);
    assertThat(t.getIdleNanos()).isEqualTo(9 * S);
  }

  @Test
  void groupsBeyondTheLimitAreMergedIntoOneOtherGroup() {
    List<LiveThread> many = new ArrayList<>();
    for (int i = 0; i < ThreadActivity.MAX_GROUPS + 10; i++) {
      many.add(new LiveThread(i, "group" + (char) ('a' + i % 26) + "x" + (char) ('a' + i / 26), 0));
    }
    threads.set(many);
    activity.close(0, 0);
    List<ThreadGroupActivity> out = activity.close(0, S);
    assertThat(out).hasSize(ThreadActivity.MAX_GROUPS);
    ThreadGroupActivity other = group(out, ThreadActivity.OTHER_GROUP);
    assertThat(other.getThreads()).isEqualTo(11);
    assertThat(out.stream().mapToLong(ThreadGroupActivity::getThreads).sum())
        .isEqualTo(ThreadActivity.MAX_GROUPS + 10);
  }

  @Test
  void reportsDoNotWaitWhileCloseReadsTheLiveThreads() throws Exception {
    CountDownLatch reading = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ThreadActivity a =
        new ThreadActivity(
            () -> {
              reading.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return List.of(new LiveThread(1, "t", 0));
            });
    Thread flush = new Thread(() -> a.close(0, 10 * S), "flush");
    flush.start();
    try {
      assertThat(reading.await(30, TimeUnit.SECONDS)).isTrue();
      CountDownLatch reported = new CountDownLatch(1);
      Thread starter =
          new Thread(
              () -> {
                a.managementCpu(1, S); // what a timed Thread.start reports
                a.offCpu(1, Kind.THREAD_MGMT, S);
                reported.countDown();
              },
              "starter");
      starter.start();
      assertThat(reported.await(30, TimeUnit.SECONDS))
          .as("reports made while close() reads the threads")
          .isTrue();
    } finally {
      release.countDown();
      flush.join();
    }
  }

  private static void sample(ThreadActivity a, long thread, int mgmt, int other) {
    for (int k = 0; k < mgmt; k++) {
      a.onCpuSample(thread, true);
    }
    for (int k = 0; k < other; k++) {
      a.onCpuSample(thread, false);
    }
  }

  @Test
  void aPauseDuringAReportedBlockIsNotCountedAgainNorCarriedOn() {
    threads.set(new LiveThread(1, "reader-1", 0), new LiveThread(2, "idle-1", 0));
    activity.close(0, 0); // baseline
    activity.offCpu(1, Kind.IO, 10 * S); // blocked in a read the whole interval
    activity.pause(S); // a 1 s GC pause within it
    ThreadGroupActivity reader = group(activity.close(0, 10 * S), "reader-*");
    assertThat(reader.getIoNanos()).isEqualTo(10 * S);
    assertThat(reader.getRuntimeNanos()).as("held in the read's duration").isZero();
    assertThat(group(activity.close(10 * S, 20 * S), "idle-*").getRuntimeNanos()).isZero();

    ThreadGroupActivity next = group(activity.close(20 * S, 30 * S), "reader-*");
    assertThat(next.getIdleNanos()).as("nothing carried into the next intervals").isEqualTo(10 * S);
  }

  @Test
  void theTimeIoWentUnobservedIsTakenIntervalByIntervalAndWhatExceedsOneIsCarried() {
    assertThat(activity.takeIoUnobservedNanos(10 * S)).as("nothing ever reported it").isEqualTo(-1);
    long[] off = {0};
    activity.observeIo(() -> off[0]);
    assertThat(activity.takeIoUnobservedNanos(10 * S)).as("observed throughout").isZero();
    off[0] = 4 * S;
    assertThat(activity.takeIoUnobservedNanos(10 * S)).isEqualTo(4 * S);
    assertThat(activity.takeIoUnobservedNanos(10 * S)).as("taken once").isZero();
    off[0] = 4 * S + 15 * S;
    assertThat(activity.takeIoUnobservedNanos(10 * S)).as("at most the interval").isEqualTo(10 * S);
    off[0] += 3 * S;
    assertThat(activity.takeIoUnobservedNanos(10 * S))
        .as("3 s and the 5 s carried")
        .isEqualTo(8 * S);
    activity.giveBackIoUnobserved(2 * S); // a flush that failed
    assertThat(activity.takeIoUnobservedNanos(10 * S)).isEqualTo(2 * S);
    off[0] += 40 * S; // the wall clock stepped back: the intervals are shorter than the time
    assertThat(activity.takeIoUnobservedNanos(10 * S)).isEqualTo(10 * S);
    assertThat(activity.takeIoUnobservedNanos(10 * S)).as("one interval kept").isEqualTo(10 * S);
    assertThat(activity.takeIoUnobservedNanos(10 * S)).as("the rest dropped").isZero();
  }

  @Test
  void whatAnObserverHadNotGivenWhenItStoppedIsReportedStill() {
    long[] off = {0};
    activity.observeIo(() -> off[0]);
    off[0] = 6 * S;
    activity.observeIo(null); // the agent closed before the last interval was flushed
    off[0] = 60 * S; // no longer looked at
    assertThat(activity.takeIoUnobservedNanos(10 * S)).isEqualTo(6 * S);
    assertThat(activity.takeIoUnobservedNanos(10 * S))
        .as("observed by no one: 0, not unknown")
        .isZero();

    long[] other = {S};
    activity.observeIo(() -> other[0]); // a new observer counts from its own start
    assertThat(activity.takeIoUnobservedNanos(10 * S)).isEqualTo(S);
  }

  @Test
  void aPauseCountsInFullForAThreadWithNothingReported() {
    threads.set(new LiveThread(1, "idle-1", 0));
    activity.close(0, 0);
    activity.pause(S);
    ThreadGroupActivity g = group(activity.close(0, 10 * S), "idle-*");
    assertThat(g.getRuntimeNanos()).isEqualTo(S);
    assertThat(g.getIdleNanos()).isEqualTo(9 * S);
  }

  @Test
  void aThreadAliveForPartOfTheIntervalGetsItsShareOfThePausesAndNoneIsCarried() {
    // A thread that lived 30 ms of an interval with 200 ms of pauses got all 200 as runtime, the
    // 170 that did not fit carried into the next interval: thread churn read as GC.
    threads.set(new LiveThread(1, "main", 0));
    activity.close(0, 0);
    activity.started(7, 9 * S);
    activity.ended(7, "short-7", 0, 9 * S + 30_000_000L); // lived 30 ms, off CPU
    activity.started(8, 9 * S); // alive from 9 s: 1 s of the interval
    threads.set(new LiveThread(1, "main", 0), new LiveThread(8, "late-8", S / 2));
    activity.pause(2 * S);

    List<ThreadGroupActivity> closed = activity.close(0, 10 * S);

    assertThat(group(closed, "short-*").getRuntimeNanos())
        .as("30 ms of 10 s: its share of 2 s")
        .isEqualTo(6_000_000L);
    ThreadGroupActivity late = group(closed, "late-*");
    assertThat(late.getRuntimeNanos()).as("1 s of 10 s: 0.2 s").isEqualTo(200_000_000L);
    assertThat(group(closed, "main").getRuntimeNanos()).isEqualTo(2 * S);

    threads.set(new LiveThread(1, "main", 0), new LiveThread(8, "late-8", S / 2));
    ThreadGroupActivity next = group(activity.close(10 * S, 20 * S), "late-*");
    assertThat(next.getRuntimeNanos()).as("nothing carried").isZero();
  }

  @Test
  void aPauseIsNeverMoreThanTheOffCpuTimeNoReportCovers() {
    threads.set(new LiveThread(1, "busy-1", 0));
    activity.close(0, 0);
    threads.set(new LiveThread(1, "busy-1", 9_900_000_000L)); // on CPU for 9.9 s of 10
    activity.pause(S);
    ThreadGroupActivity busy = group(activity.close(0, 10 * S), "busy-*");
    assertThat(busy.getRuntimeNanos()).isEqualTo(100_000_000L);
    threads.set(new LiveThread(1, "busy-1", 9_900_000_000L));
    assertThat(group(activity.close(10 * S, 20 * S), "busy-*").getRuntimeNanos())
        .as("the rest of the pause is not carried")
        .isZero();
  }

  @Test
  void aCarriersCpuIsSplitByTheVirtualThreadsSamplesToo() {
    // JFR gives the samples taken while a virtual thread is mounted to the virtual thread: the
    // carrier's own few fall in its scheduler, and its CPU time, mostly the virtual threads' work,
    // came out as thread_mgmt.
    long carrier = 21;
    threads.set(new LiveThread(carrier, "ForkJoinPool-1-worker-1", 0, null, false, true));
    activity.close(0, 0);
    threads.set(new LiveThread(carrier, "ForkJoinPool-1-worker-1", S, null, false, true));
    activity.onCpuSample(carrier, true); // ForkJoinPool.scan, between two virtual threads
    activity.onCpuSample(carrier, true);
    for (int i = 0; i < 98; i++) {
      activity.onCpuSample(dev.profold.client.internal.record.ThreadGroups.VIRTUAL_THREADS, false);
    }
    ThreadGroupActivity w = group(activity.close(0, 10 * S), "ForkJoinPool-*-worker-*");
    assertThat(w.getThreadMgmtNanos()).isEqualTo(S / 50);
    assertThat(w.getComputeNanos()).isEqualTo(S - S / 50);

    // The next interval pools this one's samples too, the virtual threads' as well as the
    // carrier's (only the carrier's were kept: its share of management doubled).
    threads.set(new LiveThread(carrier, "ForkJoinPool-1-worker-1", 2 * S, null, false, true));
    activity.onCpuSample(carrier, true);
    activity.onCpuSample(carrier, true);
    for (int i = 0; i < 98; i++) {
      activity.onCpuSample(dev.profold.client.internal.record.ThreadGroups.VIRTUAL_THREADS, false);
    }
    ThreadGroupActivity next = group(activity.close(10 * S, 20 * S), "ForkJoinPool-*-worker-*");
    assertThat(next.getThreadMgmtNanos()).isEqualTo(S / 50);
  }

  @Property
  void classesAlwaysAddUpToTheWallTimeAndNoneIsNegative(
      @ForAll @LongRange(min = 0, max = 20_000_000_000L) long cpu,
      @ForAll @LongRange(min = 0, max = 20_000_000_000L) long sync,
      @ForAll @LongRange(min = 0, max = 20_000_000_000L) long io,
      @ForAll @IntRange(min = 0, max = 20) int mgmtSamples,
      @ForAll @IntRange(min = 0, max = 20) int otherSamples,
      @ForAll @LongRange(min = 0, max = 5_000_000_000L) long pause,
      @ForAll @IntRange(min = 1, max = 4) int n) {
    FakeThreads fake = new FakeThreads();
    ThreadActivity a = new ThreadActivity(fake);
    List<LiveThread> zero = new ArrayList<>();
    List<LiveThread> later = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      zero.add(new LiveThread(i, "p-" + i, 0));
      later.add(new LiveThread(i, "p-" + i, cpu / (i + 1)));
      a.offCpu(i, Kind.SYNC, sync);
      a.offCpu(i, Kind.IO, io / (i + 1));
      sample(a, i, mgmtSamples, otherSamples);
    }
    fake.set(zero);
    a.close(0, 0);
    for (int i = 0; i < n; i++) {
      a.offCpu(i, Kind.SYNC, sync);
      a.offCpu(i, Kind.IO, io / (i + 1));
      sample(a, i, mgmtSamples, otherSamples);
    }
    a.pause(pause);
    fake.set(later);
    long length = 10_000_000_000L;
    ThreadGroupActivity g = group(a.close(0, length), "p-*");
    assertThat(g.getWallNanos()).isEqualTo(n * length);
    assertThat(classes(g)).isEqualTo(g.getWallNanos());
    assertThat(
            List.of(
                g.getComputeNanos(),
                g.getSyncNanos(),
                g.getIoNanos(),
                g.getRuntimeNanos(),
                g.getThreadMgmtNanos(),
                g.getIdleNanos()))
        .allMatch(v -> v >= 0);
    assertThat(g.getCpuMinNanos()).isLessThanOrEqualTo(g.getCpuMaxNanos());
    assertThat(g.getCpuMaxNanos()).isLessThanOrEqualTo(Math.min(cpu, length));
    assertThat(g.getComputeNanos() + g.getThreadMgmtNanos())
        .isGreaterThanOrEqualTo(g.getCpuSumNanos()); // mgmt holds also off-CPU management
    long expectedMgmt = 0; // no off-CPU management here: the samples' share of each CPU time
    for (int i = 0; i < n; i++) {
      long threadCpu = Math.min(cpu / (i + 1), length);
      int all = mgmtSamples + otherSamples;
      expectedMgmt += all == 0 ? 0 : Math.round(threadCpu * ((double) mgmtSamples / all));
    }
    assertThat(g.getThreadMgmtNanos()).isEqualTo(expectedMgmt);
  }
}
