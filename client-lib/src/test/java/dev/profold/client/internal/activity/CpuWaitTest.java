package dev.profold.client.internal.activity;

import static dev.profold.client.internal.activity.ActivityGroups.classes;
import static dev.profold.client.internal.activity.ActivityGroups.group;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** The cpu_wait class: time runnable but not on a CPU, taken from idle. */
class CpuWaitTest {
  private static final long S = 1_000_000_000L;

  /** Run-queue statistics the test sets: {queued nanos, arrivals} by thread id. */
  private static final class FakeQueues implements RunQueues {
    final Map<Long, long[]> now = new HashMap<>();
    final List<List<Long>> asked = new ArrayList<>();

    @Override
    public Map<Long, long[]> read(java.util.Collection<Long> threadIds) {
      asked.add(List.copyOf(threadIds));
      Map<Long, long[]> out = new HashMap<>();
      for (Long id : threadIds) {
        long[] s = now.get(id);
        if (s != null) {
          out.put(id, s.clone());
        }
      }
      return out;
    }

    void set(long id, long queued, long arrivals) {
      now.put(id, new long[] {queued, arrivals});
    }
  }

  private final FakeThreads threads = new FakeThreads();
  private final FakeQueues queues = new FakeQueues();
  private final ThreadActivity activity = new ThreadActivity(threads);

  /** Idle time other than waiting for a CPU. */
  private static long idle(ThreadGroupActivity a) {
    assertThat(a.getCpuWaitNanos())
        .as("cpu_wait is part of idle_nanos")
        .isLessThanOrEqualTo(a.getIdleNanos());
    return a.getIdleNanos() - a.getCpuWaitNanos();
  }

  @Test
  void aCpuBoundThreadOnTooFewCoresWaitsForACpuInsteadOfIdling() {
    activity.measureCpuWait(queues);
    threads.set(new LiveThread(1, "spin-1", 0));
    queues.set(1, 5 * S, 100);
    activity.close(0, 0); // baseline
    // 10 s: on a CPU for 2.5 s, runnable behind other threads for 7.5 s.
    threads.set(new LiveThread(1, "spin-1", 5 * S / 2));
    queues.set(1, 5 * S + 15 * S / 2, 1_100);

    ThreadGroupActivity g = group(activity.close(0, 10 * S), "spin-*");

    assertThat(g.getComputeNanos()).isEqualTo(5 * S / 2);
    assertThat(g.getCpuWaitNanos()).isEqualTo(15 * S / 2);
    assertThat(idle(g)).isZero();
    assertThat(classes(g)).isEqualTo(g.getWallNanos());
  }

  @Test
  void theWaitForACpuAfterEachReportedBlockIsLeftToTheBlock() {
    activity.measureCpuWait(queues);
    threads.set(new LiveThread(1, "pool-1", 0));
    queues.set(1, 0, 0);
    activity.close(0, 0);
    // 1 s on a CPU, a 4 s wait reported (its end includes the wait for a CPU after the wake-up),
    // 2 s on the run queue over 100 arrivals on a CPU: one of them ended the reported wait.
    threads.set(new LiveThread(1, "pool-1", S));
    activity.offCpu(1, Kind.WAIT, 4 * S);
    queues.set(1, 2 * S, 100);

    ThreadGroupActivity g = group(activity.close(0, 10 * S), "pool-*");

    assertThat(g.getWaitNanos()).isEqualTo(4 * S);
    assertThat(g.getCpuWaitNanos()).as("2 s × 99/100").isEqualTo(2 * S / 100 * 99);
    assertThat(idle(g)).isEqualTo(10 * S - S - 4 * S - 2 * S / 100 * 99);
    assertThat(classes(g)).isEqualTo(g.getWallNanos());
  }

