package dev.profold.client.internal.record;

import java.util.Map;
import java.util.Set;

/**
 * The CPU time threads used over one interval, which values their CPU samples ({@link SampledCpu}).
 *
 * @param nanos CPU nanoseconds by thread id, for the threads whose CPU time is known: those alive
 *     at the interval's end with a CPU clock, and those that ended in it
 * @param carriers the ids, among them, of carrier threads of virtual threads: their CPU time holds
 *     that of the virtual threads they ran, whose samples come under {@link
 *     ThreadGroups#VIRTUAL_THREADS}
 * @param ended the ids, among them, of threads that ended in the interval: samples of theirs that
 *     come in later intervals are late, their CPU time known already
 * @param lengthNanos the interval's length; 0 when not known (taken as a long interval)
 */
public record ThreadCpu(
    Map<Long, Long> nanos, Set<Long> carriers, Set<Long> ended, long lengthNanos) {
  /** No thread's CPU time known: every sample keeps its nominal value. */
  public static final ThreadCpu NONE = new ThreadCpu(Map.of(), Set.of(), Set.of(), 0);

  public ThreadCpu {
    nanos = Map.copyOf(nanos);
    carriers = Set.copyOf(carriers);
    ended = Set.copyOf(ended);
  }

  /** The CPU time of threads none of which ended, over an interval of unknown length. */
  public ThreadCpu(Map<Long, Long> nanos, Set<Long> carriers) {
    this(nanos, carriers, Set.of(), 0);
  }

  /** The CPU time of threads none of which is a carrier. */
  public static ThreadCpu of(Map<Long, Long> nanos) {
    return new ThreadCpu(nanos, Set.of());
  }

  /** This without the threads in {@code lost} (whose samples of the interval were lost). */
  public ThreadCpu without(Set<Long> lost) {
    if (lost.isEmpty()) {
      return this;
    }
    Map<Long, Long> kept = new java.util.HashMap<>(nanos);
    kept.keySet().removeAll(lost);
    Set<Long> keptCarriers = new java.util.HashSet<>(carriers);
    keptCarriers.removeAll(lost);
    Set<Long> keptEnded = new java.util.HashSet<>(ended);
    keptEnded.removeAll(lost);
    return new ThreadCpu(kept, keptCarriers, keptEnded, lengthNanos);
  }
}
