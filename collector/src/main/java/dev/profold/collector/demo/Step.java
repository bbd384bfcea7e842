package dev.profold.collector.demo;

import dev.profold.client.Kind;
import dev.profold.proto.v1.RegionKind;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/** One piece of simulated work in the demo; regions nest steps and time them. */
interface Step {
  /** Runs the step inside region path node {@code path} (0 = none) of {@code instance}. */
  void run(SimulatedInstance instance, int path);

  /** A timed region containing {@code children}. */
  static Step region(String name, RegionKind kind, Step... children) {
    List<Step> steps = List.of(children);
    return (instance, parent) -> {
      int path = instance.pathNode(parent, name, kind);
      long t0 = System.nanoTime();
      for (Step s : steps) {
        s.run(instance, path);
      }
      instance.recordTime(path, (System.nanoTime() - t0) / 1e9);
    };
  }

  /** Busy CPU work for about {@code meanMicros} (exponentially distributed). */
  static Step compute(int meanMicros) {
    return (instance, path) -> {
      long until = System.nanoTime() + randomNanos(meanMicros);
      while (System.nanoTime() < until) {
        Thread.onSpinWait();
      }
    };
  }

  /**
   * As {@link #compute}, but the instance's first worker does {@code factor} times as much: a hot
   * shard, which makes its threads' times at this region uneven.
   */
  static Step computeHotFirstWorker(int meanMicros, int factor) {
    Step normal = compute(meanMicros);
    Step hot = compute(meanMicros * factor);
    return (instance, path) -> (instance.workerIndex() == 0 ? hot : normal).run(instance, path);
  }

  /** Blocking wait for about {@code meanMicros}. */
  static Step sleep(int meanMicros) {
    return (instance, path) -> {
      long t0 = System.nanoTime();
      LockSupport.parkNanos(randomNanos(meanMicros));
      instance.blocked(Kind.WAIT, System.nanoTime() - t0);
    };
  }

  /** Blocking I/O of about {@code meanMicros} moving about {@code meanBytes}. */
  static Step io(int meanMicros, int meanBytes) {
    return (instance, path) -> {
      long t0 = System.nanoTime();
      LockSupport.parkNanos(randomNanos(meanMicros));
      instance.blocked(Kind.IO, System.nanoTime() - t0);
      instance.recordBytes(path, 1 + ThreadLocalRandom.current().nextInt(2 * meanBytes));
    };
  }

  /** Holds the instance's one shared lock, busy, for about {@code meanMicros}: contention. */
  static Step contendedLock(int meanMicros) {
    Step hold = compute(meanMicros);
    return (instance, path) -> {
      long t0 = System.nanoTime();
      synchronized (instance.sharedLock()) {
        instance.blocked(Kind.SYNC, System.nanoTime() - t0);
        hold.run(instance, path);
      }
    };
  }

  private static long randomNanos(int meanMicros) {
    double u = ThreadLocalRandom.current().nextDouble();
    return (long) (-Math.log(1 - u) * meanMicros * 1000);
  }
}
