package dev.profold.client.internal.record;

import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.reduce.Aggregate;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
 * is owed to its samples of the next interval, and of the ones after while less than {@link
 * #REACH_NANOS} has passed since (short intervals), then dropped (its paths lose it; the thread
 * activity still counts it). Samples of an interval in which the thread used no CPU and is owed
 * none get 0 (counted, weighing nothing); so do the late samples of a thread whose end was reported
 * in the interval before (or within that reach), beyond what it was owed (a thread gone without
 * such a report keeps the nominal values for them). Over a run the values of a thread's samples add
 * up to its CPU time but for such drops. A thread whose CPU time is unknown (no thread CPU clock)
 * keeps the nominal values.
 *
 * <p>Virtual threads (Java 21 and later) have no CPU clock of their own: their time is in the clock
 * of the carrier threads that ran them, and their samples come under one table ({@link
 * ThreadGroups#VIRTUAL_THREADS}). A carrier's own samples are few (taken while it ran the scheduler
 * between two virtual threads), so valuing them by its clock would give them the virtual threads'
 * time a second time. In an interval with samples of virtual threads, the carriers' CPU time, with
 * what they were owed, is therefore shared among the virtual threads' samples and the carriers'
 * together, each sample the same value. With no carrier's time known (a carrier that ended, a
 * scheduler of another kind), the virtual threads' samples keep the nominal values.
 *
 * <p>Not thread-safe: one thread (the flush) calls it.
 */
final class SampledCpu {
  private final int timeMetric;

  /**
   * How long after an interval its threads' CPU time waits for their late samples (JFR delivers
   * about once a second): over the next interval, and the ones after within this time.
   */
  static final long REACH_NANOS = 2_000_000_000L;

  /**
   * A thread's CPU time with no sample yet, interval by interval: each part {nanos, how long ago
   * its interval ended}, so that each leaves when it is out of reach, not with an older one (at
   * most {@code REACH_NANOS} over the shortest interval parts, 20).
   */
  private static final class Owed {
    final ArrayDeque<long[]> parts = new ArrayDeque<>();
    long nanos;

    void add(long partNanos, long age) {
      parts.add(new long[] {partNanos, age});
      nanos += partNanos;
    }
  }

  private Map<Long, Owed> owed = new HashMap<>(); // by thread id
  private Map<Long, Long> ended = new HashMap<>(); // thread id -> how long ago it ended

  SampledCpu(int timeMetric) {
    this.timeMetric = timeMetric;
  }

  /**
   * {@code threads} with every {@link Recorder#CPU_SAMPLES} cell turned into a {@code time} cell
   * (merged with one of the same context, if the thread has one), valued by {@code cpu}, the
   * threads' CPU time over the interval.
   */
  List<ThreadSnapshot> apply(List<ThreadSnapshot> threads, ThreadCpu cpu) {
    Map<Long, Long> nanos = cpu.nanos();
    long length = cpu.lengthNanos() > 0 ? cpu.lengthNanos() : REACH_NANOS;
    // What is still owed after this interval: the older debts that are not yet out of reach, and
    // this interval's CPU time; those of the threads with samples are taken out again below.
    Map<Long, Owed> nextOwed = new HashMap<>();
    owed.forEach(
        (id, o) -> {
          Owed older = new Owed();
          for (long[] part : o.parts) {
            if (part[1] + length < REACH_NANOS) {
              older.add(part[0], part[1] + length);
            }
          }
          if (!older.parts.isEmpty()) {
            nextOwed.put(id, older);
          }
        });
    nanos.forEach(
        (id, n) -> {
          if (n > 0) {
            nextOwed.computeIfAbsent(id, k -> new Owed()).add(n, 0);
          }
        });
    long[] samples = new long[threads.size()];
    boolean virtualSampled = false;
    for (int i = 0; i < samples.length; i++) {
      samples[i] = samples(threads.get(i));
      virtualSampled |= samples[i] > 0 && threads.get(i).threadId() == ThreadGroups.VIRTUAL_THREADS;
    }
    Set<Long> carriers = new HashSet<>(cpu.carriers());
    carriers.retainAll(nanos.keySet());
    boolean pooled = virtualSampled && !carriers.isEmpty();
    double poolEach = Double.NaN;
    if (pooled) {
      long poolNanos = 0;
      for (long c : carriers) {
        poolNanos += Math.max(0, nanos.get(c)) + owedTo(c);
        nextOwed.remove(c);
      }
      long poolSamples = 0;
      for (int i = 0; i < samples.length; i++) {
        if (inPool(threads.get(i), carriers)) {
          poolSamples += samples[i];
        }
      }
      poolEach = poolNanos * 1e-9 / poolSamples;
    }
    List<ThreadSnapshot> out = new ArrayList<>(threads.size());
    for (int i = 0; i < samples.length; i++) {
      ThreadSnapshot t = threads.get(i);
      long id = t.threadId();
      if (samples[i] == 0) {
        out.add(t);
      } else if (pooled && inPool(t, carriers)) {
        out.add(valued(t, poolEach));
      } else {
        nextOwed.remove(id);
        Long spent = nanos.get(id);
        boolean known = spent != null || owed.containsKey(id) || ended.containsKey(id);
        double each =
            known // else unknown: the nominal values are kept
                ? (Math.max(0, spent == null ? 0 : spent) + owedTo(id)) * 1e-9 / samples[i]
                : Double.NaN;
        out.add(valued(t, each));
      }
    }
    owed = nextOwed;
    Map<Long, Long> nextEnded = new HashMap<>();
    ended.forEach(
        (id, age) -> {
          if (age + length < REACH_NANOS) {
            nextEnded.put(id, age + length);
          }
        });
    for (long id : cpu.ended()) {
      nextEnded.put(id, 0L);
    }
    ended = nextEnded;
    return out;
  }

  /** What thread {@code id} was owed before this interval. */
  private long owedTo(long id) {
    Owed o = owed.get(id);
    return o == null ? 0 : o.nanos;
  }

  /** Whether {@code t}'s samples share the carriers' CPU time: virtual threads' and carriers'. */
  private static boolean inPool(ThreadSnapshot t, Set<Long> carriers) {
    return t.threadId() == ThreadGroups.VIRTUAL_THREADS || carriers.contains(t.threadId());
  }

  /** How many CPU samples {@code t} has. */
  private static long samples(ThreadSnapshot t) {
    long n = 0;
    for (Cell c : t.cells()) {
      if (c.metric() == Recorder.CPU_SAMPLES) {
        n += c.state().count();
      }
    }
    return n;
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
