package dev.profold.client.internal.agent;

import dev.profold.client.internal.activity.JvmThreads;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.boot.ThreadHooks;
import dev.profold.client.internal.jfr.EventMapper;
import dev.profold.client.internal.jfr.ThreadStarts;
import java.lang.instrument.Instrumentation;
import java.lang.instrument.UnmodifiableClassException;
import java.lang.management.ThreadMXBean;
import java.util.Map;
import java.util.Set;

/**
 * The listener of timed thread starts, and the hook-up behind {@link ThreadStartTiming#install}:
 * loaded only once the hook classes are on the bootstrap class path. Thread-safe.
 */
final class ThreadStartHookup implements ThreadHooks.Listener {
  private static final System.Logger LOG = System.getLogger("dev.profold.client");

  /** The listener set last, or null; guarded by the class lock. */
  private static ThreadStartHookup listening;

  private final ThreadMXBean mx;
  private final ThreadActivity activity;
  private final ThreadStarts starts;

  private ThreadStartHookup(ThreadMXBean mx, ThreadActivity activity, ThreadStarts starts) {
    this.mx = mx;
    this.activity = activity;
    this.starts = starts;
  }

  /**
   * Lets {@code java.base} read the hook, rewrites {@code java.lang.Thread} and starts listening.
   * Once per JVM ({@link ThreadStartTiming#install} keeps to that): a later start only {@linkplain
   * #listen listens}.
   *
   * @throws ClassNotFoundException when the hook is not on the bootstrap class path
   * @throws UnmodifiableClassException when {@code java.lang.Thread} cannot be rewritten
   * @throws IllegalStateException when the hook was loaded by another class loader first, or the
   *     rewrite failed
   */
  static synchronized void hookUp(
      Instrumentation inst, ThreadMXBean mx, ThreadActivity activity, ThreadStarts starts)
      throws ClassNotFoundException, UnmodifiableClassException {
    Class<?> hook = Class.forName(ThreadStartTiming.HOOK.replace('/', '.'), true, null);
    if (hook != ThreadHooks.class) {
      throw new IllegalStateException(
          "the hook class was loaded before the agent ran (is the agent jar on the class path?)");
    }
    inst.redefineModule(
        Thread.class.getModule(), Set.of(hook.getModule()), Map.of(), Map.of(), Set.of(), Map.of());
    ThreadStartTransformer transformer = new ThreadStartTransformer();
    // Stays registered, so that another agent retransforming Thread keeps the timing.
    inst.addTransformer(transformer, true);
    try {
      inst.retransformClasses(Thread.class);
    } catch (Throwable e) { // Thread stays as it was: so must the chain, for a later install
      inst.removeTransformer(transformer);
      throw e;
    }
    if (!transformer.applied()) {
      inst.removeTransformer(transformer);
      throw new IllegalStateException(
          "rewriting java.lang.Thread failed: " + transformer.failure());
    }
    listen(mx, activity, starts);
    LOG.log(
        System.Logger.Level.INFO,
        "Profold agent: timing Thread.start (thread starts count as thread_mgmt time) and"
            + " reading the CPU time of threads as they end");
  }

  /**
   * Stops reporting thread starts: the rewritten {@code Thread.start} then finds no listener and
   * times nothing (a volatile read per start). Called at shutdown, so that starts no longer take
   * the lock of a stopped runtime's {@link ThreadActivity} and fill its maps.
   */
  static synchronized void unhook() {
    if (listening != null) {
      listening.activity.startsTimed(false);
    }
    listening = null;
    ThreadHooks.listen(null);
  }

  /**
   * As {@link #unhook()}, if starts are reported to {@code activity}: a stopped runtime's late
   * shutdown task leaves the listener of a runtime started since.
   */
  static synchronized void unhook(ThreadActivity activity) {
    if (listening != null && listening.activity == activity) {
      unhook();
    }
  }

  /** Reports thread starts to {@code activity} and {@code starts} from now on. */
  static synchronized void listen(ThreadMXBean mx, ThreadActivity activity, ThreadStarts starts) {
    if (listening != null && listening.activity != activity) {
      listening.activity.startsTimed(false);
    }
    listening = new ThreadStartHookup(mx, activity, starts);
    activity.startsTimed(true);
    ThreadHooks.listen(listening);
  }

  @Override
  public long cpuNow() {
    return mx.getCurrentThreadCpuTime();
  }

  @Override
  public void started(Thread started, long wallNanos, long cpuNanos) {
    Thread me = Thread.currentThread();
    if (me.getName().startsWith(EventMapper.OWN_THREAD_PREFIX)) {
      return;
    }
    try {
      activity.timedStart(
          started.getId(), epochNanos(), me.getId(), cpuNanos, wallNanos - cpuNanos);
      starts.started(started.getId(), wallNanos);
    } catch (RuntimeException e) { // a start not recorded: reported as an event dropped
      starts.timingFailed();
    }
  }

  @Override
  public void ending(long cpuNanos) {
    Thread me = Thread.currentThread();
    if (!JvmThreads.isApplicationThread(me)) { // as the look at the live threads leaves out
      return;
    }
    activity.ended(me.getId(), me.getName(), cpuNanos, epochNanos(), JvmThreads.isCarrier(me));
  }

  /** The wall clock (epoch nanoseconds) minus {@link System#nanoTime()}, as last read. */
  private static volatile long epochOffset;

  /** {@link System#nanoTime()} when {@link #epochOffset} was read. */
  private static volatile long offsetReadAt;

  private static final long OFFSET_READ_EVERY = 1_000_000_000L;

  static {
    readEpochOffset(System.nanoTime());
  }

  private static void readEpochOffset(long nanoTime) {
    java.time.Instant t = java.time.Instant.now();
    epochOffset = t.getEpochSecond() * 1_000_000_000L + t.getNano() - nanoTime;
    offsetReadAt = nanoTime;
  }

  /**
   * Now, in unix epoch nanoseconds: the clock of the intervals {@link ThreadActivity} closes. From
   * {@link System#nanoTime()} and an offset to the wall clock read again at most once a second, so
   * that a thread reporting its end allocates nothing (an {@code Instant} is an allocation, and a
   * thread's first allocation takes a whole allocation buffer, given back unused as it ends).
   */
  private static long epochNanos() {
    long now = System.nanoTime();
    if (now - offsetReadAt > OFFSET_READ_EVERY) { // benign race: two threads may both read it
      readEpochOffset(now);
    }
    return now + epochOffset;
  }
}
