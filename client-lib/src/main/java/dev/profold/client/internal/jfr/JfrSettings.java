package dev.profold.client.internal.jfr;

import dev.profold.client.internal.export.Durations;
import java.time.Duration;

/**
 * What the agent asks JDK Flight Recorder for, and how events are turned into records. Immutable.
 *
 * @param samplePeriod period of {@code jdk.ExecutionSample} (CPU samples); each sample records this
 *     much COMPUTE time
 * @param maxDepth frames kept per call path, from the innermost (deeper frames are cut, and the
 *     path starts with {@value EventMapper#TRUNCATED})
 * @param lockThreshold shortest monitor enter or park on a lock recorded (SYNC)
 * @param waitThreshold shortest monitor wait, sleep or other park recorded (WAIT)
 * @param ioThreshold shortest socket or file read or write recorded (IO)
 * @param cpu record execution samples
 * @param allocation record allocation samples ({@code jdk.ObjectAllocationSample}, bytes)
 * @param runtime record GC pauses and safepoint synchronisation (RUNTIME)
 * @param threads record thread starts and ends (THREAD_MGMT)
 * @param io record socket and file reads and writes (IO). Off, JFR's socket and file events are not
 *     enabled, so the JDK's instrumented reads and writes skip their timing (about 65 ns per call,
 *     docs/benchmarks.md), and I/O waits count as idle
 * @param ioQuiet with {@code io} on: how long the socket and file events stay enabled without one
 *     above {@code ioThreshold} before they are turned off, and probed again later ({@link
 *     IoEventGate}); zero keeps them on
 */
public record JfrSettings(
    Duration samplePeriod,
    int maxDepth,
    Duration lockThreshold,
    Duration waitThreshold,
    Duration ioThreshold,
    boolean cpu,
    boolean allocation,
    boolean runtime,
    boolean threads,
    boolean io,
    Duration ioQuiet) {

  /** Checks the values. */
  public JfrSettings {
    if (samplePeriod.toMillis() < 1) {
      throw new IllegalArgumentException(
          "sample.period: at least 1ms, was " + Durations.written(samplePeriod));
    }
    if (maxDepth < 1 || maxDepth > 2048) {
      throw new IllegalArgumentException("depth: 1..2048 frames, was " + maxDepth);
    }
    if (ioQuiet.isNegative() || (!ioQuiet.isZero() && ioQuiet.toSeconds() < 5)) {
      throw new IllegalArgumentException(
          "io.quiet: 0 (I/O events always on) or at least 5s (JFR delivers about one batch a second),"
              + " was "
              + Durations.written(ioQuiet));
    }
    notNegative("threshold.lock", lockThreshold);
    notNegative("threshold.wait", waitThreshold);
    notNegative("threshold.io", ioThreshold);
  }

  private static void notNegative(String option, Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException(option + ": not negative, was " + Durations.written(d));
    }
  }

  /**
   * 20 ms samples, 64 frames, 10 ms thresholds, everything on; socket and file events turned off
   * after 30 s without one.
   */
  public static JfrSettings defaults() {
    return new JfrSettings(
        Duration.ofMillis(20),
        64,
        Duration.ofMillis(10),
        Duration.ofMillis(10),
        Duration.ofMillis(10),
        true,
        true,
        true,
        true,
        true,
        Duration.ofSeconds(30));
  }

  public JfrSettings withSamplePeriod(Duration d) {
    return new JfrSettings(
        d,
        maxDepth,
        lockThreshold,
        waitThreshold,
        ioThreshold,
        cpu,
        allocation,
        runtime,
        threads,
        io,
        ioQuiet);
  }

  public JfrSettings withMaxDepth(int frames) {
    return new JfrSettings(
        samplePeriod,
        frames,
        lockThreshold,
        waitThreshold,
        ioThreshold,
        cpu,
        allocation,
        runtime,
        threads,
        io,
        ioQuiet);
  }

  /** Lock, wait and I/O thresholds at once. */
  public JfrSettings withThresholds(Duration lock, Duration wait, Duration io) {
    return new JfrSettings(
        samplePeriod,
        maxDepth,
        lock,
        wait,
        io,
        cpu,
        allocation,
        runtime,
        threads,
        this.io,
        ioQuiet);
  }

  /** Which event families are on. */
  public JfrSettings withSources(
      boolean cpu, boolean allocation, boolean runtime, boolean threads, boolean io) {
    return new JfrSettings(
        samplePeriod,
        maxDepth,
        lockThreshold,
        waitThreshold,
        ioThreshold,
        cpu,
        allocation,
        runtime,
        threads,
        io,
        ioQuiet);
  }
}
