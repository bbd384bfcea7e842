package dev.profold.client.internal.jfr;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How long a thread of this process has waited for a CPU: runnable, but not running (Linux's
 * per-thread scheduler statistics, {@code /proc/self/task/<tid>/schedstat}, second field). The I/O
 * event gate uses it to tell a non-blocking call that was preempted from one that waited for I/O.
 * Stateless and thread-safe.
 */
final class RunQueueWait {
  private RunQueueWait() {}

  /**
   * Nanoseconds OS thread {@code tid} of this process has spent waiting on a run queue since it
   * started, or -1 when that cannot be read (not Linux, a kernel without scheduler statistics, a
   * thread that ended, a thread id of 0 or less).
   */
  static long nanos(long tid) {
    if (tid <= 0) {
      return -1;
    }
    try {
      String s =
          new String(
              Files.readAllBytes(Path.of("/proc/self/task/" + tid + "/schedstat")),
              StandardCharsets.US_ASCII);
      int first = s.indexOf(' ');
      int second = s.indexOf(' ', first + 1);
      if (first < 0 || second < 0) {
        return -1;
      }
      return Long.parseLong(s, first + 1, second, 10);
    } catch (IOException | RuntimeException e) { // no such file, or not the format expected
      return -1;
    }
  }
}
