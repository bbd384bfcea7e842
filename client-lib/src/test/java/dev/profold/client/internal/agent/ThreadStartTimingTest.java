package dev.profold.client.internal.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.activity.JvmThreads;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.boot.ThreadHooks;
import dev.profold.client.internal.jfr.ThreadStarts;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ThreadStartTimingTest {
  @AfterEach
  void noListener() {
    ThreadHooks.listen(null);
  }

  /** What the rewritten {@code Thread.start} calls around the start of {@code t}. */
  private static void start(Thread t) {
    long wall = ThreadHooks.wallAtEntry();
    long cpu = ThreadHooks.cpuAtEntry();
    ThreadHooks.exit(t, wall, cpu);
  }

  @Test
  void afterStopThreadStartsAreNeitherTimedNorReported() {
    List<Thread> reported = new ArrayList<>();
    ThreadHooks.listen(
        new ThreadHooks.Listener() {
          @Override
          public long cpuNow() {
            return 1;
          }

          @Override
          public void started(Thread started, long wallNanos, long cpuNanos) {
            reported.add(started);
          }

          @Override
          public void ending(long cpuNanos) {}
        });
    Thread first = new Thread(() -> {});
    start(first);
    assertThat(reported).containsExactly(first);

    ThreadStartTiming.stop();

    assertThat(ThreadHooks.wallAtEntry()).isEqualTo(ThreadHooks.NOT_TIMED);
    start(new Thread(() -> {}));
    assertThat(reported).containsExactly(first);
  }

  @Test
  void aStoppedRuntimesLateStopLeavesTheListenerOfARuntimeStartedSince() {
    ThreadActivity stopped = new ThreadActivity(new JvmThreads());
    ThreadActivity later = new ThreadActivity(new JvmThreads());
    ThreadStartHookup.listen(ManagementFactory.getThreadMXBean(), later, new ThreadStarts());

    ThreadStartTiming.stop(stopped); // the stopped runtime's shutdown task, run late

    assertThat(ThreadHooks.wallAtEntry()).isNotEqualTo(ThreadHooks.NOT_TIMED);
    assertThat(later.startsTimed()).as("blocks inside starts are the timed starts'").isTrue();
    ThreadStartTiming.stop(later);
    assertThat(ThreadHooks.wallAtEntry()).isEqualTo(ThreadHooks.NOT_TIMED);
    assertThat(later.startsTimed()).as("no longer timed: blocks in starts count again").isFalse();
  }
}
