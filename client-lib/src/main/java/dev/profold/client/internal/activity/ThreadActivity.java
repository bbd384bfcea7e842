package dev.profold.client.internal.activity;

import static dev.profold.client.internal.activity.TimeClasses.CLASSES;
import static dev.profold.client.internal.activity.TimeClasses.COMPUTE;
import static dev.profold.client.internal.activity.TimeClasses.CPU_WAIT;
import static dev.profold.client.internal.activity.TimeClasses.IDLE;
import static dev.profold.client.internal.activity.TimeClasses.RUNTIME;
import static dev.profold.client.internal.activity.TimeClasses.SYNC;
import static dev.profold.client.internal.activity.TimeClasses.THREAD_MGMT;
import static dev.profold.client.internal.activity.TimeClasses.fit;
import static dev.profold.client.internal.activity.TimeClasses.index;
import static dev.profold.client.internal.activity.TimeClasses.scaled;
import static dev.profold.client.internal.activity.TimeClasses.sum;

import dev.profold.client.Kind;
import dev.profold.client.internal.record.ThreadCpu;
import dev.profold.client.internal.record.ThreadGroups;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Where each thread group's time goes, interval by interval (the overhead classes): every live
 * thread's wall time in the interval is split into compute, sync, wait, io, runtime, thread_mgmt,
 * cpu_wait and idle, which add up to it exactly, and the groups' per-thread CPU spread is kept for
 * imbalance.
 *
 * <p>Per thread and interval, with {@code wall} its time alive in the interval:
 *
 * <ul>
 *   <li>{@code cpu}: its CPU time in the interval ({@link LiveThreads}), at most {@code wall};
 *       {@code thread_mgmt} takes the share of the thread's CPU samples ({@link #onCpuSample}) that
 *       were in thread and executor management code, {@code compute} the rest; CPU time measured in
 *       thread management ({@link #managementCpu}) is thread_mgmt first, and only the rest is split
 *       by the samples, those inside {@code Thread.start} left out (they fell in the measured
 *       time). A share, not the samples times their period: a sampler reaches a thread less often
 *       than its period says (JFR samples a few threads per tick, and only those running Java
 *       code), so counting periods understates, while the share of the samples it did take does not
 *       depend on how many it took. A carrier of virtual threads is split by the carriers' and the
 *       virtual threads' samples together ({@link #carrierSamples}), since JFR gives the samples
 *       taken while a virtual thread is mounted to the virtual thread;
 *   <li>off-CPU classes ({@link #offCpu}: sync, wait, io, runtime and thread_mgmt from blocking
 *       events above their thresholds; {@link #pause}: stop-the-world pauses, runtime for every
 *       thread, for the share of its off-CPU time no event reported, since a reported block holds
 *       the pauses that fell in it) fill {@code wall - cpu}; when they report more than that (an
 *       event reported late, a wait that began in an earlier interval) they are scaled down in
 *       proportion, and what did not fit is carried to the next interval, once and at most one
 *       interval's worth. There it fills the room first (it is the older time), and what of it
 *       still does not fit is dropped, not counted anywhere: an event's duration is wall time the
 *       thread spent before the event was reported, so time that fits neither the interval it was
 *       reported in nor the next one lies in intervals already sent, and carrying it on would only
 *       put it into later intervals where the thread was on CPU or idle (a 60 s wait followed by
 *       minutes on CPU would otherwise show as waiting whenever the thread next goes idle);
 *   <li>{@code cpu_wait}: of the rest, the time the thread was runnable but waited for a CPU
 *       outside the reported blocks, where the operating system tells it ({@link CpuWaits});
 *   <li>{@code idle} is the remainder: waits too short for their threshold, waits for work, and
 *       anything no event describes.
 * </ul>
 *
 * A block is reported when it ends, so a thread stuck on a lock (a deadlock, a lock held for
 * minutes) would show as idle for as long as it lasts. With {@link #countStuckLocks} on, a thread
 * found at two interval ends in the same lock block ({@link LiveThread.Block}: the same monitor or
 * lock, held by another thread, its count of blocks unchanged, so it never left it) spent the
 * interval between in it: its off-CPU time there is sync. Not when the holder sits runnable without
 * using CPU (in a blocking native call: the JDK's own accept and receive hold a lock while they
 * wait, and idle acceptors queue behind it). What was counted for a block is subtracted from the
 * block's own report when it ends ({@link #offCpu}: the sync report that began before the block was
 * first seen and lasted until it was last seen), so the block counts once; its first, partial
 * interval is counted then, from that report.
 *
 * <p>A thread first seen at an interval's end counts from its start when that was reported ({@link
 * #started}, the agent's timed {@code Thread.start}), else from the interval's start (its age is
 * not known; its idle time is then overstated by up to an interval). A thread that ended during the
 * interval counts up to its end, with the CPU time it reported as it ended ({@link #ended}, the
 * agent's hook in {@code Thread.exit}): once it ended, its CPU time can no longer be read. Without
 * that report (the library without the agent) it is not counted in that interval, and what was
 * reported for it is discarded.
 *
 * <p>Thread-safe: reports come from any thread, {@link #close} from the flush thread. {@link
 * #close} reads the live threads before it takes the lock that reports take, so a report (a timed
 * {@code Thread.start} reports from inside {@code start()}) never waits for every thread's CPU time
 * to be read.
 */
public final class ThreadActivity {
  /** Most groups in one delta (the protocol's limit); the smallest are merged beyond it. */
  public static final int MAX_GROUPS = 256;

  /** The group that holds threads of groups beyond {@link #MAX_GROUPS}. */
  public static final String OTHER_GROUP = "_other_";

  private static final long[] NO_SAMPLES = new long[3];
  private static final long[] NO_CLASSES = new long[CLASSES];

  private final LiveThreads threads;
  private final Map<Long, long[]> offCpu = new HashMap<>(); // reported in this interval
  private final Map<Long, long[]> carriedIn = new HashMap<>(); // from the interval before
  private final Map<Long, long[]> carried = new HashMap<>(); // to the next interval
  private final Map<Long, long[]> samples = new HashMap<>(); // {all, in management}
  private final Map<Long, long[]> lastSamples = new HashMap<>(); // the interval before

  /** {@link #carrierSamples} of the close running now. */
  private long[] carrierSamples = new long[2];

  private final Map<Long, Long> managementCpu = new HashMap<>(); // measured, not sampled
  private volatile boolean startsTimed;
  private final Map<Long, Long> lastCpu = new HashMap<>();
  private long pauses;
  private boolean first = true;
  private ThreadCpu intervalCpu = ThreadCpu.NONE; // of the last close
  private LongSupplier ioUnobserved; // cumulative; null: nothing observes
  private long ioUnobservedTaken; // what of the current source's total was accounted
  private long ioUnobservedKept; // accounted, not yet returned by a take
  private boolean ioReported; // an observer was set once: takes report, 0 included
  private Predicate<String> lockClasses; // null: stuck locks not counted
  private final Map<Long, Seen> lastLockBlock = new HashMap<>(); // at the last close
  private final Map<Long, List<Stuck>> stuck = new HashMap<>(); // counted, report not yet come

  /**
   * Thread starts and ends kept between two closes at most (each); further ones are not used: a
   * thread started beyond it counts from the interval's start, one ended beyond it is not counted
   * in the interval it ended in.
   */
  static final int MAX_STARTS_AND_ENDS = StartsAndEnds.MAX_WAITING;

  /** The launcher's thread that takes over the initial thread's OS thread once main returns. */
  private static final String DESTROY_JAVA_VM = "DestroyJavaVM";

  /** Starts and ends reported by the threads themselves, applied at the next {@link #close}. */
  private final StartsAndEnds reports = new StartsAndEnds();

  /** Time runnable but not on a CPU, when the operating system tells it. */
  private final CpuWaits cpuWaits = new CpuWaits();

  /** The OS's run queues of the threads whose OS thread ids were learnt: cpu_wait's source. */
  private final OsRunQueues osRunQueues = new OsRunQueues();

  /** Takes what {@link #reports} held, under the lock. */
  private final StartsAndEnds.Target fromReports =
      new StartsAndEnds.Target() {
        @Override
        public void started(long threadId, long atEpochNanos) {
          if (startedAt.size() < MAX_STARTS_AND_ENDS) {
            startedAt.put(threadId, atEpochNanos);
          } else {
            reports.capReached();
          }
        }

        @Override
        public void ended(long threadId, StartsAndEnds.Ended e) {
          if (ended.size() < MAX_STARTS_AND_ENDS) {
            ended.put(threadId, e);
          } else {
            reports.capReached();
          }
        }

        @Override
        public void startTimes(long starterId, long cpuNanos, long offCpuNanos, long starts) {
          managementCpu(starterId, cpuNanos);
          // Each start blocked until the thread it started ran, and ended with a wait for a CPU.
          cpuWaits.blocksReported(starterId, starts);
          addOffCpu(starterId, Kind.THREAD_MGMT, offCpuNanos, -1);
        }
      };

  private Map<String, GroupTotals> lastGroups = Map.of(); // what the last close returned
  private Map<String, GroupTotals> heldBack = Map.of(); // given back: goes with the next close
  private ThreadCpu heldBackCpu = ThreadCpu.NONE; // given back with its CPU samples unvalued

  private final Map<Long, Long> startedAt = new HashMap<>(); // since the last close, epoch nanos
  private final Map<Long, StartsAndEnds.Ended> ended =
      new HashMap<>(); // reported since the last close

  /**
   * How long a counted block waits for its report after it was last seen stuck: at least this, and
   * at least three intervals (JFR delivers about once a second).
   */
  private static final long STUCK_REPORT_WAIT_NANOS = 5_000_000_000L;

  /** A lock block a thread was found in at a close ({@code at}, epoch nanoseconds). */
  private record Seen(LiveThread.Block block, long at) {}

  /** A lock block whose time was counted while it lasted, waiting for its own report. */
  private static final class Stuck {
    final LiveThread.Block block;
    final long firstSeenAt; // the close that first found the thread in it
    final long slack; // how much later than a close its look at the threads may come
    long lastSeenAt; // the last close that found it
    long counted; // sync counted for it

    Stuck(LiveThread.Block block, long firstSeenAt, long slack) {
      this.block = block;
      this.firstSeenAt = firstSeenAt;
      this.slack = slack;
    }

    /**
     * Whether a sync report that began at {@code start} and lasted {@code nanos} is this block's:
     * it began before the look that first found the thread in it (a close's look comes a little
     * after the close's time) and lasted at least until the last close that still found it.
     */
    boolean reportedBy(long start, long nanos) {
      return start <= firstSeenAt + slack && start + nanos >= lastSeenAt - slack;
    }
  }

  public ThreadActivity(LiveThreads threads) {
    this.threads = threads;
    cpuWaits.measure(osRunQueues);
  }

  /**
   * Counts threads stuck on a lock as sync while they are (see the class comment); {@code
   * lockClass} tells a lock (a monitor entered, a park's blocker) by its class name.
   */
  public synchronized void countStuckLocks(Predicate<String> lockClass) {
    this.lockClasses = lockClass;
  }

  /**
   * Thread {@code threadId} was started at {@code atEpochNanos}: its first interval counts from
   * then, not from the interval's start. Does not take the lock.
   */
  public void started(long threadId, long atEpochNanos) {
    reports.started(threadId, atEpochNanos);
  }

  /**
   * A timed {@code Thread.start} on thread {@code starterId} started thread {@code startedId} at
   * {@code atEpochNanos}, taking {@code cpuNanos} of CPU time ({@link #managementCpu}) and {@code
   * offCpuNanos} off CPU (thread_mgmt): {@link #started} and both, without taking the lock.
   */
  public void timedStart(
      long startedId, long atEpochNanos, long starterId, long cpuNanos, long offCpuNanos) {
    reports.timedStart(startedId, atEpochNanos, starterId, cpuNanos, offCpuNanos);
  }

  /**
   * Thread {@code threadId}, named {@code name}, ends at {@code atEpochNanos} having used {@code
   * cpuNanos} of CPU: its last, partial interval is counted (once it ended, its CPU time can no
   * longer be read). Called on the ending thread; allocates nothing unless {@value
   * StartsAndEnds#END_RING} ends wait for a close.
   */
  public void ended(long threadId, String name, long cpuNanos, long atEpochNanos) {
    ended(threadId, name, cpuNanos, atEpochNanos, false);
  }

  /**
   * {@link #ended(long, String, long, long)} for a thread that, when {@code carrier}, was a carrier
   * of virtual threads.
   */
  public void ended(long threadId, String name, long cpuNanos, long atEpochNanos, boolean carrier) {
    reports.ended(threadId, name, cpuNanos, atEpochNanos, carrier);
  }

  /** The channel of start and end reports (for tests). */
  StartsAndEnds reports() {
    return reports;
  }

  /** Thread {@code threadId} was blocked for {@code nanos} in a {@code kind} (not COMPUTE) way. */
  public void offCpu(long threadId, Kind kind, long nanos) {
    offCpu(threadId, kind, nanos, -1);
  }

  /**
   * {@link #offCpu(long, Kind, long)} for a block that began at {@code startEpochNanos} (-1:
   * unknown). A sync block that began before a counted stuck block of the thread was first seen and
   * lasted until it was last seen is that block's report: what was counted is subtracted.
   */
  public synchronized void offCpu(long threadId, Kind kind, long nanos, long startEpochNanos) {
    reports.moveEndsIfMany();
    if (nanos > 0 && kind != Kind.COMPUTE) {
      cpuWaits.blocksReported(threadId, 1); // it ended with a wait for a CPU, which it holds
    }
    addOffCpu(threadId, kind, nanos, startEpochNanos);
  }

  /** {@link #offCpu(long, Kind, long, long)} without counting it as a block; under the lock. */
  private void addOffCpu(long threadId, Kind kind, long nanos, long startEpochNanos) {
    if (kind == Kind.SYNC && startEpochNanos >= 0) {
      List<Stuck> counted = stuck.get(threadId);
      if (counted != null) {
        // Every piece of the block it covers (its counting can restart, when a look found the
        // holder idle in native code), at most the report's own length in all.
        long subtract = 0;
        for (java.util.Iterator<Stuck> it = counted.iterator(); it.hasNext(); ) {
          Stuck b = it.next();
          if (b.reportedBy(startEpochNanos, nanos)) {
            subtract += b.counted;
            it.remove();
          }
        }
        nanos -= Math.min(nanos, subtract);
      }
    }
    if (nanos <= 0 || kind == Kind.COMPUTE) {
      return;
    }
    offCpu.computeIfAbsent(threadId, k -> new long[CLASSES])[index(kind)] += nanos;
  }

  /**
   * Thread {@code threadId} was sampled running, in thread management code when {@code management}.
   */
  public synchronized void onCpuSample(long threadId, boolean management) {
    onCpuSample(threadId, management, false);
  }

  /**
   * {@link #onCpuSample(long, boolean)}, {@code inStart} when the management code sampled is inside
   * {@code Thread.start}: where {@link #managementCpu} measured the thread's starts, such samples
   * stand for that measured time and are left out of the share that splits the rest.
   */
  public synchronized void onCpuSample(long threadId, boolean management, boolean inStart) {
    reports.moveEndsIfMany();
    long[] n = samples.computeIfAbsent(threadId, k -> new long[3]);
    n[0]++;
    if (management) {
      n[1]++;
      if (inStart) {
        n[2]++;
      }
    }
  }

  /**
   * Whether the thread starts are timed ({@link #managementCpu} and a thread_mgmt {@link #offCpu}
   * report as each {@code Thread.start} returns): blocks reported from inside a start are then part
   * of that report. Set by the agent's start hook as it listens and stops.
   */
  public void startsTimed(boolean timed) {
    startsTimed = timed;
  }

  /** See {@link #startsTimed(boolean)}. */
  public boolean startsTimed() {
    return startsTimed;
  }

  /** Thread ids the given-back activity holds (for tests: bounded by the live threads). */
  synchronized int heldBackThreadIds() {
    return heldBack.values().stream().mapToInt(g -> g.ids.size()).sum();
  }

  /**
   * Thread {@code threadId} spent {@code cpuNanos} of CPU time in thread management, measured (a
   * timed {@code Thread.start}, much of which runs in the JVM, where samples do not reach): it
   * counts as thread_mgmt, and only the rest of the thread's CPU time is split by its samples.
   */
  public synchronized void managementCpu(long threadId, long cpuNanos) {
    if (cpuNanos > 0) {
      managementCpu.merge(threadId, cpuNanos, Long::sum);
    }
  }

  /**
   * Measures the {@code cpu_wait} class from {@code queues} from the next close on ({@link
   * CpuWaits}; null: no longer, that time is then idle). By default, from the operating system for
   * the threads whose OS thread ids were learnt ({@link #osThread}, {@link #learnCurrentOsThread}).
   */
  void measureCpuWait(RunQueues queues) {
    cpuWaits.measure(queues);
  }

  /**
   * Platform thread {@code threadId} runs as OS thread {@code osThreadId} (from a JFR event), so
   * its wait for a CPU can be read. Any thread; does not take the lock.
   */
  public void osThread(long threadId, long osThreadId) {
    osRunQueues.learn(threadId, osThreadId);
  }

  /**
   * Learns the calling platform thread's OS thread id, unless known (a thread that records for the
   * first time). Reads a link in {@code /proc} once per thread; does nothing elsewhere than Linux.
   */
  public void learnCurrentOsThread() {
    osRunQueues.learnCurrentThread();
  }

  /**
   * Sets where the time I/O waits went unobserved comes from ({@link #takeIoUnobservedNanos}):
   * {@code unobservedNanos} gives it since the observer started, in nanoseconds, and never
   * decreases; {@code null} when nothing observes any more. What the previous source had not yet
   * given is kept for the next takes (an observer closed before the last interval was flushed).
   */
  public void observeIo(LongSupplier unobservedNanos) {
    LongSupplier old;
    synchronized (this) {
      old = ioUnobserved;
    }
    long total = old == null ? 0 : old.getAsLong(); // outside the lock: the source takes its own
    synchronized (this) {
      if (old != null && old == ioUnobserved) {
        account(total);
      }
      ioUnobserved = unobservedNanos;
      ioUnobservedTaken = 0;
      ioReported |= unobservedNanos != null;
    }
  }

  /**
   * The time I/O waits went unobserved that was not taken yet, at most {@code maxNanos} (the
   * interval's length); of the rest, at most one more {@code maxNanos} is kept for the next take
   * (time read a little after the interval's end, a flush that failed), the remainder dropped (the
   * wall clock stepped back, so intervals shrank). -1 when nothing ever reported it.
   */
  public long takeIoUnobservedNanos(long maxNanos) {
    LongSupplier source;
    synchronized (this) {
      source = ioUnobserved;
    }
    long total = source == null ? 0 : source.getAsLong(); // outside the lock, as above
    synchronized (this) {
      if (!ioReported) {
        return -1;
      }
      if (source != null && source == ioUnobserved) {
        account(total);
      }
      long n = Math.max(0, Math.min(ioUnobservedKept, maxNanos));
      ioUnobservedKept = Math.min(ioUnobservedKept - n, Math.max(0, maxNanos));
      return n;
    }
  }

  /** Gives back what a take returned, for a flush that failed before its delta was submitted. */
  public synchronized void giveBackIoUnobserved(long nanos) {
    if (nanos > 0) {
      ioUnobservedKept += nanos;
    }
  }

  /** Adds what the current source gave since the last look; under the lock. */
  private void account(long total) {
    if (total > ioUnobservedTaken) {
      ioUnobservedKept += total - ioUnobservedTaken;
      ioUnobservedTaken = total;
    }
  }

  /**
   * The activity the last {@link #close} returned was not sent (the flush failed after the close):
   * the next close that closes an interval adds it to its own, so that the time is not lost. That
   * delta then spans both intervals: a group's threads are those alive in either, its times and CPU
   * sum add up over both, and its CPU minimum and maximum are over thread-intervals. With {@code
   * withCpu} (the CPU samples were not valued: the flush failed before it took the recorder's
   * tables) the threads' CPU time of that interval goes into the next {@link #intervalCpu} too. A
   * second call before the next close changes nothing.
   */
  public void giveBack(boolean withCpu) {
    giveBack(withCpu, Set.of());
  }

  /**
   * {@link #giveBack(boolean)}, the CPU time of the threads in {@code lost} left out: threads whose
   * samples of the interval were lost (a collection that failed after taking their tables), so that
   * it does not value their later samples.
   */
  public synchronized void giveBack(boolean withCpu, Set<Long> lost) {
    // Bounded however many flushes fail in a row: at most MAX_GROUPS groups, and of their thread
    // ids only those of threads alive at the close (the only ones the next interval can have
    // again: a thread id is never reused); the others are counted.
    Map<String, GroupTotals> kept = new HashMap<>();
    for (GroupTotals g : GroupTotals.compact(lastGroups)) {
      g.keepOnlyIds(lastCpu.keySet());
      kept.put(g.name, g);
    }
    heldBack = kept;
    heldBackCpu = withCpu ? intervalCpu.without(lost) : ThreadCpu.NONE;
  }

  /** Every thread was stopped for {@code nanos} (a GC pause, reaching a safepoint). */
  public synchronized void pause(long nanos) {
    if (nanos > 0) {
      pauses += nanos;
    }
  }

  /**
   * Takes the live threads' CPU times so far as the start of the first interval, so that the first
   * {@link #close} counts only what threads older than it spent in it (without a baseline, their
   * CPU time since they started, up to the interval's length, would be counted as the interval's).
   * Reports made before are dropped.
   */
  public void baseline() {
    close(0, 0);
  }

  /**
   * Closes the interval {@code [startNanos, endNanos)}: reads the live threads and returns one
   * entry per thread group, largest wall time first (at most {@link #MAX_GROUPS}). Without a {@link
   * #baseline()} before, the first call counts each thread's CPU time since it started, up to the
   * interval's length.
   */
  public List<ThreadGroupActivity> close(long startNanos, long endNanos) {
    // Read before taking the lock: reports come from application threads (a timed Thread.start
    // reports inside start()), which must not wait while every thread's CPU time is read.
    List<LiveThread> live = threads.now();
    // After the look: a thread it missed reported its end before it ended, so its end is claimed
    // in the ring by now, if not published yet.
    reports.moveClaimedEnds();
    Map<Long, long[]> queues = cpuWaits.read(live); // file reads: not under the lock either
    synchronized (this) {
      return close(startNanos, endNanos, live, queues);
    }
  }

  /**
   * Each thread's CPU time in the interval the last {@link #close} closed: the threads alive at its
   * look whose CPU time is known, and those that ended in it, with the carriers of virtual threads
   * among them marked. None before the first close and after a {@link #baseline()}.
   */
  public synchronized ThreadCpu intervalCpu() {
    return intervalCpu;
  }

  private List<ThreadGroupActivity> close(
      long startNanos, long endNanos, List<LiveThread> live, Map<Long, long[]> queues) {
    reports.drain(fromReports);
    long length = Math.max(0, endNanos - startNanos);
    Map<String, GroupTotals> groups = new HashMap<>();
    Map<Long, Long> cpuNow = new HashMap<>(live.size() * 2);
    Map<Long, Seen> lockBlocks = new HashMap<>();
    Map<Long, LiveThread> byId = new HashMap<>(live.size() * 2);
    for (LiveThread t : live) {
      byId.put(t.id(), t);
    }
    Map<Long, Long> cpuOf = new HashMap<>(live.size() * 2);
    Set<Long> carriers = new HashSet<>();
    carrierSamples = carrierSamples(live);
    for (LiveThread t : live) {
      cpuNow.put(t.id(), t.cpuNanos());
      Long before = lastCpu.get(t.id());
      long cpu;
      if (t.cpuNanos() < 0) {
        cpu = 0;
      } else if (before != null) {
        cpu = t.cpuNanos() - before;
      } else {
        cpu = newThreadCpu(t.cpuNanos(), length);
        if (!first && t.name().equals(DESTROY_JAVA_VM)) {
          cpu = 0; // its clock is the initial thread's, whose end counted it already
        }
      }
      // A thread started in the interval counts from its start, when that was reported.
      long wall =
          before != null
              ? length
              : Math.min(length, Math.max(0, endNanos - startOf(t.id(), startNanos)));
      LiveThread.Block block = lockBlock(t, byId, length);
      Seen seen = lastLockBlock.get(t.id());
      boolean inIt = block != null && seen != null && block.equals(seen.block());
      if (block != null && length > 0) { // not at a baseline, whose time is not a look's
        lockBlocks.put(t.id(), inIt ? seen : new Seen(block, endNanos));
      }
      if (t.cpuNanos() >= 0) {
        cpuOf.put(t.id(), Math.max(0, cpu));
        if (t.carrier()) {
          carriers.add(t.id());
        }
      }
      wall = Math.max(wall, Math.min(Math.max(0, cpu), length)); // it ran that long at least
      if (wall == 0 && length > 0) {
        continue; // started after the interval's end, before the look: counted from the next
      }
      long[] classes =
          inIt
              ? stuckSplit(length, Math.max(0, cpu), t.id(), seen, startNanos, endNanos)
              : split(wall, Math.max(0, cpu), t.id(), length, t.carrier());
      if (!inIt) {
        // A thread seen starting in this interval queued for a CPU only in it: all of that counts.
        Long at = before == null ? startedAt.get(t.id()) : null;
        boolean startedInIt = at != null && at >= startNanos;
        long waited = Math.min(classes[IDLE], cpuWaits.outsideBlocks(t.id(), queues, startedInIt));
        classes[CPU_WAIT] = waited;
        classes[IDLE] -= waited;
      }
      groups
          .computeIfAbsent(ThreadGroups.normalise(t.name()), GroupTotals::new)
          .add(t.id(), inIt ? length : wall, classes, Math.min(Math.max(0, cpu), length));
    }
    Set<Long> endedIds = new HashSet<>();
    closeEnded(groups, byId, startNanos, endNanos, cpuOf, carriers, endedIds);
    if (length == 0) {
      intervalCpu = ThreadCpu.NONE;
    } else {
      heldBackCpu.nanos().forEach((id, n) -> cpuOf.merge(id, n, Long::sum));
      carriers.addAll(heldBackCpu.carriers());
      carriers.retainAll(cpuOf.keySet());
      endedIds.addAll(heldBackCpu.ended());
      endedIds.removeAll(byId.keySet()); // an end kept for the next close: still alive here
      // Given back with its CPU time: that time covers both intervals, and so does its length.
      intervalCpu = new ThreadCpu(cpuOf, carriers, endedIds, length + heldBackCpu.lengthNanos());
    }
    startedAt.keySet().removeIf(id -> cpuNow.containsKey(id) || startedAt.get(id) < startNanos);
    lastCpu.clear();
    lastCpu.putAll(cpuNow);
    lastLockBlock.clear();
    lastLockBlock.putAll(lockBlocks);
    // What was counted of a stuck block waits for the block's report a while, not longer: a report
    // that never comes (a thread that ended, events off) must not cut a later one.
    long wait = Math.max(STUCK_REPORT_WAIT_NANOS, 3 * length);
    stuck
        .entrySet()
        .removeIf(
            e -> {
              e.getValue().removeIf(b -> endNanos - b.lastSeenAt > wait);
              return e.getValue().isEmpty() || !cpuNow.containsKey(e.getKey());
            });
    offCpu.clear();
    carriedIn.clear();
    for (Map.Entry<Long, long[]> e : carried.entrySet()) {
      if (cpuNow.containsKey(e.getKey())) {
        carriedIn.put(e.getKey(), e.getValue());
      }
    }
    carried.clear();
    lastSamples.clear();
    for (Map.Entry<Long, long[]> e : samples.entrySet()) {
      // The virtual threads' too (no live thread has their id): the carriers' split pools them.
      if (cpuNow.containsKey(e.getKey()) || e.getKey() == ThreadGroups.VIRTUAL_THREADS) {
        lastSamples.put(e.getKey(), e.getValue());
      }
    }
    samples.clear();
    managementCpu.clear();
    cpuWaits.closed(queues);
    pauses = 0;
    first = false;
    if (length > 0) {
      heldBack.forEach((name, g) -> groups.computeIfAbsent(name, GroupTotals::new).merge(g));
      heldBack = Map.of();
      heldBackCpu = ThreadCpu.NONE;
    }
    lastGroups = groups;
    return GroupTotals.encode(groups);
  }

  /**
   * The CPU time in this interval of a thread new since the last close whose clock reads {@code
   * clock}: all of it, unless this is the first close, when threads are older than the interval and
   * their past CPU is unknown (then at most the interval); or unless the clock holds more than the
   * interval, which a thread started in it cannot have spent: an OS thread the JVM took on again
   * under a new thread (the launcher's DestroyJavaVM after main returns), whose clock carries its
   * earlier life (then none).
   */
  private long newThreadCpu(long clock, long length) {
    return first ? Math.min(clock, length) : clock > length ? 0 : clock;
  }

  /** When thread {@code id} started, if in this interval and reported, else {@code start}. */
  private long startOf(long id, long start) {
    Long at = startedAt.get(id);
    return at == null ? start : Math.max(start, at);
  }

  /**
   * Counts the threads that ended before this close's look at the live threads ({@code live} by
   * id): from the interval's start, or their own, to their end, with the CPU time they had used by
   * then (also put into {@code cpuOf}, their ids into {@code endedIds}, and those of carriers of
   * virtual threads into {@code carriers}). An end reported by a thread the look still found alive
   * is kept for the next close.
   */
  private void closeEnded(
      Map<String, GroupTotals> groups,
      Map<Long, LiveThread> live,
      long startNanos,
      long endNanos,
      Map<Long, Long> cpuOf,
      Set<Long> carriers,
      Set<Long> endedIds) {
    long length = Math.max(0, endNanos - startNanos);
    Map<Long, StartsAndEnds.Ended> later = new HashMap<>();
    for (Map.Entry<Long, StartsAndEnds.Ended> x : ended.entrySet()) {
      long id = x.getKey();
      StartsAndEnds.Ended e = x.getValue();
      LiveThread alive = live.get(id);
      if (alive != null) {
        // Its end came after the look read its CPU time: what the look did not see yet counts
        // at the next close; nothing, if the look saw it all (it ended between the interval's
        // end and the look, and counted in full here).
        if (alive.cpuNanos() >= 0 && alive.cpuNanos() < e.cpuNanos()) {
          later.put(id, e);
        }
        continue;
      }
      if (length == 0) {
        continue; // a baseline: no interval to count it in
      }
      Long before = lastCpu.get(id);
      long cpu =
          Math.max(0, before != null ? e.cpuNanos() - before : newThreadCpu(e.cpuNanos(), length));
      cpuOf.put(id, cpu);
      endedIds.add(id);
      if (e.carrier()) {
        carriers.add(id);
      }
      long wall;
      if (before != null || startedAt.containsKey(id)) {
        long from = before != null ? startNanos : startOf(id, startNanos);
        wall = Math.min(length, Math.max(0, e.atNanos() - from));
      } else {
        // Started and ended unseen (a start the hook did not time, or over the bound): at least
        // what it is known to have spent, not the whole interval.
        wall = Math.min(length, cpu + sum(offCpu.getOrDefault(id, NO_CLASSES)));
      }
      wall = Math.max(wall, Math.min(cpu, length));
      if (wall == 0) {
        continue;
      }
      groups
          .computeIfAbsent(ThreadGroups.normalise(e.name()), GroupTotals::new)
          .add(id, wall, split(wall, cpu, id, length, e.carrier()), Math.min(cpu, wall));
      startedAt.remove(id);
    }
    ended.clear();
    ended.putAll(later);
  }

  /**
   * The lock block thread {@code t} is in, or null: none, stuck locks not counted, a lock class not
   * taken for a lock, or a holder that sits runnable without using CPU ({@code live} by id: in a
   * blocking native call, such as the JDK's accept, whose waiters queue on its lock while idle).
   */
  private LiveThread.Block lockBlock(LiveThread t, Map<Long, LiveThread> live, long length) {
    LiveThread.Block b = t.block();
    if (lockClasses == null
        || b == null
        || !(b.monitor() || (b.lockClass() != null && lockClasses.test(b.lockClass())))) {
      return null;
    }
    LiveThread owner = live.get(b.ownerId());
    Long ownerBefore = lastCpu.get(b.ownerId());
    if (owner != null && owner.runnable() && owner.cpuNanos() >= 0 && ownerBefore != null) {
      long used = owner.cpuNanos() - ownerBefore;
      if (used < Math.max(1_000_000, length / 100)) {
        return null; // the holder waits in native code: its waiters wait for that, not a lock
      }
    }
    return b;
  }

  /**
   * The classes of a thread that spent the interval {@code [start, end)} in one lock block, seen
   * first as {@code seen}: its off-CPU time is sync, counted for the block's report to subtract.
   * Reports and carried time of its own are from before the block (delivered late) and are dropped,
   * as time that did not fit.
   */
  private long[] stuckSplit(
      long wall, long cpuNanos, long threadId, Seen seen, long start, long end) {
    long[] c = new long[CLASSES];
    long cpu = Math.min(cpuNanos, wall);
    c[COMPUTE] = cpu;
    c[SYNC] = wall - cpu;
    List<Stuck> counted = stuck.computeIfAbsent(threadId, k -> new ArrayList<>(1));
    Stuck b = counted.isEmpty() ? null : counted.get(counted.size() - 1);
    if (b == null || !b.block.equals(seen.block()) || b.firstSeenAt != seen.at()) {
      b = new Stuck(seen.block(), seen.at(), (end - start) / 2);
      counted.add(b);
    }
    b.counted += c[SYNC];
    b.lastSeenAt = end;
    return c;
  }

  /**
   * The CPU samples {all, in management} of this and the previous interval of the carriers of
   * virtual threads (those alive, and those whose end is reported) and of the virtual threads, less
   * those inside measured thread starts: what splits a carrier's CPU time.
   */
  private long[] carrierSamples(List<LiveThread> live) {
    long[] pooled = new long[2];
    Set<Long> ids = new HashSet<>();
    for (LiveThread t : live) {
      if (t.carrier()) {
        ids.add(t.id());
      }
    }
    for (Map.Entry<Long, StartsAndEnds.Ended> e : ended.entrySet()) {
      if (e.getValue().carrier()) {
        ids.add(e.getKey());
      }
    }
    if (ids.isEmpty()) {
      return pooled;
    }
    ids.add(ThreadGroups.VIRTUAL_THREADS);
    for (long id : ids) {
      for (long[] n :
          List.of(samples.getOrDefault(id, NO_SAMPLES), lastSamples.getOrDefault(id, NO_SAMPLES))) {
        pooled[0] += n[0] - n[2];
        pooled[1] += n[1] - n[2];
      }
    }
    return pooled;
  }

  /**
   * The classes of one thread's {@code wall} nanoseconds of an interval {@code length} long, given
   * its CPU time in the interval; a {@code carrier} of virtual threads is split by {@link
   * #carrierSamples}.
   */
  private long[] split(long wall, long cpuNanos, long threadId, long length, boolean carrier) {
    long[] c = new long[CLASSES];
    long cpu = Math.min(cpuNanos, wall);
    long[] now = samples.getOrDefault(threadId, NO_SAMPLES);
    long[] before = lastSamples.getOrDefault(threadId, NO_SAMPLES);
    long all = now[0] + before[0];
    long inManagement = now[1] + before[1];
    if (carrier && carrierSamples[0] > 0) {
      // JFR gives a carrier's samples to the virtual thread mounted on it: its own few fall in its
      // scheduler, between two virtual threads. Its CPU time is mostly theirs, so it is split by
      // the carriers' and the virtual threads' samples together, each sample alike (its own
      // samples alone made nearly all of it thread_mgmt).
      all = carrierSamples[0] + now[2] + before[2];
      inManagement = carrierSamples[1] + now[2] + before[2];
    }
    long measured = Math.min(cpu, managementCpu.getOrDefault(threadId, 0L));
    if (measured > 0) { // samples inside the measured starts are that time: not counted twice
      long inStart = now[2] + before[2];
      all -= inStart;
      inManagement -= inStart;
    }
    long sampled = cpu - measured;
    long mgmt = measured + (all == 0 ? 0 : Math.round(sampled * ((double) inManagement / all)));
    c[COMPUTE] = cpu - mgmt;
    c[THREAD_MGMT] = mgmt;
    long[] reported = offCpu.get(threadId);
    long[] fresh = reported == null ? new long[CLASSES] : reported.clone();
    long room = wall - cpu;
    fresh[RUNTIME] += pauseOutsideReports(room, sum(fresh), wall, length);
    // Time carried from the interval before fills the room first; what of it does not fit is
    // dropped (see the class comment). Then this interval's reports take what room is left.
    long[] old = fit(carriedIn.getOrDefault(threadId, NO_CLASSES), room);
    long used = sum(old);
    long[] recent = fit(fresh, room - used);
    used += sum(recent);
    long excess = 0;
    long[] over = new long[CLASSES];
    for (int k = SYNC; k <= THREAD_MGMT; k++) {
      c[k] += old[k] + recent[k];
      over[k] = fresh[k] - recent[k];
      excess += over[k];
    }
    if (excess > 0) {
      // What did not fit is carried to the next interval, at most one interval's worth: an event
      // delivered late belongs to the time before, but a wait longer than that began before the
      // previous interval, which has been sent already.
      long keep = Math.min(excess, wall);
      long[] rest = new long[CLASSES];
      for (int k = SYNC; k <= THREAD_MGMT; k++) {
        rest[k] = keep == excess ? over[k] : scaled(over[k], keep, excess);
      }
      carried.put(threadId, rest);
    }
    c[IDLE] = room - used;
    return c;
  }

  /**
   * The part of this interval's pauses to count as a thread's runtime: a pause stops the thread
   * while it is off CPU ({@code room}); where it was then blocked in a reported event, the event's
   * duration holds the pause already. Not knowing when in the interval the pauses fell: the share
   * of them that fell in the thread's {@code wall} of the interval's {@code length} (a thread that
   * lived 30 ms of it gets 30 ms worth, not every pause of the interval), of that the share of the
   * off-CPU time no report covers (all of it for a thread with nothing reported, none for one
   * reported blocked all along), and never more than that uncovered time: a pause is not carried to
   * the next interval as runtime.
   */
  private long pauseOutsideReports(long room, long reported, long wall, long length) {
    if (pauses <= 0 || room <= 0) {
      return 0;
    }
    long own = wall >= length ? pauses : scaled(pauses, wall, length);
    long unreported = Math.max(0, room - reported);
    long share = unreported >= room ? own : scaled(own, unreported, room);
    return Math.min(share, unreported);
  }
}
