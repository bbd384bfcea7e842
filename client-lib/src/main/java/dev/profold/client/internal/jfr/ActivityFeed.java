package dev.profold.client.internal.jfr;

import dev.profold.client.Kind;
import dev.profold.client.internal.activity.ThreadActivity;

/**
 * Reports what JFR events say about thread time to a {@link ThreadActivity}: blocking events (above
 * their thresholds) as off-CPU time of their class, except a pool thread waiting for work (that
 * stays idle, see {@link EventMapper#waitingForWork}); CPU samples, so that the share of them in
 * thread management code becomes that share of the thread's CPU time; GC pauses and safepoint
 * synchronisation as pauses of every thread. CPU time itself comes from the thread CPU clocks, not
 * from samples.
 *
 * <p>Stateless; thread-safe as {@link ThreadActivity} is.
 */
final class ActivityFeed {
  private final ThreadActivity activity;

  ActivityFeed(ThreadActivity activity) {
    this.activity = activity;
  }

  /** Reports event {@code e}, which was mapped to {@code o} (not null). */
  void accept(JfrEvent e, Observation o) {
    if (o.bytes()) {
      return;
    }
    if (o.threadId() == EventMapper.JVM_THREAD) {
      activity.pause(Math.round(o.value() * 1e9));
      return;
    }
    if (EventMapper.EXECUTION_SAMPLE.equals(e.type())) {
      boolean management = o.kind() == Kind.THREAD_MGMT;
      activity.onCpuSample(
          o.threadId(), management, management && EventMapper.inThreadStart(e.frames()));
      return;
    }
    if (e.durationNanos() > 0 && !EventMapper.waitingForWork(e.frames())) {
      activity.offCpu(o.threadId(), o.kind(), e.durationNanos(), e.startEpochNanos());
    }
  }
}