  @Test
  void eachTimedThreadStartIsABlockWhoseWaitForACpuItHolds() {
    activity.measureCpuWait(queues);
    threads.set(new LiveThread(1, "spawner", 0));
    queues.set(1, 0, 0);
    activity.close(0, 0);
    // 100 starts of 10 ms each off CPU: each blocked until its thread ran, then waited for a CPU.
    for (int i = 0; i < 100; i++) {
      activity.timedStart(100 + i, S, 1, 0, 10_000_000);
    }
    threads.set(new LiveThread(1, "spawner", S));
    queues.set(1, S, 100);

    ThreadGroupActivity g = group(activity.close(0, 10 * S), "spawner");

    assertThat(g.getThreadMgmtNanos()).isEqualTo(S);
    assertThat(g.getCpuWaitNanos()).as("every arrival on a CPU ended a start").isZero();
    assertThat(idle(g)).isEqualTo(8 * S);
  }

  @Test
  void cpuWaitNeverExceedsTheIdleTimeItIsTakenFrom() {
    activity.measureCpuWait(queues);
    threads.set(new LiveThread(1, "w-1", 0));
    queues.set(1, 0, 0);
    activity.close(0, 0);
    threads.set(new LiveThread(1, "w-1", 2 * S));
    activity.offCpu(1, Kind.SYNC, 5 * S);
    queues.set(1, 9 * S, 10); // more than the 3 s of idle left (the OS counted past the close)

    ThreadGroupActivity g = group(activity.close(0, 10 * S), "w-*");

    assertThat(g.getCpuWaitNanos()).isEqualTo(3 * S);
    assertThat(idle(g)).isZero();
    assertThat(g.getSyncNanos()).isEqualTo(5 * S);
    assertThat(classes(g)).isEqualTo(g.getWallNanos());
  }

  @Test
  void aThreadCountsFromTheSecondCloseThatReadsIt() {
    activity.measureCpuWait(queues);
    threads.set(new LiveThread(1, "w-1", 0));
    activity.close(0, 0); // its statistics not readable yet (no OS thread id known)
    threads.set(new LiveThread(1, "w-1", S));
    queues.set(1, 4 * S, 10); // 4 s over its whole life: not all of it in this interval

    ThreadGroupActivity first = group(activity.close(0, 10 * S), "w-*");
    threads.set(new LiveThread(1, "w-1", 2 * S));
    queues.set(1, 6 * S, 20);
    ThreadGroupActivity second = group(activity.close(10 * S, 20 * S), "w-*");

    assertThat(first.getCpuWaitNanos()).as("a baseline only").isZero();
    assertThat(idle(first)).isEqualTo(9 * S);
    assertThat(second.getCpuWaitNanos()).isEqualTo(2 * S);
    assertThat(idle(second)).isEqualTo(7 * S);
    assertThat(queues.asked).as("asked for the live threads at each close").hasSize(3);
    assertThat(queues.asked.get(2)).containsExactly(1L);
  }

  @Test
  void aThreadSeenStartingInTheIntervalCountsFromItsStart() {
    activity.measureCpuWait(queues);
    threads.set(new LiveThread(1, "main", 0));
    activity.close(0, 0);
    activity.started(2, 4 * S); // started at 4 s: all its time on the run queue is in this interval
    activity.started(3, -S); // reported, but before this interval (counts from the next close)
    threads.set(
        new LiveThread(1, "main", 0), new LiveThread(2, "w-2", S), new LiveThread(3, "o-3", S));
    queues.set(2, 3 * S, 10);
    queues.set(3, 3 * S, 10);

    List<ThreadGroupActivity> groups = activity.close(0, 10 * S);

    assertThat(group(groups, "w-*").getWallNanos()).isEqualTo(6 * S);
    assertThat(group(groups, "w-*").getCpuWaitNanos()).isEqualTo(3 * S);
    assertThat(idle(group(groups, "w-*"))).isEqualTo(2 * S);
    assertThat(group(groups, "o-*").getCpuWaitNanos()).as("its age not known: a baseline").isZero();
  }

