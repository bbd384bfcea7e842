package dev.profold.client.internal.activity;

import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

/**
 * This JVM's application threads with their CPU time ({@link ThreadMXBean}, in bulk where the JDK
 * offers it). Left out: the JVM's own threads (thread group {@code system}: reference handler,
 * finalizer, signal dispatcher, ...), JDK Flight Recorder's ({@code JFR *}, such as {@code JFR
 * Periodic Tasks}, which JFR starts in the group of whichever thread started it) and Profold's own
 * ({@code profold-*}, reported as client overhead instead). Enumerating the thread groups needs no
 * safepoint.
 */
public final class JvmThreads implements LiveThreads {
  /** Names of Profold's own threads. */
  public static final String OWN_PREFIX = "profold-";

  /** Names of JDK Flight Recorder's Java threads. */
  static final String JFR_PREFIX = "JFR ";

  /** The class of the JDK's carrier threads of virtual threads (Java 21 and later). */
  static final String CARRIER_CLASS = "jdk.internal.misc.CarrierThread";

  private final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
  private final boolean cpu;

  public JvmThreads() {
    boolean supported = mx.isThreadCpuTimeSupported();
    if (supported && !mx.isThreadCpuTimeEnabled()) {
      try {
        mx.setThreadCpuTimeEnabled(true);
      } catch (UnsupportedOperationException | SecurityException e) {
        supported = false;
      }
    }
    this.cpu = supported;
  }

  @Override
  public List<LiveThread> now() {
    return threads(false);
  }

  /** Profold's own live threads ({@code profold-*}), with their CPU time so far. */
  public List<LiveThread> own() {
    return threads(true);
  }

  /** True for a carrier thread of virtual threads (Java 21 and later). */
  public static boolean isCarrier(Thread t) {
    return t.getClass().getName().equals(CARRIER_CLASS);
  }

  /**
   * True for a thread counted in the thread activity: not the JVM's, JFR's or Profold's own (see
   * the class comment). The agent's report of a thread's end asks the same.
   */
  public static boolean isApplicationThread(Thread t) {
    ThreadGroup g = t.getThreadGroup();
    String name = t.getName();
    return !name.startsWith(OWN_PREFIX)
        && g != null
        && !"system".equals(g.getName())
        && !name.startsWith(JFR_PREFIX);
  }

  /** Profold's own threads when {@code own}, else the application's. */
  private List<LiveThread> threads(boolean own) {
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root.getParent() != null) {
      root = root.getParent();
    }
    Thread[] all = new Thread[root.activeCount() + 16];
    int n;
    while ((n = root.enumerate(all, true)) == all.length) {
      all = new Thread[all.length * 2];
    }
    List<Thread> kept = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Thread t = all[i];
      if (own ? t.getName().startsWith(OWN_PREFIX) : isApplicationThread(t)) {
        kept.add(t);
      }
    }
    long[] ids = new long[kept.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = kept.get(i).getId();
    }
    long[] times = cpuTimes(ids);
    ThreadInfo[] infos = own ? new ThreadInfo[ids.length] : mx.getThreadInfo(ids, 0);
    List<LiveThread> out = new ArrayList<>(ids.length);
    for (int i = 0; i < ids.length; i++) {
      ThreadInfo info = infos[i];
      boolean runnable = info != null && info.getThreadState() == Thread.State.RUNNABLE;
      Thread t = kept.get(i);
      out.add(new LiveThread(ids[i], t.getName(), times[i], block(info), runnable, isCarrier(t)));
    }
    return out;
  }

  /**
   * The lock block a thread is in, from its {@link ThreadInfo} (read without a stack, which needs
   * no safepoint): entering a monitor another thread holds, or parked on a synchronizer another
   * thread owns (a {@code ReentrantLock}, the write lock of a {@code ReentrantReadWriteLock}); null
   * otherwise: running, sleeping, waiting on a condition, a queue, a latch or a semaphore (which
   * have no owner, and are often waited on for long by design), in {@code Object.wait}, ended.
   */
  static LiveThread.Block block(ThreadInfo info) {
    if (info == null || info.getLockInfo() == null || info.getLockOwnerId() == -1) {
      return null;
    }
    LockInfo lock = info.getLockInfo();
    return switch (info.getThreadState()) {
      case BLOCKED ->
          new LiveThread.Block(
              true,
              lock.getClassName(),
              lock.getIdentityHashCode(),
              info.getBlockedCount(),
              info.getLockOwnerId());
      case WAITING, TIMED_WAITING ->
          new LiveThread.Block(
              false,
              lock.getClassName(),
              lock.getIdentityHashCode(),
              info.getWaitedCount(),
              info.getLockOwnerId());
      default -> null;
    };
  }

  private long[] cpuTimes(long[] ids) {
    long[] out = new long[ids.length];
    if (!cpu) {
      java.util.Arrays.fill(out, -1);
      return out;
    }
    if (BULK && Bulk.supported(mx)) {
      return Bulk.cpuTimes(mx, ids);
    }
    for (int i = 0; i < ids.length; i++) {
      out[i] = mx.getThreadCpuTime(ids[i]);
    }
    return out;
  }

  /**
   * Whether {@code com.sun.management} (module {@code jdk.management}) is there: a trimmed runtime
   * may leave it out, and then times are read one thread at a time.
   */
  private static final boolean BULK = bulkInterfacePresent();

  private static boolean bulkInterfacePresent() {
    try {
      Class.forName("com.sun.management.ThreadMXBean", false, JvmThreads.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** The bulk read of {@code com.sun.management}; loaded only when that module is present. */
  private static final class Bulk {
    private Bulk() {}

    static boolean supported(ThreadMXBean mx) {
      return mx instanceof com.sun.management.ThreadMXBean;
    }

    static long[] cpuTimes(ThreadMXBean mx, long[] ids) {
      return ((com.sun.management.ThreadMXBean) mx).getThreadCpuTime(ids);
    }
  }
}
