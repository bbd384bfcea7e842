package dev.profold.client.internal.jfr;

import dev.profold.client.Kind;
import dev.profold.client.internal.activity.ThreadActivity;

/**
 * Reports what JFR events say about thread time to a {@link ThreadActivity}: blocking events (above
 * their thresholds) as off-CPU time of their class, except a pool thread waiting for work (that
 * stays idle, see {@link EventMapper#waitingForWork}), or as thread_mgmt when the thread blocked
 * while creating, starting or ending a thread ({@link EventMapper#inThreadLifecycle}: a monitor
 * enter on the thread group's lock is the cost of the thread churn, not of the application's
 * locking), and not at all inside a {@code Thread.start} the agent times ({@link
 * ThreadActivity#startsTimed()}: the timed start reported its off-CPU time itself); CPU samples, so
 * that the share of them in thread management code becomes that share of the thread's CPU time; GC
 * pauses and safepoint synchronisation as pauses of every thread. CPU time itself comes from the
 * thread CPU clocks, not from samples.
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
    if (e.durationNanos() <= 0
        || (o.kind() == Kind.WAIT && EventMapper.waitingForWork(e.frames()))) {
      return; // an idle worker's wait for its next task stays idle
    }
    Kind kind = o.kind();
    if (kind != Kind.THREAD_MGMT && EventMapper.inThreadLifecycle(e.frames())) {
      if (activity.startsTimed() && EventMapper.inThreadStart(e.frames())) {
        return; // inside a timed start, whose off-CPU time was reported as it returned
      }
      kind = Kind.THREAD_MGMT;
    }
    activity.offCpu(o.threadId(), kind, e.durationNanos(), e.startEpochNanos());
  }
}