  @Test
  void withoutMeasurementsOrWithABrokenSourceThatTimeStaysIdle() {
    threads.set(new LiveThread(1, "w-1", 0));
    activity.close(0, 0);
    threads.set(new LiveThread(1, "w-1", S));
    ThreadGroupActivity unmeasured = group(activity.close(0, 10 * S), "w-*");
    activity.measureCpuWait(
        ids -> {
          throw new IllegalStateException("a source that fails");
        });
    threads.set(new LiveThread(1, "w-1", 2 * S));
    ThreadGroupActivity broken = group(activity.close(10 * S, 20 * S), "w-*");

    assertThat(unmeasured.getCpuWaitNanos()).isZero();
    assertThat(idle(unmeasured)).isEqualTo(9 * S);
    assertThat(broken.getCpuWaitNanos()).isZero();
    assertThat(idle(broken)).isEqualTo(9 * S);
  }

  /** The cpu_wait of one 10 s interval of a thread with these measurements. */
  private static ThreadGroupActivity oneInterval(
      long cpu, long eachBlock, int blocks, long queued, long arrivals) {
    FakeThreads threads = new FakeThreads();
    FakeQueues queues = new FakeQueues();
    ThreadActivity activity = new ThreadActivity(threads);
    activity.measureCpuWait(queues);
    threads.set(new LiveThread(1, "t-1", 0));
    queues.set(1, 0, 0);
    activity.close(0, 0);
    threads.set(new LiveThread(1, "t-1", cpu));
    for (int i = 0; i < blocks; i++) {
      activity.offCpu(1, Kind.WAIT, eachBlock);
    }
    queues.set(1, queued, arrivals);
    return group(activity.close(0, 10 * S), "t-*");
  }

  @Test
  void reportsScaledIntoTheRoomLeaveNoIdleNanosecondOfRounding() {
    // Found by the property below: 45 blocks scaled into the room left 1 ns idle, 44 left none,
    // and that nanosecond went to cpu_wait.
    ThreadGroupActivity g = oneInterval(5_705_032_704L, 105_030_713L, 45, 1, 0);
    ThreadGroupActivity fewer = oneInterval(5_705_032_704L, 105_030_713L, 44, 1, 0);
    assertThat(g.getIdleNanos()).isZero();
    assertThat(g.getCpuWaitNanos()).isLessThanOrEqualTo(fewer.getCpuWaitNanos());
  }

  @Property(tries = 300)
  void cpuWaitIsPartOfIdleAtMostTheQueuedTimeAndNeverGrowsWithAReportedBlockMore(
      @ForAll @LongRange(min = 0, max = 12 * S) long cpu,
      @ForAll @LongRange(min = 1, max = S) long eachBlock,
      @ForAll @IntRange(min = 1, max = 50) int blocks,
      @ForAll @LongRange(min = 0, max = 12 * S) long queued,
      @ForAll @LongRange(min = 0, max = 100) long arrivals) {
    ThreadGroupActivity g = oneInterval(cpu, eachBlock, blocks, queued, arrivals);
    ThreadGroupActivity fewer = oneInterval(cpu, eachBlock, blocks - 1, queued, arrivals);

    assertThat(classes(g)).isEqualTo(g.getWallNanos());
    assertThat(g.getCpuWaitNanos()).isNotNegative().isLessThanOrEqualTo(g.getIdleNanos());
    assertThat(g.getCpuWaitNanos()).isLessThanOrEqualTo(queued);
    // A block more: less idle time to take from, and one more arrival that its block holds.
    assertThat(g.getCpuWaitNanos())
        .as("a block more leaves no more cpu_wait (one fewer: %d)", fewer.getCpuWaitNanos())
        .isLessThanOrEqualTo(fewer.getCpuWaitNanos());
  }

  @Test
  void aThreadThatWasNeverPutOnACpuWaitedAllAlong() {
    activity.measureCpuWait(queues);
    threads.set(new LiveThread(1, "w-1", 0));
    queues.set(1, 0, 5);
    activity.close(0, 0);
    threads.set(new LiveThread(1, "w-1", 0));
    queues.set(1, 10 * S, 5); // queued through the interval, no arrival on a CPU

    ThreadGroupActivity g = group(activity.close(0, 10 * S), "w-*");

    assertThat(g.getCpuWaitNanos()).isEqualTo(10 * S);
    assertThat(idle(g)).isZero();
  }
}
