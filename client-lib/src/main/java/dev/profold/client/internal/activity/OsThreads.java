package dev.profold.client.internal.activity;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the operating system says of this process's threads, by OS thread id: how long each has run
 * and waited for a CPU (Linux's per-thread scheduler statistics, {@code
 * /proc/self/task/<tid>/schedstat}: time on a CPU, time runnable on a run queue, times put on a
 * CPU), and whether it is runnable now. The I/O event gate uses them to tell a read or write that
 * waits for I/O (the thread sleeps) from one in progress or preempted (the thread runs or waits for
 * a CPU); the thread activity's {@code cpu_wait} class is the time on the run queue. Stateless and
 * thread-safe.
 */
public final class OsThreads {
  private OsThreads() {}

  /**
   * Nanoseconds OS thread {@code tid} of this process has spent on a CPU and waiting on a run queue
   * since it started, and the times it was put on a CPU, as {@code {running, queued, arrivals}}, or
   * null when that cannot be read (not Linux, a kernel without scheduler statistics, a thread that
   * ended, a thread id of 0 or less).
   */
  public static long[] schedstat(long tid) {
    String s = read(tid, "schedstat");
    int first = s == null ? -1 : s.indexOf(' ');
    int second = first <= 0 ? -1 : s.indexOf(' ', first + 1);
    if (second < 0) {
      return null;
    }
    int end = second + 1;
    while (end < s.length() && Character.isDigit(s.charAt(end))) {
      end++;
    }
    try {
      return new long[] {
        Long.parseLong(s, 0, first, 10),
        Long.parseLong(s, first + 1, second, 10),
        Long.parseLong(s, second + 1, end, 10)
      };
    } catch (NumberFormatException e) { // not the format expected
      return null;
    }
  }

  /**
   * Whether OS thread {@code tid} of this process is running or waiting for a CPU now (state {@code
   * R} in {@code /proc/self/task/<tid>/stat}), rather than sleeping or stopped; null when that
   * cannot be read.
   */
  public static Boolean runnable(long tid) {
    String s = read(tid, "stat");
    int name = s == null ? -1 : s.lastIndexOf(')'); // the name may hold spaces and parentheses
    if (name < 0 || name + 2 >= s.length()) {
      return null;
    }
    return s.charAt(name + 2) == 'R';
  }

  /**
   * The OS thread id of the calling thread ({@code /proc/thread-self}), or -1 when it cannot be
   * read (not Linux). A virtual thread gets its carrier's, which changes as it moves.
   */
  public static long currentTid() {
    try {
      return Long.parseLong(
          Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString());
    } catch (IOException | RuntimeException e) { // not Linux, or not the link expected
      return -1;
    }
  }

  /**
   * The first {@value #HEAD_BYTES} bytes of the file {@code /proc/self/task/<tid>/<file>}, or null
   * when it cannot be read. Enough for what is read here: {@code schedstat} is three numbers, and
   * in {@code stat} the state follows the name, at most 15 characters after the thread id. Reading
   * only that much, not the page-sized buffer a whole-file read takes for a file of unknown size,
   * keeps the read at a few hundred bytes of garbage: it runs for every thread at every interval.
   */
  private static String read(long tid, String file) {
    if (tid <= 0) {
      return null;
    }
    byte[] head = new byte[HEAD_BYTES];
    int n = 0;
    try (InputStream in = new FileInputStream("/proc/self/task/" + tid + "/" + file)) {
      for (int r; n < head.length && (r = in.read(head, n, head.length - n)) > 0; ) {
        n += r;
      }
    } catch (IOException | RuntimeException e) { // no such file (not Linux, the thread ended)
      return null;
    }
    return new String(head, 0, n, StandardCharsets.US_ASCII);
  }

  private static final int HEAD_BYTES = 128;

  /** The run-queue wait of {@link #schedstat}, or -1 when it cannot be read. */
  public static long runQueueNanos(long tid) {
    long[] s = schedstat(tid);
    return s == null ? -1 : s[1];
  }
}
