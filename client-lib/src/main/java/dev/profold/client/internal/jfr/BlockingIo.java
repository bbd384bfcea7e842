package dev.profold.client.internal.jfr;

import dev.profold.client.internal.activity.OsThreads;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongFunction;
import java.util.function.Predicate;

/**
 * Whether some thread sits in a blocking socket or file read or write right now: the look {@link
 * IoEventGate} takes before it turns JFR's I/O events off, since JFR drops a call that was not on
 * from its start to its end, so a wait longer than the events' on-time would never be seen.
 *
 * <p>One look is one thread dump of depth {@value #DEPTH} (a safepoint), taken at most once per
 * quiet time. Waiting for a connection ({@code accept}, {@code connect}) or for a selector ({@code
 * epoll}) is not I/O here, as JFR records neither: with a timeout, an accept or connect waits in
 * the same {@code Net.poll} frame as a timed read, and the frames under it tell them apart.
 *
 * <p>A read or write frame on top does not mean a wait: a non-blocking read or write (a Netty event
 * loop's) runs in the same native frames, and on a saturated server the event loops are caught in
 * them at almost every look. So where the thread's OS thread id is known and the OS says whether it
 * is runnable ({@link OsThreads#runnable}), a thread found running or waiting for a CPU in the
 * moments after the dump is passed over: a thread waiting for I/O sleeps.
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

  /** Frames a look reads per thread: enough to find an accept or connect under {@code Net.poll}. */
  static final int DEPTH = 5;

  private BlockingIo() {}

  /** True when {@code frame} ({@code Class.method}, innermost) is a blocking read or write. */
  static boolean isBlockingIo(String frame) {
    return FRAMES.contains(frame);
  }

  /**
   * True when {@code stack} (innermost first) is a blocking read or write: its top frame is one,
   * and, for {@code Net.poll}, no frame under it accepts or connects.
   */
  static boolean isBlockingIo(StackTraceElement[] stack) {
    if (stack.length == 0
        || !isBlockingIo(stack[0].getClassName() + "." + stack[0].getMethodName())) {
      return false;
    }
    if (!stack[0].getMethodName().equals("poll")) {
      return true;
    }
    for (int i = 1; i < stack.length; i++) {
      String m = stack[i].getMethodName().toLowerCase(java.util.Locale.ROOT);
      if (m.contains("accept") || m.contains("connect")) {
        return false; // waiting for a connection, not for data
      }
    }
    return true;
  }

  /** How many times, 1 ms apart, the OS is asked after the dump whether a thread is runnable. */
  static final int LOOKS_AT_STATE = 5;

  /**
   * True when a live thread whose name {@code threads} accepts sits in a blocking read or write;
   * false also when the threads cannot be looked at.
   */
  static boolean anyThreadIn(Predicate<String> threads) {
    return !inIoFrames(threads).isEmpty();
  }

  /**
   * As {@link #anyThreadIn(Predicate)}, passing over the threads the OS finds running or waiting
   * for a CPU ({@code runnable}, by OS thread id: true, false, or null when it cannot say) at one
   * of {@value #LOOKS_AT_STATE} looks 1 ms apart after the dump: a thread waiting for I/O sleeps
   * through them all. {@code osTids} maps Java thread ids ({@link Thread#getId()}) to OS thread
   * ids; a thread not in it, or of which the OS cannot say, counts as waiting.
   */
  static boolean anyThreadIn(
      Predicate<String> threads, Map<Long, Long> osTids, LongFunction<Boolean> runnable) {
    Set<Long> found = inIoFrames(threads);
    Map<Long, Long> left = new HashMap<>();
    for (long id : found) {
      Long tid = osTids.get(id);
      if (tid == null) {
        return true;
      }
      left.put(id, tid);
    }
    for (int k = 0; k < LOOKS_AT_STATE && !left.isEmpty(); k++) {
      if (k > 0) {
        LockSupport.parkNanos(1_000_000);
      }
      Iterator<Long> it = left.values().iterator();
      while (it.hasNext()) {
        Boolean r = runnable.apply(it.next());
        if (r == null) {
          return true;
        }
        if (r) {
          it.remove(); // running or about to: a call in progress, not a wait
        }
      }
    }
    return !left.isEmpty();
  }

  /**
   * The Java ids of the live threads {@code threads} accepts whose top frame is a read or write.
   */
  private static Set<Long> inIoFrames(Predicate<String> threads) {
    Set<Long> found = new HashSet<>();
    try {
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds(), DEPTH)) {
        if (t == null || !threads.test(t.getThreadName())) {
          continue;
        }
        if (isBlockingIo(t.getStackTrace())) {
          found.add(t.getThreadId());
        }
      }
    } catch (RuntimeException | LinkageError e) {
      found.clear(); // no management here: the gate goes by the events alone
    }
    return found;
  }

  /** The application's threads: all but the agent's own; see {@link #anyThreadIn}. */
  static boolean anyApplicationThread(Map<Long, Long> osTids) {
    return anyThreadIn(
        name -> !name.startsWith(EventMapper.OWN_THREAD_PREFIX), osTids, OsThreads::runnable);
  }
}
