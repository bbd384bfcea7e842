package dev.profold.collector.ingest;

import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.ThreadGroupActivity;
import dev.profold.sinks.snapshot.ClassTimes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Validates a delta's {@code thread_activity} (protocol: ThreadGroupActivity). Stateless. */
final class ActivityReader {
  /** Most thread groups in one delta. */
  static final int MAX_GROUPS = 256;

  /** Longest thread group name. */
  static final int MAX_GROUP_NAME = 128;

  private ActivityReader() {}

  /**
   * The delta's thread activity, checked: group names 1..128 characters and unique, threads > 0,
   * times below 2^63, classes adding up to the wall time, which at most fills every thread's
   * interval, cpu_wait at most idle (it is part of it: the result splits it out), and a consistent
   * CPU spread.
   *
   * @throws InvalidDeltaException naming the field, what is wrong and what to send instead
   */
  static List<GroupActivity> read(Delta delta) throws InvalidDeltaException {
    int n = delta.getThreadActivityCount();
    if (n == 0) {
      return List.of();
    }
    if (n > MAX_GROUPS) {
      throw new InvalidDeltaException(
          "thread_activity",
          n + " thread groups; at most " + MAX_GROUPS + " (merge the smallest into one group)");
    }
    long length = delta.getIntervalEndUnixNanos() - delta.getIntervalStartUnixNanos();
    Set<String> seen = new HashSet<>();
    List<GroupActivity> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(read(delta.getThreadActivity(i), "thread_activity[" + i + "]", length, seen));
    }
    return List.copyOf(out);
  }

  /**
   * The delta's {@code io_observation.unobserved_nanos}, checked: at most the interval's length; -1
   * when {@code io_observation} is not set.
   *
   * @throws InvalidDeltaException naming the field, what is wrong and what to send instead
   */
  static long ioUnobserved(Delta delta) throws InvalidDeltaException {
    if (!delta.hasIoObservation()) {
      return -1;
    }
    long n = delta.getIoObservation().getUnobservedNanos();
    long length = delta.getIntervalEndUnixNanos() - delta.getIntervalStartUnixNanos();
    if (n < 0 || n > length) {
      throw new InvalidDeltaException(
          "io_observation.unobserved_nanos",
          Long.toUnsignedString(n)
              + " ns is longer than the interval ("
              + length
              + " ns); send the part of the interval during which I/O was not observed");
    }
    return n;
  }

  /** The fields of the class times read below, in their order there. */
  private static final String[] CLASS_FIELDS = {
    "compute_nanos",
    "sync_nanos",
    "wait_nanos",
    "io_nanos",
    "runtime_nanos",
    "thread_mgmt_nanos",
    "idle_nanos"
  };

  /** The fields of the other times read below, in their order there. */
  private static final String[] OTHER_FIELDS = {
    "wall_nanos", "cpu_min_nanos", "cpu_sum_nanos", "cpu_max_nanos", "cpu_wait_nanos"
  };

  private static GroupActivity read(ThreadGroupActivity a, String at, long length, Set<String> seen)
      throws InvalidDeltaException {
    String g = a.getThreadGroup();
    if (g.isEmpty() || g.length() > MAX_GROUP_NAME) {
      throw new InvalidDeltaException(
          at + ".thread_group", "must be 1.." + MAX_GROUP_NAME + " characters, was " + g.length());
    }
    if (!seen.add(g)) {
      throw new InvalidDeltaException(
          at + ".thread_group", "'" + g + "' appears twice; send each group once per delta");
    }
    if (a.getThreads() == 0) {
      throw new InvalidDeltaException(at + ".threads", "must be > 0 (leave out empty groups)");
    }
    if (a.getThreads() < 0) { // 2^31 or more, read as a signed int
      throw new InvalidDeltaException(
          at + ".threads",
          Integer.toUnsignedString(a.getThreads()) + " is too many: at most 2^31 - 1");
    }
    long[] classes = {
      a.getComputeNanos(),
      a.getSyncNanos(),
      a.getWaitNanos(),
      a.getIoNanos(),
      a.getRuntimeNanos(),
      a.getThreadMgmtNanos(),
      a.getIdleNanos() // cpu_wait_nanos is part of it
    };
    long[] others = {
      a.getWallNanos(),
      a.getCpuMinNanos(),
      a.getCpuSumNanos(),
      a.getCpuMaxNanos(),
      a.getCpuWaitNanos()
    };
    long sum = 0;
    for (int i = 0; i < classes.length; i++) {
      sum += classes[i];
      if (classes[i] < 0) {
        throw new InvalidDeltaException(
            at + "." + CLASS_FIELDS[i],
            Long.toUnsignedString(classes[i]) + " ns: must be below 2^63 nanoseconds");
      }
      if (sum < 0) {
        throw new InvalidDeltaException(
            at,
            "the class times add up to 2^63 nanoseconds or more; they must add up to wall_nanos");
      }
    }
    for (int i = 0; i < others.length; i++) {
      if (others[i] < 0) {
        throw new InvalidDeltaException(
            at + "." + OTHER_FIELDS[i],
            Long.toUnsignedString(others[i]) + " ns: must be below 2^63 nanoseconds");
      }
    }
    long wall = a.getWallNanos();
    if (sum != wall) {
      throw new InvalidDeltaException(
          at,
          "class times add up to "
              + sum
              + " ns but wall_nanos is "
              + wall
              + "; idle_nanos must be the remainder so that they add up exactly");
    }
    if (wall / a.getThreads() > length) {
      throw new InvalidDeltaException(
          at + ".wall_nanos",
          wall
              + " ns for "
              + a.getThreads()
              + " threads exceeds their interval ("
              + length
              + " ns each)");
    }
    long cpuWait = a.getCpuWaitNanos();
    if (cpuWait > a.getIdleNanos()) {
      throw new InvalidDeltaException(
          at + ".cpu_wait_nanos",
          cpuWait
              + " ns is more than idle_nanos ("
              + a.getIdleNanos()
              + " ns); it is the part of idle_nanos spent waiting for a CPU, so count it in"
              + " idle_nanos too");
    }
    if (a.getCpuMinNanos() > a.getCpuMaxNanos() || a.getCpuMaxNanos() > a.getCpuSumNanos()) {
      throw new InvalidDeltaException(
          at,
          "CPU spread must have cpu_min_nanos <= cpu_max_nanos <= cpu_sum_nanos, was "
              + a.getCpuMinNanos()
              + ", "
              + a.getCpuMaxNanos()
              + ", "
              + a.getCpuSumNanos());
    }
    return new GroupActivity(
        g,
        a.getThreads(),
        wall,
        ClassTimes.of(
            classes[0],
            classes[1],
            classes[2],
            classes[3],
            classes[4],
            classes[5],
            cpuWait,
            classes[6] - cpuWait),
        a.getCpuMinNanos(),
        a.getCpuSumNanos(),
        a.getCpuMaxNanos());
  }
}
