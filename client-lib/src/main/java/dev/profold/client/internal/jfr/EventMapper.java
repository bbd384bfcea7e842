package dev.profold.client.internal.jfr;

import dev.profold.client.Kind;
import dev.profold.client.internal.record.ThreadGroups;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns a {@link JfrEvent} into the {@link Observation} it records, or none.
 *
 * <table>
 *   <caption>Events and what they record</caption>
 *   <tr><th>event</th><th>kind of the innermost region</th><th>value</th></tr>
 *   <tr><td>jdk.ExecutionSample</td><td>COMPUTE, or THREAD_MGMT in thread and executor code
 *       outside tasks (see {@link #inThreadManagement})</td><td>the sample period, a nominal
 *       value: the flush values each sample by its thread's measured CPU time instead (see {@code
 *       SampledCpu})</td></tr>
 *   <tr><td>jdk.JavaMonitorEnter</td><td>SYNC</td><td>duration</td></tr>
 *   <tr><td>jdk.JavaMonitorWait, jdk.ThreadSleep</td><td>WAIT</td><td>duration</td></tr>
 *   <tr><td>jdk.ThreadPark</td><td>SYNC on a lock (see {@link #parkKind}), else WAIT</td>
 *       <td>duration</td></tr>
 *   <tr><td>jdk.SocketRead/Write, jdk.FileRead/Write</td><td>IO</td><td>duration</td></tr>
 *   <tr><td>jdk.GarbageCollection</td><td>RUNTIME</td><td>sum of pauses</td></tr>
 *   <tr><td>jdk.SafepointBegin</td><td>RUNTIME</td><td>duration (time to safepoint)</td></tr>
 *   <tr><td>jdk.ThreadStart</td><td>THREAD_MGMT</td><td>the start's duration when {@code Thread.start} is
 *       timed ({@link ThreadStarts}), else 0 (counts)</td></tr>
 *   <tr><td>jdk.ThreadEnd</td><td>THREAD_MGMT</td><td>0 (counts)</td></tr>
 *   <tr><td>jdk.ObjectAllocationSample</td><td>COMPUTE</td><td>bytes (sample weight)</td></tr>
 * </table>
 *
 * <p>The path is the stack, outermost frame first, each frame a region named {@code Class.method};
 * outer frames are COMPUTE regions and the innermost has the event's kind. Events with a duration
 * under their threshold, events of the agent's own threads ({@code profold-*}) and events of
 * unknown types record nothing. GC and safepoint events belong to no Java thread: they are recorded
 * for a thread {@value #JVM_THREAD_NAME} (id {@value #JVM_THREAD}).
 *
 * <p>Stateless apart from its settings; thread-safe.
 */
public final class EventMapper {
  /** The outermost path element when frames were cut. */
  public static final String TRUNCATED = "(truncated)";

  /** The thread id GC and safepoint events are recorded for. */
  public static final long JVM_THREAD = -1;

  /** Its name (and group). */
  public static final String JVM_THREAD_NAME = "jvm";

  /**
   * The thread id the events of virtual threads are recorded under: all of them share one table
   * (named {@code virtual}, the group the client library pools them in), since a table per virtual
   * thread would grow with the request rate. No platform thread has this id.
   */
  public static final long VIRTUAL_THREADS = ThreadGroups.VIRTUAL_THREADS;

  /** Its name (and group). */
  public static final String VIRTUAL_THREADS_NAME = "virtual";

  public static final String EXECUTION_SAMPLE = "jdk.ExecutionSample";
  public static final String MONITOR_ENTER = "jdk.JavaMonitorEnter";
  public static final String MONITOR_WAIT = "jdk.JavaMonitorWait";
  public static final String THREAD_PARK = "jdk.ThreadPark";
  public static final String THREAD_SLEEP = "jdk.ThreadSleep";
  public static final String SOCKET_READ = "jdk.SocketRead";
  public static final String SOCKET_WRITE = "jdk.SocketWrite";
  public static final String FILE_READ = "jdk.FileRead";
  public static final String FILE_WRITE = "jdk.FileWrite";
  public static final String GARBAGE_COLLECTION = "jdk.GarbageCollection";
  public static final String SAFEPOINT_BEGIN = "jdk.SafepointBegin";
  public static final String THREAD_START = "jdk.ThreadStart";
  public static final String THREAD_END = "jdk.ThreadEnd";
  public static final String ALLOCATION_SAMPLE = "jdk.ObjectAllocationSample";

  /** The socket and file events (IO), which {@link IoEventGate} turns on and off. */
  static final Set<String> IO_EVENTS = Set.of(SOCKET_READ, SOCKET_WRITE, FILE_READ, FILE_WRITE);

  /** Threads whose events are ignored: the agent's own. */
  public static final String OWN_THREAD_PREFIX = "profold-";

  /** Frames of the agent's own internals, which its hooks run inside application threads. */
  static final String OWN_CLASSES = "dev.profold.client.internal.";

  private static final Pattern HIDDEN_SUFFIX =
      Pattern.compile("(/0x[0-9a-fA-F]+|[+.]0x[0-9a-fA-F]+(\\.\\d+)?)$");
  private static final Pattern LAMBDA_NUMBER = Pattern.compile("\\$\\$Lambda\\$\\d+");

  /** Frames (prefixes of {@code Class.method}) of thread and task management code. */
  private static final List<String> MANAGEMENT_FRAMES =
      List.of(
          "java.lang.Thread.start",
          "java.lang.Thread.<init>",
          "java.lang.Thread.exit",
          "java.util.concurrent.ThreadPoolExecutor.",
          "java.util.concurrent.ThreadPoolExecutor$Worker.",
          "java.util.concurrent.ScheduledThreadPoolExecutor.",
          "java.util.concurrent.ForkJoinPool.",
          "java.util.concurrent.ForkJoinPool$WorkQueue.",
          "java.util.concurrent.ForkJoinTask.",
          "java.util.concurrent.ForkJoinWorkerThread.",
          "java.util.concurrent.FutureTask.",
          "java.util.concurrent.CompletableFuture.",
          "java.util.concurrent.Executors$");

  /**
   * Management frames that run a task, each with the name of the method it calls to run it: a
   * sample that reached one through that call is inside the task. {@code topLevelExec} is here for
   * when {@code doExec} was inlined into it, {@code Worker.run} for when {@code runWorker} was.
   * Tasks' own classes ({@code CountedCompleter.exec}, {@code CompletableFuture$AsyncSupply.run},
   * {@code ForkJoinTask$AdaptedRunnableAction.exec}, ...) are not management frames: the walk
   * passes them and reaches one of these.
   */
  private static final Map<String, String> TASK_DISPATCH =
      Map.of(
          "java.util.concurrent.ThreadPoolExecutor.runWorker", "run",
          "java.util.concurrent.ThreadPoolExecutor$Worker.run", "run",
          "java.util.concurrent.FutureTask.run", "call",
          "java.util.concurrent.FutureTask.runAndReset", "call",
          "java.util.concurrent.Executors$RunnableAdapter.call", "run",
          "java.util.concurrent.ForkJoinTask.doExec", "exec",
          "java.util.concurrent.ForkJoinPool$WorkQueue.topLevelExec", "exec");

  private final JfrSettings settings;
  private final ThreadStarts starts;
  private final double sampleSeconds;

  private static final String JFR_HANDLER = "jdk.jfr.internal.handlers.EventHandler";

  public EventMapper(JfrSettings settings) {
    this(settings, ThreadStarts.NONE);
  }

  /** Maps with thread starts timed in {@code starts} (their records get the durations). */
  public EventMapper(JfrSettings settings, ThreadStarts starts) {
    this.settings = settings;
    this.starts = starts;
    this.sampleSeconds = settings.samplePeriod().toNanos() * 1e-9;
  }

  /**
   * The region name of a frame: {@code Class.method} with the class's binary name. Hidden classes
   * lose their address (JFR writes {@code Foo$$Lambda+0x00007f97c0001c18.149928006}, the JVM {@code
   * Foo$$Lambda$14/0x0000000800c0b000}; JDK 25's JFR {@code Foo$$Lambda.0x000000007f040448}) and
   * lambda classes their number: all become {@code Foo$$Lambda}, so paths stay the same from run to
   * run. JFR's generated event handlers ({@code
   * jdk.jfr.internal.handlers.EventHandler3282_1795695442739-9682}: an id, a time stamp and the
   * process id, different in every process) become {@code jdk.jfr.internal.handlers.EventHandler}.
   */
  public static String frameName(String className, String method) {
    String c = className;
    if (c.startsWith(JFR_HANDLER)) {
      return JFR_HANDLER + "." + method;
    }
    if (c.indexOf('/') >= 0 || c.indexOf('+') >= 0 || c.contains(".0x")) {
      c = HIDDEN_SUFFIX.matcher(c).replaceFirst("");
    }
    if (c.contains("$$Lambda$")) {
      c = LAMBDA_NUMBER.matcher(c).replaceAll("\\$\\$Lambda");
    }
    return c + "." + method;
  }

  /**
   * The kind of a park on an object of class {@code parkedClass} (binary name, null when parked
   * without a blocker): SYNC for locks and synchronizers, whose blocker is the lock or its {@code
   * AbstractQueuedSynchronizer} ({@code ReentrantLock$NonfairSync}, {@code
   * ReentrantReadWriteLock$FairSync}, {@code StampedLock}, {@code Semaphore$NonfairSync}, {@code
   * CountDownLatch$Sync}: a simple name ending in {@code Sync} or containing {@code Lock}); WAIT
   * for everything else: conditions ({@code AbstractQueuedSynchronizer$ConditionObject}, which
   * blocking queues wait on), futures, pools waiting for work, parks without a blocker.
   */
  public static Kind parkKind(String parkedClass) {
    if (parkedClass == null || parkedClass.contains("ConditionObject")) {
      return Kind.WAIT;
    }
    String simple = parkedClass.substring(parkedClass.lastIndexOf('.') + 1);
    simple = simple.substring(simple.lastIndexOf('$') + 1);
    String outer = parkedClass.substring(parkedClass.lastIndexOf('.') + 1);
    return simple.endsWith("Sync") || outer.contains("Lock") ? Kind.SYNC : Kind.WAIT;
  }

  /**
   * True when a CPU sample with this stack (innermost frame first) is thread or task management
   * rather than the application's work: walking outwards from the innermost frame through JDK code
   * ({@code java.}, {@code jdk.}, {@code sun.}), a frame of thread creation or of an executor's own
   * code is met before any application frame, and that frame is not running a task. So time in
   * {@code ThreadPoolExecutor.execute} queueing a task, in {@code getTask} taking one, in {@code
   * Thread.start}, in {@code ForkJoinPool} scanning or in the pool's bookkeeping around a task is
   * management; time in the task's own code, even under {@code runWorker}, is not, whether the task
   * is the application's or the JDK's ({@code Arrays.parallelSort}, a parallel stream of JDK
   * operations, {@code HttpClient} work on its executor).
   *
   * <p>A frame runs a task when it is a task-dispatch frame ({@code ThreadPoolExecutor.runWorker},
   * {@code FutureTask.run}, {@code ForkJoinTask.doExec}, {@code Executors$RunnableAdapter.call},
   * ...) and the frame inside it is the call that runs the task ({@code run}, {@code call}, {@code
   * exec}); a sample in the dispatch frame itself or in another call it makes ({@code
   * Worker.unlock}, {@code getTask}, {@code FutureTask.set}) is management. Frames of the agent's
   * own internals are passed over, so its hook timing {@code Thread.start} counts as part of the
   * start.
   */
  public static boolean inThreadManagement(List<String> frames) {
    return managementFrame(frames) != null;
  }

  /**
   * True when a CPU sample with this stack is in thread management because it is inside {@code
   * Thread.start} ({@link #inThreadManagement}), whose CPU time the agent measures when it times
   * starts.
   */
  public static boolean inThreadStart(List<String> frames) {
    // Thread.start or its native start0, not Thread.startVirtualThread (Java 21), not timed.
    String f = managementFrame(frames);
    return THREAD_START_FRAME.equals(f) || THREAD_START0_FRAME.equals(f);
  }

  /**
   * True when a block with this stack (innermost frame first) happened while its thread was
   * creating, starting or ending a thread: the innermost management frame ({@link
   * #inThreadManagement}) is {@code Thread.<init>}, {@code Thread.start} or {@code Thread.exit}
   * (the JDK takes the thread group's lock there, which the threads starting and ending contend
   * for).
   */
  public static boolean inThreadLifecycle(List<String> frames) {
    String f = managementFrame(frames);
    return f != null
        && (f.startsWith(THREAD_START_FRAME) // start, start0, startVirtualThread (Java 21)
            || f.equals("java.lang.Thread.<init>")
            || f.equals("java.lang.Thread.exit"));
  }

  /** The frame of {@code Thread.start}, which the agent times. */
  private static final String THREAD_START_FRAME = "java.lang.Thread.start";

  /** The frame of its native part. */
  private static final String THREAD_START0_FRAME = THREAD_START_FRAME + "0";

  /** The frame that makes a sample with this stack thread management, or null. */
  private static String managementFrame(List<String> frames) {
    String callee = null;
    for (String f : frames) {
      if (f.startsWith(OWN_CLASSES)) {
        callee = f;
        continue; // the agent's own hooks (timing Thread.start) inside the JDK's code
      }
      if (!(f.startsWith("java.") || f.startsWith("jdk.") || f.startsWith("sun."))) {
        return null;
      }
      for (String m : MANAGEMENT_FRAMES) {
        if (f.startsWith(m)) {
          return runsTask(f, callee) ? null : f;
        }
      }
      callee = f;
    }
    return null;
  }

  /**
   * True when {@code frame} is a task-dispatch frame that called {@code callee} to run the task.
   */
  private static boolean runsTask(String frame, String callee) {
    String run = TASK_DISPATCH.get(frame);
    return run != null
        && callee != null
        && callee.endsWith(run)
        && callee.length() > run.length()
        && callee.charAt(callee.length() - run.length() - 1) == '.';
  }

  /**
   * Frames ({@code Class.method}, exact) in which a thread waits for its next piece of work: an
   * idle worker of a thread pool or of a framework's own executor, a timer between tasks, a cleaner
   * waiting for references ({@code java.util.Timer}'s loop is checked apart, see {@link
   * #waitingForWork}). Any frame ending in {@link #POOL_GET_TASK} counts too: the JDK's pool and
   * its forks keep the name (Tomcat's {@code org.apache.tomcat.util.threads}).
   */
  static final Set<String> IDLE_FRAMES =
      Set.of(
          "java.util.concurrent.ForkJoinPool.awaitWork",
          "java.lang.ref.ReferenceQueue.remove",
          "org.eclipse.jetty.util.thread.QueuedThreadPool$Runner.idleJobPoll",
          "org.eclipse.jetty.util.thread.QueuedThreadPool.idleJobPoll",
          "org.eclipse.jetty.util.thread.ReservedThreadExecutor$ReservedThread.reservedWait",
          "io.netty.util.concurrent.SingleThreadEventExecutor.takeTask",
          "io.netty.util.concurrent.GlobalEventExecutor.takeTask",
          "kotlinx.coroutines.scheduling.CoroutineScheduler$Worker.park");

  /** How a thread pool's worker asks for its next task, in the JDK and in its forks. */
  static final String POOL_GET_TASK = "ThreadPoolExecutor.getTask";

  /**
   * True when a wait with this stack (innermost frame first) is a thread waiting for work (an idle
   * worker, not a blocked one): one of {@link #IDLE_FRAMES}, or a pool's {@code getTask}, among the
   * frames. Only for a wait (WAIT): a worker that contends for its queue's lock on the way there is
   * blocked (SYNC), and counts so.
   */
  public static boolean waitingForWork(List<String> frames) {
    boolean onlyWaitSoFar = true;
    for (String f : frames) {
      if (IDLE_FRAMES.contains(f) || f.endsWith(POOL_GET_TASK)) {
        return true;
      }
      // A timer between tasks waits in Object.wait right inside mainLoop; a task it runs is
      // inside mainLoop too, and the task's own waits are waits.
      if (onlyWaitSoFar && f.equals(TIMER_LOOP)) {
        return true;
      }
      onlyWaitSoFar &= f.startsWith("java.lang.Object.wait");
    }
    return false;
  }

  /** {@code java.util.Timer}'s thread loop: idle when it waits in it directly. */
  private static final String TIMER_LOOP = "java.util.TimerThread.mainLoop";

  /** What {@code e} records, or null when it records nothing. */
  public Observation map(JfrEvent e) {
    if (e.threadName().startsWith(OWN_THREAD_PREFIX)) {
      return null;
    }
    return switch (e.type()) {
      case EXECUTION_SAMPLE ->
          settings.cpu()
              ? onThread(
                  e,
                  inThreadManagement(e.frames()) ? Kind.THREAD_MGMT : Kind.COMPUTE,
                  false,
                  sampleSeconds)
              : null;
      case MONITOR_ENTER -> timed(e, Kind.SYNC);
      case MONITOR_WAIT, THREAD_SLEEP -> timed(e, Kind.WAIT);
      case THREAD_PARK -> timed(e, parkKind(e.detail()));
      case SOCKET_READ, SOCKET_WRITE, FILE_READ, FILE_WRITE ->
          settings.io() ? timed(e, Kind.IO) : null;
      case GARBAGE_COLLECTION ->
          settings.runtime()
              ? jvm(e, "GC: " + (e.detail() == null ? "unknown" : e.detail()), e.amount())
              : null;
      case SAFEPOINT_BEGIN ->
          settings.runtime() ? jvm(e, "Safepoint synchronization", e.durationNanos()) : null;
      case THREAD_START ->
          settings.threads()
              ? onThread(e, Kind.THREAD_MGMT, false, starts.take(e.amount()) * 1e-9, "Thread.start")
              : null;
      case THREAD_END ->
          settings.threads() ? onThread(e, Kind.THREAD_MGMT, false, 0, "Thread.exit") : null;
      case ALLOCATION_SAMPLE ->
          settings.allocation() && e.amount() > 0
              ? onThread(e, Kind.COMPUTE, true, (double) e.amount())
              : null;
      default -> null;
    };
  }

  private Observation timed(JfrEvent e, Kind kind) {
    long threshold =
        switch (kind) {
          case SYNC -> settings.lockThreshold().toNanos();
          case WAIT -> settings.waitThreshold().toNanos();
          default -> settings.ioThreshold().toNanos();
        };
    if (e.durationNanos() < threshold || e.durationNanos() <= 0) {
      return null;
    }
    return onThread(e, kind, false, e.durationNanos() * 1e-9);
  }

  private Observation onThread(JfrEvent e, Kind kind, boolean bytes, double value) {
    return onThread(e, kind, bytes, value, "(no stack)");
  }

  private Observation onThread(
      JfrEvent e, Kind kind, boolean bytes, double value, String whenNoStack) {
    if (e.threadId() < 0) {
      return null;
    }
    List<String> path = new ArrayList<>(e.frames().size() + 1);
    if (e.frames().isEmpty()) {
      path.add(whenNoStack);
    } else {
      if (e.truncated()) {
        path.add(TRUNCATED);
      }
      for (int i = e.frames().size() - 1; i >= 0; i--) {
        path.add(e.frames().get(i));
      }
    }
    return new Observation(
        e.type(), e.threadId(), e.threadName(), e.initialThread(), path, kind, bytes, value);
  }

  private static Observation jvm(JfrEvent e, String region, long nanos) {
    if (nanos <= 0) {
      return null;
    }
    return new Observation(
        e.type(),
        JVM_THREAD,
        JVM_THREAD_NAME,
        false,
        List.of(region),
        Kind.RUNTIME,
        false,
        nanos * 1e-9);
  }
}
