package dev.profold.client.internal.record;

import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.reduce.Aggregate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns CPU samples ({@link Recorder#CPU_SAMPLES} cells) into {@code time} values that add up to
 * the CPU time their thread was measured to use.
 *
 * <p>A sample does not stand for its sampler's nominal period. JDK Flight Recorder takes at most
 * five samples of threads in Java code per period, so with more such threads each gets fewer; it
 * counts a thread the OS has preempted in Java code as running; and it samples at the shortest
 * period any recording in the JVM asked for (a second recording at 10 ms doubles the samples of the
 * agent's 20 ms). The nominal values therefore overstate a thread's CPU time on an oversubscribed
 * machine or beside another recording, and understate it on a machine with more than five busy
 * threads. Instead, each interval every sample of a thread gets the same value: the thread's CPU
 * time over the interval divided by its samples. The samples still say where the thread ran; its
 * clock says how long.
 *
 * <p>Samples arrive up to a second after they were taken, so a thread's CPU time and its samples
 * may fall into neighbouring intervals. CPU time of an interval in which the thread had no sample
 * is owed to its samples of the next interval, then dropped (its paths lose it; the thread activity
 * still counts it). Samples of an interval in which the thread used no CPU and is owed none get 0
 * (counted, weighing nothing). Over a run the values of a thread's samples add up to its CPU time
 * but for such drops. A thread whose CPU time is unknown (no thread CPU clock, a virtual thread)
 * keeps the nominal values.
 *
 * <p>Not thread-safe: one thread (the flush) calls it.
 */
final class SampledCpu {
  private final int timeMetric;
  private Map<Long, Long> owed = new HashMap<>(); // thread id -> CPU nanos with no sample yet

  SampledCpu(int timeMetric) {
    this.timeMetric = timeMetric;
  }

  /**
   * {@code threads} with every {@link Recorder#CPU_SAMPLES} cell turned into a {@code time} cell
   * (merged with one of the same context, if the thread has one), valued by {@code cpuNanos}: each
   * thread's CPU time over the interval, by thread id, for the threads whose CPU time is known.
   */
  List<ThreadSnapshot> apply(List<ThreadSnapshot> threads, Map<Long, Long> cpuNanos) {
    Map<Long, Long> nextOwed = new HashMap<>();
    cpuNanos.forEach(
        (id, nanos) -> {
          if (nanos > 0) {
            nextOwed.put(id, nanos); // taken out again below for the threads with samples
          }
        });
    List<ThreadSnapshot> out = new ArrayList<>(threads.size());
    for (ThreadSnapshot t : threads) {
      long samples = 0;
      for (Cell c : t.cells()) {
        if (c.metric() == Recorder.CPU_SAMPLES) {
          samples += c.state().count();
        }
      }
      if (samples == 0) {
        out.add(t);
        continue;
      }
      Long nanos = cpuNanos.get(t.threadId());
      nextOwed.remove(t.threadId());
      double each =
          nanos == null
              ? Double.NaN // unknown: the nominal values are kept
              : (Math.max(0, nanos) + owed.getOrDefault(t.threadId(), 0L)) * 1e-9 / samples;
      out.add(valued(t, each));
    }
    owed = nextOwed;
    return out;
  }

  /**
   * {@code t} with its sample cells made time cells, each sample worth {@code each} (NaN: kept).
   */
  private ThreadSnapshot valued(ThreadSnapshot t, double each) {
    Map<Long, Cell> byKey = new LinkedHashMap<>();
    for (Cell c : t.cells()) {
      Cell cell = c;
      if (c.metric() == Recorder.CPU_SAMPLES) {
        Aggregate a = c.state();
        if (!Double.isNaN(each)) {
          long n = a.count();
          a.reset();
          a.mergeMoments(n, n * each, each, each, n * each * each);
          a.histogram().record(each, n);
        }
        cell = new Cell(c.context(), timeMetric, a);
      }
      Cell prior = byKey.putIfAbsent(cell.key(), cell);
      if (prior != null) {
        prior.state().merge(cell.state());
      }
    }
    return new ThreadSnapshot(
        t.threadId(), t.name(), t.group(), t.initial(), new ArrayList<>(byKey.values()));
  }
}
