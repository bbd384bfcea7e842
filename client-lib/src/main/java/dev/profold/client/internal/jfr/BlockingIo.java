package dev.profold.client.internal.jfr;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Whether some thread sits in a blocking socket or file read or write right now: the look {@link
 * IoEventGate} takes before it turns JFR's I/O events off, since JFR drops a call that was not on
 * from its start to its end, so a wait longer than the events' on-time would never be seen.
 *
 * <p>One look is one thread dump of depth 1 (a safepoint), taken at most once per quiet time.
 * Waiting for a connection ({@code accept}) or for a selector ({@code epoll}) is not I/O here, as
 * JFR records neither.
 */
final class BlockingIo {
  /** The innermost frames ({@code Class.method}) of a thread blocked in a read or write. */
  private static final Set<String> FRAMES =
      Set.of(
          "sun.nio.ch.SocketDispatcher.read0",
          "sun.nio.ch.SocketDispatcher.readv0",
          "sun.nio.ch.SocketDispatcher.write0",
          "sun.nio.ch.SocketDispatcher.writev0",
          "sun.nio.ch.Net.poll", // a socket read or write with a timeout, parked until ready
          "sun.nio.ch.FileDispatcherImpl.read0",
          "sun.nio.ch.FileDispatcherImpl.pread0",
          "sun.nio.ch.FileDispatcherImpl.readv0",
          "sun.nio.ch.FileDispatcherImpl.write0",
          "sun.nio.ch.FileDispatcherImpl.pwrite0",
          "sun.nio.ch.FileDispatcherImpl.writev0",
          "sun.nio.ch.UnixFileDispatcherImpl.read0",
          "sun.nio.ch.UnixFileDispatcherImpl.pread0",
          "sun.nio.ch.UnixFileDispatcherImpl.readv0",
          "sun.nio.ch.UnixFileDispatcherImpl.write0",
          "sun.nio.ch.UnixFileDispatcherImpl.pwrite0",
          "sun.nio.ch.UnixFileDispatcherImpl.writev0",
          "java.io.FileInputStream.readBytes",
          "java.io.FileInputStream.read0",
          "java.io.FileOutputStream.writeBytes",
          "java.io.FileOutputStream.write",
          "java.io.RandomAccessFile.readBytes",
          "java.io.RandomAccessFile.read0",
          "java.io.RandomAccessFile.writeBytes",
          "java.io.RandomAccessFile.write0",
          "java.net.SocketInputStream.socketRead0",
          "java.net.SocketOutputStream.socketWrite0");

  private BlockingIo() {}

  /** True when {@code frame} ({@code Class.method}, innermost) is a blocking read or write. */
  static boolean isBlockingIo(String frame) {
    return FRAMES.contains(frame);
  }

  /**
   * True when a live thread whose name {@code threads} accepts sits in a blocking read or write;
   * false also when the threads cannot be looked at.
   */
  static boolean anyThreadIn(Predicate<String> threads) {
    try {
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds(), 1)) {
        if (t == null || !threads.test(t.getThreadName())) {
          continue;
        }
        StackTraceElement[] top = t.getStackTrace();
        if (top.length > 0 && isBlockingIo(top[0].getClassName() + "." + top[0].getMethodName())) {
          return true;
        }
      }
      return false;
    } catch (RuntimeException | LinkageError e) {
      return false; // no management here: the gate goes by the events alone
    }
  }

  /** The application's threads: all but the agent's own. */
  static boolean anyApplicationThread() {
    return anyThreadIn(name -> !name.startsWith(EventMapper.OWN_THREAD_PREFIX));
  }
}
