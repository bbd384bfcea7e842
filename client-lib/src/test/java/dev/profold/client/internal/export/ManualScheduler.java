package dev.profold.client.internal.export;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A {@link Scheduler} whose clock only moves when the test says so. Tasks run on the test's thread,
 * in {@link #runDue()} and {@link #advance}; any thread may enqueue them (gRPC callbacks do).
 */
public final class ManualScheduler implements Scheduler {
  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private long nowNanos;
  private long order;
  private boolean shutdown;

  private static final class Task implements Comparable<Task> {
    final long due;
    final long order;
    final Runnable body;
    boolean cancelled;

    Task(long due, long order, Runnable body) {
      this.due = due;
      this.order = order;
      this.body = body;
    }

    @Override
    public int compareTo(Task o) {
      int c = Long.compare(due, o.due);
      return c != 0 ? c : Long.compare(order, o.order);
    }
  }

  @Override
  public void execute(Runnable task) {
    schedule(task, Duration.ZERO);
  }

  @Override
  public synchronized Cancellable schedule(Runnable body, Duration delay) {
    Task t = new Task(nowNanos + delay.toNanos(), order++, body);
    tasks.add(t);
    notifyAll();
    return () -> {
      synchronized (ManualScheduler.this) {
        t.cancelled = true;
      }
    };
  }

  @Override
  public synchronized void shutdown() {
    shutdown = true;
  }

  public synchronized boolean isShutdown() {
    return shutdown;
  }

  /** Runs every task that is due now, including those they enqueue; returns how many ran. */
  public int runDue() {
    int ran = 0;
    Task t;
    while ((t = pollDue()) != null) {
      t.body.run();
      ran++;
    }
    return ran;
  }

  private synchronized Task pollDue() {
    while (!tasks.isEmpty()) {
      Task head = tasks.peek();
      if (head.cancelled) {
        tasks.poll();
        continue;
      }
      if (head.due > nowNanos) {
        return null;
      }
      return tasks.poll();
    }
    return null;
  }

  /** Moves the clock forward by {@code d}, running each task when its time comes. */
  public void advance(Duration d) {
    long target;
    synchronized (this) {
      target = nowNanos + d.toNanos();
    }
    while (true) {
      runDue();
      synchronized (this) {
        Task next = nextLive();
        if (next == null || next.due > target) {
          nowNanos = target;
          break;
        }
        nowNanos = next.due;
      }
    }
    runDue();
  }

  private Task nextLive() {
    while (!tasks.isEmpty() && tasks.peek().cancelled) {
      tasks.poll();
    }
    return tasks.peek();
  }

  /** Delays from now of the pending (not cancelled) tasks, soonest first. */
  public synchronized List<Duration> pendingDelays() {
    List<Task> live = new ArrayList<>();
    for (Task t : tasks) {
      if (!t.cancelled) {
        live.add(t);
      }
    }
    live.sort(null);
    List<Duration> out = new ArrayList<>();
    for (Task t : live) {
      out.add(Duration.ofNanos(t.due - nowNanos));
    }
    return out;
  }

  /**
   * Runs due tasks until {@code done} holds, failing after {@code timeout} of real time. When no
   * task is due it moves the clock to the next task if that is at most {@code maxJump} away (a
   * backoff), else waits for tasks enqueued by other threads (acks from a server thread). No
   * sleeping: the wait ends as soon as a task arrives, and re-checks {@code done} every 10 ms.
   */
  public void runUntil(BooleanSupplier done, Duration timeout, Duration maxJump)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      runDue();
      if (done.getAsBoolean()) {
        return;
      }
      synchronized (this) {
        Task next = nextLive();
        if (next != null && next.due <= nowNanos) {
          continue;
        }
        if (next != null && next.due - nowNanos <= maxJump.toNanos()) {
          nowNanos = next.due;
          continue;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("condition not reached within " + timeout);
        }
        TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(10)));
      }
    }
  }
}
