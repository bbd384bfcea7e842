package dev.profold.client.internal.record;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.internal.threads.Cell;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.LongIntMap;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything one thread records: its current context, its stack of open regions and scopes, its
 * caches of interned ids, and two {@link ThreadTable}s, one written by the thread while the other
 * is read by the flush.
 *
 * <p><b>Swapping tables without stalling the writer</b> (the idea of HdrHistogram's
 * WriterReaderPhaser, for a single writer): each write is a critical section that publishes {@code
 * startEpoch + 1} with a volatile store, reads the active table, writes, and publishes {@code
 * endEpoch} with a release store. The flush swaps the active table (volatile store), reads {@code
 * startEpoch} and waits until {@code endEpoch} reaches it; volatile accesses being sequentially
 * consistent, any write that could still see the old table has then finished. The writer never
 * waits and never allocates in steady state.
 *
 * <p>Everything but {@link #swapAndDrain()} and the identity fields is confined to the writing
 * thread: the owner, or, for the state of a {@link ForeignThread}, the one thread recording on the
 * owner's behalf.
 */
final class ThreadState {
  private static final VarHandle START;
  private static final VarHandle END;
  private static final VarHandle ATTENTION;
  private static final VarHandle OWNER;

  /**
   * The bit of {@link #attention} that says the context table asked for this thread's ids back
   * ({@link IdHolder}); the bits below it count frames closed elsewhere.
   */
  private static final int RELEASE_ASKED = 1 << 30;

  /**
   * The bit of {@link #attention} a pooled state ({@link ThreadStatePool}) keeps set for good, so
   * that its thread always attends: closes on other threads of a pooled state's frames are not
   * counted (the frame may be a stale one of an earlier loan), so its thread looks at its innermost
   * frame's flag instead.
   */
  private static final int POOLED = 1 << 29;

  /** Bits of {@link #attention} that count frames closed elsewhere. */
  private static final int CLOSED_ELSEWHERE = POOLED - 1;

  /** Open regions and scopes a thread holds at most; further ones are not opened, counted. */
  static final int MAX_DEPTH = 512;

  /** The handle of a region or scope that was not opened (too deep): closing it does nothing. */
  private static final Frame NOT_OPENED = new Frame(null, -1, false, 0);

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      START = l.findVarHandle(ThreadState.class, "startEpoch", long.class);
      END = l.findVarHandle(ThreadState.class, "endEpoch", long.class);
      ATTENTION = l.findVarHandle(ThreadState.class, "attention", int.class);
      OWNER = l.findVarHandle(ThreadState.class, "owner", Thread.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * The thread writing this state: fixed for a platform thread's state; for a pooled state ({@link
   * ThreadStatePool}) the thread it is lent to, null while it is idle in its pool; null for a
   * {@link ForeignThread}'s state. Written through {@link #OWNER} with volatile semantics and read
   * so by the collection; the owner's check on a close reads it plainly (a thread sees its own
   * write, and a handle passed to another thread is passed safely, as any object is).
   */
  Thread owner;

  /** The pool a pooled (virtual) thread's state goes back to; null for other states. */
  final ThreadStatePool pool;

  /**
   * Loans of this pooled state so far (0 for other states); frames are made afresh for each loan
   * and carry its number, so a handle of an earlier loan is told apart. Written by the owner before
   * it publishes itself in {@link #owner}; read by the owner, and by a close on another thread
   * after a volatile read of {@link #owner}.
   */
  private int loan;

  /**
   * Collections in a row that found this pooled state idle in its pool with nothing recorded;
   * written by the collection only.
   */
  int idleCollections;

  final long threadId;
  final String name;
  final String group;

  /**
   * The thread's name now, when another thread records for it ({@link ForeignThread#named}) and it
   * was renamed since this state was made; null otherwise. The collection groups by it.
   */
  volatile String renamed;

  final boolean initial;

  /**
   * The recorder, held weakly: this state is the value of the recorder's thread-local in its
   * thread, and a value that reaches its thread-local keeps it, so a stopped recorder (with its
   * contexts and dictionary) would stay in memory for as long as any thread that recorded with it
   * lives. Null once collected: only a handle closed after its runtime stopped, or a recording call
   * racing the runtime's end, finds it so, and such work records nothing (see {@link #recorder()}).
   */
  private final WeakReference<Recorder> recorder;

  private final ContextTable contexts;

  @SuppressWarnings("unused") // accessed through START
  private volatile long startEpoch;

  @SuppressWarnings("unused") // accessed through END
  private volatile long endEpoch;

  private volatile boolean retired; // a foreign state written for the last time

  /**
   * Non-zero when the owner has something to do before its next open or close: frames flagged by
   * other threads' closes, not yet handled (the count), and {@link #RELEASE_ASKED}; always, for a
   * pooled state ({@link #POOLED}). One volatile read on the hot path covers them.
   */
  @SuppressWarnings("unused") // written through ATTENTION
  private volatile int attention;

  /** The ids this thread's caches and frames hold; null for a {@link ForeignThread}'s state. */
  private final IdHolder holder;

  private volatile ThreadTable active;
  private ThreadTable standby; // the flush's

  private int current; // context id
  private int depth;
  private Frame[] frames;

  private static final int REGION_CACHE = 64;

  /**
   * Attribute keys whose value caches a thread keeps; further keys are looked up in the shared
   * table each time (their values are bounded by its limit, the keys themselves by this one).
   */
  static final int MAX_ATTRIBUTE_KEYS = 1024;

  // The caches of a thread that opens regions and scopes itself. A ForeignThread's state only
  // records (ForeignThread#record): it gets none of them (empty arrays), since the agent makes one
  // for every thread that ends while it listens, and a program that starts and ends thousands of
  // threads a second would otherwise hold some 10 KB per ended thread until the next flush.
  private final String[] cachedName;
  private final Kind[] cachedKind;
  private final int[] cachedParent;
  private final int[] cachedChild;
  private LongIntMap childCache = new LongIntMap(4);

  /** Set by {@link #childOf}: whether the child it returned may be cached. Owner thread only. */
  private boolean childCacheable;

  private final Map<Kind, Map<String, Integer>> regionEvents = new java.util.EnumMap<>(Kind.class);
  private final Map<String, AttributeCache> attributeEvents = new HashMap<>();

  ThreadState(Thread owner, Recorder recorder, ContextTable contexts, int maxCells) {
    this(
        owner,
        null,
        owner.getId(),
        owner.getName(),
        ThreadGroups.normalise(owner.getName()),
        ThreadGroups.isInitial(owner),
        recorder,
        contexts,
        maxCells);
  }

  /**
   * A state of {@code pool}, idle until {@link #attach}ed to a thread, named {@code name} and
   * identified by {@code id} (not a thread's id: negative, unique per recorder).
   */
  ThreadState(
      ThreadStatePool pool,
      String name,
      long id,
      Recorder recorder,
      ContextTable contexts,
      int maxCells) {
    this(null, pool, id, name, pool.group, false, recorder, contexts, maxCells);
  }

  /**
   * The state of a thread that another thread records for ({@link ForeignThread}): written by that
   * one other thread only, alive until {@link #retire()}.
   */
  ThreadState(
      long threadId,
      String name,
      boolean initial,
      Recorder recorder,
      ContextTable contexts,
      int maxCells) {
    this(
        null,
        null,
        threadId,
        name,
        ThreadGroups.normalise(name),
        initial,
        recorder,
        contexts,
        maxCells);
  }

  @SuppressWarnings("TooManyParameters") // one constructor behind the three kinds of state
  private ThreadState(
      Thread owner,
      ThreadStatePool pool,
      long threadId,
      String name,
      String group,
      boolean initial,
      Recorder recorder,
      ContextTable contexts,
      int maxCells) {
    this.owner = owner;
    this.pool = pool;
    this.threadId = threadId;
    this.name = name;
    this.group = group;
    this.initial = initial;
    this.recorder = new WeakReference<>(recorder);
    this.contexts = contexts;
    this.active = new ThreadTable(maxCells, recorder.timeMetric());
    this.standby = new ThreadTable(maxCells, recorder.timeMetric());
    int caches = owner == null && pool == null ? 0 : REGION_CACHE;
    this.cachedName = new String[caches];
    this.cachedKind = new Kind[caches];
    this.cachedParent = new int[caches];
    this.cachedChild = new int[caches];
    this.frames = new Frame[caches == 0 ? 0 : 16];
    this.holder =
        owner == null && pool == null
            ? null
            : contexts.holder(() -> ATTENTION.getAndBitwiseOr(this, RELEASE_ASKED));
    if (pool != null) { // or'ed: the holder may have asked for a release already
      ATTENTION.getAndBitwiseOr(this, POOLED);
    }
  }

  // ---- recording (owner thread) ----

  @SuppressWarnings("ReferenceEquality") // identity is the point: a cheap probe, equals() below
  Region enterRegion(String regionName, Kind kind) {
    if (attention != 0) {
      attend();
    }
    if (depth == MAX_DEPTH) {
      return tooDeep();
    }
    // One direct-mapped probe replaces the name -> event -> child look-ups for a region
    // entered again from the same context with the same name instance (the usual case: a
    // string constant in a loop).
    int h = (regionName.hashCode() * 31 + current) & (REGION_CACHE - 1);
    if (cachedName[h] == regionName && cachedKind[h] == kind && cachedParent[h] == current) {
      return pushChild(cachedChild[h], true);
    }
    return pushChild(regionChildMiss(h, regionName, kind), true);
  }

  /**
   * The context a region {@code regionName} of {@code kind} opened now would record into, without
   * opening it (for an asynchronous region, which is not on this thread's stack). The id is pinned
   * by this thread's holder until the thread next opens or closes something.
   */
  @SuppressWarnings("ReferenceEquality") // as in enterRegion
  int regionContext(String regionName, Kind kind) {
    if (attention != 0) {
      attend();
    }
    int h = (regionName.hashCode() * 31 + current) & (REGION_CACHE - 1);
    if (cachedName[h] == regionName && cachedKind[h] == kind && cachedParent[h] == current) {
      return cachedChild[h];
    }
    return regionChildMiss(h, regionName, kind);
  }

  /**
   * The child of the current context by entering region {@code regionName} of {@code kind}, looked
   * up in the thread's caches or the shared table, and cached in probe slot {@code h} when it may
   * be.
   */
  private int regionChildMiss(int h, String regionName, Kind kind) {
    Map<String, Integer> cache = regionEvents.computeIfAbsent(kind, k -> new HashMap<>());
    Integer ev = cache.get(regionName);
    if (ev == null) {
      ev = contexts.regionEvent(regionName, kind, holder);
      if (!ContextTable.isOverflowEvent(ev)) { // else the cache would grow with the names kept out
        cache.put(regionName, ev);
      }
    }
    int child = childOf(ev);
    if (childCacheable) { // not an overflow child: it would stay there once ageing made room
      cachedName[h] = regionName;
      cachedKind[h] = kind;
      cachedParent[h] = current;
      cachedChild[h] = child;
    }
    return child;
  }

  /**
   * Makes {@code f}'s context current until the returned scope closes (a scope frame that records
   * nothing itself), or returns null when {@code f} has ended. The context is pinned for this
   * thread's holder only after any release asked of it was answered: a release between the pin and
   * the push would give the pin back while the context is not yet a frame's, and so not kept.
   */
  Scope enterAsync(AsyncFrame f) {
    if (attention != 0) {
      attend();
    }
    if (depth == MAX_DEPTH) {
      return tooDeep();
    }
    if (!contexts.pinUnlessEnded(holder, f)) {
      return null;
    }
    return pushChild(f.context, false);
  }

  Scope enterScope(String key, ValueType type, String text, long bits) {
    if (attention != 0) {
      attend();
    }
    if (depth == MAX_DEPTH) {
      return tooDeep();
    }
    AttributeCache cache = attributeEvents.get(key);
    if (cache == null) {
      Recorder r = recorder();
      if (r == null || !r.admitKey(key, type)) {
        return pushChild(childOf(ContextTable.LEFT_OUT), false); // the enclosing context
      }
      r.checkAttributeType(key, type);
      cache = new AttributeCache(type, r.attributeName(key));
      if (attributeEvents.size() < MAX_ATTRIBUTE_KEYS) {
        attributeEvents.put(key, cache);
      }
    } else if (cache.type != type) {
      // The key with its new type is a new attribute definition: within the budget or left out.
      Recorder r = recorder();
      if (r == null || !r.admitKey(key, type)) {
        return pushChild(childOf(ContextTable.LEFT_OUT), false); // the cache keeps the old type
      }
      if (r.misuseToLog(Misuse.ATTRIBUTE_TYPE_CHANGE, "")) {
        Recorder.logMisuse("attribute \"" + key + "\" was " + cache.type + " and is now " + type);
      }
      cache = new AttributeCache(type, cache.name);
      attributeEvents.put(key, cache);
    }
    int ev = cache.event(contexts, holder, text, bits);
    return pushChild(childOf(ev), false);
  }

  /**
   * The child of the current context by {@code event}; sets {@link #childCacheable} to whether it
   * may be cached (not one the context limit gave: an overflow context, or the current context for
   * an attribute left out).
   */
  private int childOf(int event) {
    if (event == ContextTable.LEFT_OUT) {
      childCacheable = false;
      return current;
    }
    long key = ((long) current << 32) | event;
    int child = childCache.get(key);
    if (child == LongIntMap.MISSING) {
      child = contexts.child(current, event, holder);
      childCacheable = !contexts.isOverflow(current, child);
      if (childCacheable) {
        childCache.put(key, child);
      }
    } else {
      childCacheable = true; // only such children are in the cache
    }
    return child;
  }

  private Frame tooDeep() {
    misuse(
        Misuse.TOO_DEEP,
        "a thread held "
            + MAX_DEPTH
            + " open regions and scopes; further ones are not opened (is a region or scope"
            + " never closed, for example on a pool thread?)");
    return NOT_OPENED;
  }

  private Frame pushChild(int child, boolean region) {
    if (depth == frames.length) {
      frames = Arrays.copyOf(frames, Math.max(16, depth * 2));
    }
    Frame f = frames[depth];
    if (f == null) {
      f = new Frame(this, depth, pool != null, loan);
      frames[depth] = f;
    }
    f.parent = current;
    f.region = region;
    depth++;
    current = child;
    f.start = region ? System.nanoTime() : 0;
    return f;
  }

  /** Closes {@code frame} (one of this state's), handling misuse; see {@link Frame}. */
  void close(Frame frame) {
    Thread o = owner;
    if (Thread.currentThread() != o) {
      if (o == null && pool != null) { // back in its pool: every frame of it was closed
        misuse(Misuse.CLOSED_TWICE, "a region or scope was closed twice");
        return;
      }
      closeElsewhere(frame);
      return;
    }
    if (attention != 0) {
      attend();
    }
    int at = frame.depth;
    if (depth <= at) {
      misuse(Misuse.CLOSED_TWICE, "a region or scope was closed twice");
      return;
    }
    if (depth == at + 1) { // the usual case: the innermost frame
      pop(frame, frame.region ? System.nanoTime() : 0);
      return;
    }
    long now = System.nanoTime();
    misuse(
        Misuse.UNBALANCED,
        "a region or scope was closed while regions or scopes opened inside it were still open;"
            + " they were closed with it");
    while (depth > at) {
      pop(frames[depth - 1], now);
    }
  }

  /**
   * A close on another thread than the owner: the frame is flagged with the time, and the owner
   * closes it (recording that time) the next time it opens or closes a region or scope while the
   * frame is its innermost open one. So a region handed to another thread to close (an asynchronous
   * completion) gets its real duration and does not stay open on a pool thread.
   */
  /**
   * Runs in a close elsewhere between its two steps, counting and flagging (tests pause a closer
   * there to check that the owner never sees a flag that is not counted); null otherwise.
   */
  static volatile Runnable betweenCountAndFlag;

  private void closeElsewhere(Frame frame) {
    if (pool != null) {
      // A frame of an earlier loan: its loan ended with every frame closed, so this is a second
      // close. The owner's write of loan precedes its write of owner, read here first; a loan
      // that begins after this read is at worst missed, and the close then counted as below.
      if (OWNER.getVolatile(this) == null || frame.loan != loan) {
        misuse(Misuse.CLOSED_TWICE, "a region or scope was closed twice");
        return;
      }
      // Not counted in attention: the frame may still be one of an earlier loan (a loan begun
      // since the check above), which no thread looks at any more, so a count for it would never
      // be taken back. The owner looks at its innermost frame's flag at every open and close
      // instead (POOLED).
      frame.flagClosedElsewhere(System.nanoTime());
      misuse(
          Misuse.CLOSED_ON_OTHER_THREAD,
          "a region or scope of a virtual thread was closed on another thread; it is closed with"
              + " that time when its own thread next opens or closes one");
      return;
    }
    // Counted before the flag is visible, so the owner, which uncounts each flag it takes, never
    // takes the count below zero: a borrow would reach RELEASE_ASKED and, once a release cleared
    // it, leave the word non-zero for good.
    ATTENTION.getAndAdd(this, 1);
    Runnable pause = betweenCountAndFlag;
    if (pause != null) {
      pause.run();
    }
    if (!frame.flagClosedElsewhere(System.nanoTime())) {
      ATTENTION.getAndAdd(this, -1); // a close before this one flagged the frame and counted it
    }
    if (misuseToLog(Misuse.CLOSED_ON_OTHER_THREAD)) {
      Recorder.logMisuse(
          "a region or scope opened on thread \""
              + name
              + "\" was closed on \""
              + Thread.currentThread().getName()
              + "\"; it is closed with that time when its own thread next opens or closes one");
    }
  }

  /** Handles what {@link #attention} says, on the owner thread. */
  private void attend() {
    int a = attention;
    if ((a & POOLED) != 0) {
      unwindClosedElsewhere(false); // not counted: look at the innermost frame every time
    } else if ((a & CLOSED_ELSEWHERE) != 0) {
      unwindClosedElsewhere(true);
    }
    if ((a & RELEASE_ASKED) != 0) {
      releaseIds();
    }
  }

  /**
   * Empties this thread's caches of interned ids and gives them back to the context table, keeping
   * the contexts its open regions and scopes return to (see {@link IdHolder}).
   */
  private void releaseIds() {
    ATTENTION.getAndBitwiseAnd(this, ~RELEASE_ASKED); // a request after this one asks again
    holder.clearRequest();
    Arrays.fill(cachedName, null);
    childCache = new LongIntMap(4);
    regionEvents.values().forEach(Map::clear);
    attributeEvents.values().forEach(AttributeCache::clear);
    int[] kept = new int[depth + 1];
    kept[0] = current;
    for (int i = 0; i < depth; i++) {
      kept[i + 1] = frames[i].parent;
    }
    contexts.release(holder, kept);
  }

  /**
   * Pops the innermost frames that other threads closed, with their close times, and clears the
   * flags other threads left on frames that are not open (stale handles). A close timed before the
   * frame's region started was meant for an earlier region at that depth (a stale handle racing the
   * frame's reuse): the flag is cleared and the region stays open. A scope has no start time to
   * tell such a flag apart, so the flags on frames not open go before the frames are reused.
   *
   * @param counted whether closes elsewhere were counted in {@link #attention} (platform threads;
   *     each flag taken is then uncounted), or not (a pooled state's: see {@link #POOLED})
   */
  private void unwindClosedElsewhere(boolean counted) {
    while (depth > 0 && frames[depth - 1].closedElsewhere()) {
      Frame f = frames[depth - 1];
      long at = f.takeClosedElsewhere();
      if (counted) {
        ATTENTION.getAndAdd(this, -1);
      }
      if (f.region && at - f.start < 0) {
        break;
      }
      pop(f, f.region ? at : 0);
    }
    for (int i = depth; i < frames.length && frames[i] != null; i++) {
      if (frames[i].closedElsewhere()) {
        frames[i].takeClosedElsewhere();
        if (counted) {
          ATTENTION.getAndAdd(this, -1);
        }
      }
    }
  }

  /**
   * Closes the innermost frame {@code f}, recording its region's time as of {@code now}. The stack
   * and the context are restored before the write, so that an Error inside it (an {@link
   * OutOfMemoryError} making a new cell) cannot leave the thread in the closed region's context.
   */
  private void pop(Frame f, long now) {
    int context = current;
    depth = f.depth;
    current = f.parent;
    if (f.region) {
      long e = (long) START.getOpaque(this) + 1;
      START.setVolatile(this, e);
      try {
        active.recordTime(context, now - f.start);
      } finally { // even an Error inside the write must not leave the flush waiting
        END.setRelease(this, e);
      }
    }
  }

  /** Records {@code value} of {@code metric} in the current context. */
  void recordHere(int metric, double value) {
    record(current, metric, value);
  }

  /**
   * {@link #close} for a frame of a pooled state: a handle of an earlier loan counts as closed
   * twice (on the owner thread; elsewhere it flags a frame nobody looks at any more), and the state
   * goes back to its pool when the close left nothing open.
   */
  void closePooled(Frame frame) {
    if (Thread.currentThread() == owner && frame.loan != loan) {
      misuse(Misuse.CLOSED_TWICE, "a region or scope was closed twice");
      return;
    }
    close(frame);
    giveBackIfDone();
  }

  /**
   * Gives this pooled state back to its pool when its thread, the calling thread, holds nothing
   * open in it any more (called after a close and after a measurement).
   */
  void giveBackIfDone() {
    Recorder r;
    if (depth == 0 && Thread.currentThread() == owner && (r = recorder()) != null) {
      r.giveBack(this);
    }
  }

  /** Records {@code value} of {@code metric} in {@code context}; by the single writer only. */
  void record(int context, int metric, double value) {
    long e = (long) START.getOpaque(this) + 1;
    START.setVolatile(this, e);
    try {
      active.record(context, metric, value);
    } finally {
      END.setRelease(this, e);
    }
  }

  /**
   * Marks a foreign state as written for the last time; the writer calls it after its last write.
   * Also retires a pooled state taken out of its pool for good ({@link
   * ThreadStatePool#retireIdle}).
   */
  void retire() {
    retired = true;
  }

  /**
   * For the collection, once this state's thread has ended (it writes nothing more; its last writes
   * are visible, since the collection saw it end): closes the innermost frames that other threads
   * closed, with their close times, as the thread would have at its next open or close (a region
   * handed to another thread to close, after which its own thread ended), and counts the regions
   * still open, which nobody can close any more ({@link Misuse#LEFT_OPEN}). A close elsewhere that
   * races this may find its frame gone: it is then counted as left open.
   */
  void finishAfterThreadEnded() {
    if (depth == 0) {
      return;
    }
    unwindClosedElsewhere(pool == null);
    int open = 0;
    for (int i = 0; i < depth; i++) {
      if (frames[i].region) {
        open++;
      }
    }
    for (int i = 0; i < open; i++) {
      if (misuseToLog(Misuse.LEFT_OPEN)) {
        Recorder.logMisuse(
            "thread \""
                + name
                + "\" ended with a region open that no thread closed; its time is not recorded"
                + " (a region opened outside try-with-resources, or handed to code that never"
                + " closed it?)");
      }
    }
  }

  /** True while the state may still be written: its thread is alive and it was not retired. */
  boolean alive() {
    if (pool != null) {
      Thread o = (Thread) OWNER.getVolatile(this);
      // A thread that ended while holding the state (a region left open) never gives it back. Read
      // again once the end is seen: a state given back meanwhile (owner cleared first) is not it.
      return !retired && (o == null || o.isAlive() || OWNER.getVolatile(this) != o);
    }
    return owner != null ? owner.isAlive() : !retired;
  }

  /** Lends this pooled state to {@code thread}, the calling thread; see {@link ThreadStatePool}. */
  void attach(Thread thread) {
    loan++;
    OWNER.setVolatile(this, thread);
  }

  /** True while this pooled state is lent to a thread (any thread may ask). */
  boolean lent() {
    return OWNER.getVolatile(this) != null;
  }

  /** Takes this pooled state back from its thread, which no longer writes it. */
  void detach() {
    Arrays.fill(frames, null); // the next loan makes its own, so old handles stay apart
    OWNER.setVolatile(this, null);
  }

  /** The recorder, or null once it was collected (see {@link #recorder}). */
  private Recorder recorder() {
    return recorder.get();
  }

  private void misuse(Misuse kind, String message) {
    Recorder r = recorder();
    if (r != null) {
      r.misuse(kind, message);
    }
  }

  private boolean misuseToLog(Misuse kind) {
    Recorder r = recorder();
    return r != null && r.misuseToLog(kind, "");
  }

  // ---- flush (flush thread) ----

  /**
   * Swaps the tables and returns the cells recorded since the last call. Waits (spinning, then
   * parking briefly) only while the owning thread is inside one write.
   */
  synchronized List<Cell> swapAndDrain() {
    ThreadTable full = active;
    active = standby;
    long started = (long) START.getVolatile(this);
    for (int spins = 0; (long) END.getVolatile(this) < started; spins++) {
      if (!alive() && spins >= 100) {
        break; // the writer is gone mid-write (no write section can end without END)
      }
      if (spins < 100) {
        Thread.onSpinWait();
      } else {
        java.util.concurrent.locks.LockSupport.parkNanos(10_000);
      }
    }
    standby = full;
    Recorder r = recorder();
    if (r != null) {
      r.dropped(full.takeDropped());
    }
    try {
      return full.drain();
    } catch (RuntimeException | Error e) {
      // The drain copies before it empties: the values are all still in the table. Kept there,
      // they could outlive their contexts' ids (aged out once a collection went by without
      // them), so they are counted as lost and the table emptied, ready for the next interval.
      long lost = full.discard();
      if (r != null) {
        r.eventsLost(lost);
      }
      throw e;
    }
  }

  /** Entries of this thread's look-up caches (for tests of their bounds). */
  int cachedEntries() {
    int n = childCache.size();
    for (Map<String, Integer> m : regionEvents.values()) {
      n += m.size();
    }
    for (AttributeCache c : attributeEvents.values()) {
      n += 1 + c.strings.size() + c.numbers.size();
    }
    return n;
  }

  /** The ids this thread holds, or null for a {@link ForeignThread}'s state. */
  IdHolder holder() {
    return holder;
  }

  /** Cells held by both tables (for the client's memory estimate). */
  int cells() {
    return active.size() + standby.size();
  }

  /** Per attribute key, the owner thread's cache of value → event id. */
  private static final class AttributeCache {
    final ValueType type;
    final String name; // the key as sent: see Recorder.attributeName
    private final Map<String, Integer> strings = new HashMap<>();
    private LongIntMap numbers = new LongIntMap();

    AttributeCache(ValueType type, String name) {
      this.type = type;
      this.name = name;
    }

    /** Forgets the cached event ids; the type stays, for the type-change check. */
    void clear() {
      strings.clear();
      numbers = new LongIntMap();
    }

    int event(ContextTable contexts, IdHolder holder, String text, long bits) {
      if (type == ValueType.VALUE_TYPE_STRING) {
        Integer ev = strings.get(text);
        if (ev == null) {
          ev =
              contexts.attributeEvent(
                  new ContextTable.AttributeSetting(name, type, text, 0), holder);
          if (ev != ContextTable.LEFT_OUT) { // values left out are not cached, so not kept
            strings.put(text, ev);
          }
        }
        return ev;
      }
      int ev = numbers.get(bits);
      if (ev == LongIntMap.MISSING) {
        ev =
            contexts.attributeEvent(
                new ContextTable.AttributeSetting(name, type, "", bits), holder);
        if (ev != ContextTable.LEFT_OUT) {
          numbers.put(bits, ev);
        }
      }
      return ev;
    }
  }
}
