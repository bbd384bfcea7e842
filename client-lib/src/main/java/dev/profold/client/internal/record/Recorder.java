package dev.profold.client.internal.record;

import dev.profold.client.AsyncRegion;
import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ContextView;
import dev.profold.client.internal.threads.EntryEncoder;
import dev.profold.client.internal.threads.ThreadAggregators;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.ValueType;
import java.lang.System.Logger.Level;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * The recording side of one started Profold: per-thread state, interned contexts and metrics, and
 * {@link #collect()}, which swaps every thread's table and returns what was recorded since the
 * previous call.
 *
 * <p>Thread-safe. Recording methods run on application threads and never throw, block or (in steady
 * state) allocate.
 */
public final class Recorder {
  private static final System.Logger LOG = System.getLogger("dev.profold.client");
  private static final int MAX_REGION_NAME = 1024;
  private static final int MAX_ATTRIBUTE_VALUE = 1024;

  /** Distinct measurements (name and unit) at most; values of further ones are dropped, counted. */
  public static final int MAX_MEASUREMENTS = 1024;

  /** A unit the collector takes: a base-unit word in lower case, or empty. */
  private static final java.util.regex.Pattern UNIT =
      java.util.regex.Pattern.compile("[a-z_]{0,32}");

  /**
   * The id {@link #metric} gives beyond {@link #MAX_MEASUREMENTS}: recording it drops the value.
   */
  public static final int NO_METRIC = -1;

  /**
   * The metric CPU samples are recorded under, on behalf of the sampled thread (the agent's JFR
   * consumer), each value the sampler's nominal period in seconds. Not an encoder id (those count
   * up from 1) and never sent: {@link #collect(ThreadCpu)} turns these cells into {@code time}
   * cells valued by the threads' measured CPU time ({@link SampledCpu}).
   */
  public static final int CPU_SAMPLES = Integer.MAX_VALUE;

  private final DeltaEncoder encoder;
  private final ContextTable contexts;
  private final int maxCellsPerThread;
  private final int timeMetric;
  private final SampledCpu sampledCpu;
  private final ConcurrentHashMap<String, Integer> metrics = new ConcurrentHashMap<>();
  private final Object metricsLock = new Object();
  private final ConcurrentLinkedQueue<ThreadState> threads = new ConcurrentLinkedQueue<>();
  private final ThreadLocal<ThreadState> state = ThreadLocal.withInitial(this::register);
  private volatile Runnable newThread = () -> {};
  private final Map<Misuse, LongAdder> misuse = new EnumMap<>(Misuse.class);
  private final Map<Misuse, Set<String>> logged = new EnumMap<>(Misuse.class); // topics logged
  private final Map<Misuse, Long> reportedMisuse = new EnumMap<>(Misuse.class); // takeMisuseCounts
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong collections = new AtomicLong();

  /**
   * Groups of pooled threads with a pool of their own; further groups share the {@code virtual}
   * one.
   */
  static final int MAX_POOLS = 64;

  /** Whether a thread's state is pooled ({@link ThreadStatePool}): virtual threads. */
  private final Predicate<Thread> pooled;

  private final ConcurrentHashMap<String, ThreadStatePool> pools = new ConcurrentHashMap<>();
  private final ThreadStatePool virtualPool;
  private final AtomicLong pooledIds = new AtomicLong(-1); // -2, -3, ...: no thread's id

  /**
   * A recorder interning into {@code encoder}'s dictionary; each thread keeps at most {@code
   * maxCellsPerThread} (context, metric) cells; contexts are not limited.
   */
  public Recorder(DeltaEncoder encoder, int maxCellsPerThread) {
    this(encoder, maxCellsPerThread, Integer.MAX_VALUE);
  }

  /**
   * A recorder interning into {@code encoder}'s dictionary; each thread keeps at most {@code
   * maxCellsPerThread} (context, metric) cells, and the process at most {@code maxContexts}
   * contexts (beyond them region paths and attribute values are left out, counted; see {@link
   * ContextTable}).
   */
  public Recorder(DeltaEncoder encoder, int maxCellsPerThread, int maxContexts) {
    this(encoder, maxCellsPerThread, maxContexts, ThreadGroups::isVirtual);
  }

  /**
   * Runs {@code action} on each platform thread as it records for the first time, before its state
   * is made (the runtime learns the thread's OS thread id there). It must not throw: it runs inside
   * the application's first call.
   */
  public void onNewThread(Runnable action) {
    newThread = action;
  }

  /**
   * As {@link #Recorder(DeltaEncoder, int, int)}, with the threads whose states are pooled (virtual
   * threads in production; any threads in tests, so that pooling is tested on Java 17).
   */
  Recorder(DeltaEncoder encoder, int maxCellsPerThread, int maxContexts, Predicate<Thread> pooled) {
    this.pooled = pooled;
    this.virtualPool = new ThreadStatePool(ThreadGroups.VIRTUAL);
    pools.put(ThreadGroups.VIRTUAL, virtualPool);
    this.encoder = encoder;
    // The table's callbacks hold this recorder weakly: the table is reachable from every thread's
    // state, which must not keep a stopped recorder (see ThreadState#recorder).
    WeakReference<Recorder> self = new WeakReference<>(this);
    this.contexts =
        new ContextTable(
            encoder,
            maxContexts,
            () -> {
              Recorder r = self.get();
              if (r != null && r.misuseToLog(Misuse.CONTEXTS_FULL, "")) {
                logMisuse(
                    "more than "
                        + maxContexts
                        + " distinct contexts (region paths with their attribute values); new"
                        + " regions are recorded under "
                        + ContextTable.OVERFLOW
                        + " and new attribute values are left out. Use fewer distinct names and"
                        + " values (no ids in region names or attributes), or raise"
                        + " PROFOLD_MAX_CONTEXTS");
              }
            });
    contexts.onKeysFull(
        key -> {
          Recorder r = self.get();
          if (r != null && r.misuseToLog(Misuse.KEYS_FULL, "context-keys")) {
            logMisuse(
                "more than "
                    + ContextTable.MAX_CONTEXT_KEYS
                    + " distinct attribute keys in force at once (\""
                    + key
                    + "\" here): an entry's key holds at most 64 values, so the scope records"
                    + " into its enclosing context. Nest fewer scopes of distinct keys");
          }
        });
    this.maxCellsPerThread = maxCellsPerThread;
    this.timeMetric = encoder.measurement(TIME, ValueType.VALUE_TYPE_DOUBLE, "seconds");
    this.sampledCpu = new SampledCpu(timeMetric);
    for (Misuse m : Misuse.values()) {
      misuse.put(m, new LongAdder());
      logged.put(m, ConcurrentHashMap.newKeySet());
    }
  }

  private ThreadState register() {
    Thread t = Thread.currentThread();
    if (pooled.test(t)) {
      return take(t);
    }
    newThread.run();
    ThreadState s = new ThreadState(t, this, contexts, maxCellsPerThread);
    threads.add(s);
    return s;
  }

  /** A state of {@code t}'s pool, idle or new, lent to {@code t} (the calling thread). */
  private ThreadState take(Thread t) {
    ThreadStatePool pool = poolOf(t.getName());
    ThreadState s = pool.poll();
    if (s == null) {
      s =
          new ThreadState(
              pool,
              pool.nextName(),
              pooledIds.decrementAndGet(),
              this,
              contexts,
              maxCellsPerThread);
      threads.add(s);
    }
    s.attach(t);
    return s;
  }

  private ThreadStatePool poolOf(String threadName) {
    if (threadName.isEmpty()) {
      return virtualPool; // the usual virtual thread: unnamed
    }
    String group = ThreadGroups.pooledGroup(threadName);
    ThreadStatePool pool = pools.get(group);
    if (pool != null) {
      return pool;
    }
    synchronized (pools) { // so the bound is exact
      return pools.size() < MAX_POOLS
          ? pools.computeIfAbsent(group, ThreadStatePool::new)
          : pools.getOrDefault(group, virtualPool);
    }
  }

  /**
   * {@code s}, a pooled state whose last open region or scope just closed on its thread (the
   * calling thread), goes back to its pool; the thread takes one again when it next records.
   */
  void giveBack(ThreadState s) {
    state.remove();
    s.detach();
    s.pool.giveBack(s);
  }

  /**
   * A new table recording on behalf of thread {@code threadId} (named {@code threadName}; {@code
   * initial} for the JVM's initial thread), written by the caller; see {@link ForeignThread}. Call
   * it once per thread and writer, and keep the result.
   */
  public ForeignThread foreign(long threadId, String threadName, boolean initial) {
    ThreadState s =
        new ThreadState(threadId, threadName, initial, this, contexts, maxCellsPerThread);
    threads.add(s);
    return new ForeignThread(s);
  }

  /**
   * A new holder of context ids, for a caller of {@link #regionContext} and {@link
   * #attributeContext} that caches what they return. The ids it is given stay valid until it calls
   * {@link #release}, which it should do, after emptying its caches, soon after {@link
   * IdHolder#requested()} turns true; {@link #forget} it when done.
   */
  public IdHolder holder() {
    return contexts.holder(() -> {});
  }

  /**
   * {@code holder} has emptied its caches: the ids it was given may be aged out once the next
   * collection has taken what it recorded with them. Call it between two of the holder's writes.
   */
  public void release(IdHolder holder) {
    holder.clearRequest();
    contexts.release(holder, new int[0]);
  }

  /** {@code holder} will not record again: its ids are released and it is forgotten. */
  public void forget(IdHolder holder) {
    holder.clearRequest();
    contexts.forget(holder);
  }

  /**
   * The context reached from {@code parent} (0: the root) by entering region {@code name} of {@code
   * kind}: the context a region of that name opened there records into. Interns; the id is valid
   * until {@code holder} {@linkplain #release releases} it; callers on a hot path cache it.
   */
  public int regionContext(IdHolder holder, int parent, String name, Kind kind) {
    return contexts.child(parent, contexts.regionEvent(name, kind, holder), holder);
  }

  /**
   * The context reached from {@code parent} (0: the root) by scoping string attribute {@code key}
   * (a valid name) to {@code value}. Interns; the id is valid until {@code holder} {@linkplain
   * #release releases} it; callers on a hot path cache it.
   */
  public int attributeContext(IdHolder holder, int parent, String key, String value) {
    return contexts.child(
        parent,
        contexts.attributeEvent(
            new ContextTable.AttributeSetting(
                key(key), ValueType.VALUE_TYPE_STRING, String.valueOf(value), 0),
            holder),
        holder);
  }

  /** Opens a region on the calling thread. */
  public Region region(String name, Kind kind) {
    // One unsigned comparison checks 1..MAX_REGION_NAME: an empty name's length - 1 is huge.
    if (name == null
        || kind == null
        || Integer.compareUnsigned(name.length() - 1, MAX_REGION_NAME) >= 0) {
      name = badRegion(name, kind);
      kind = kind == null ? Kind.COMPUTE : kind;
    }
    return state.get().enterRegion(name, kind);
  }

  /** The id of {@link #ASYNC_DURATION}, defined at the first asynchronous region. */
  private volatile int asyncMetric = NO_METRIC;

  /** Set once the runtime stopped: a close then records nothing (see {@link #stop}). */
  private volatile boolean stopped;

  /**
   * Opens an asynchronous region (see {@link AsyncRegion}) in the calling thread's current context.
   * Allocates its handle; the context stays pinned against ageing until the handle is closed.
   */
  public AsyncRegion asyncRegion(String name, Kind kind) {
    if (name == null
        || kind == null
        || Integer.compareUnsigned(name.length() - 1, MAX_REGION_NAME) >= 0) {
      name = badRegion(name, kind);
      kind = kind == null ? Kind.COMPUTE : kind;
    }
    int metric = asyncMetric;
    if (metric == NO_METRIC) {
      metric = ownMetric(ASYNC_DURATION, "seconds");
      contexts.notVisiting(metric); // before any value of it can be collected
      asyncMetric = metric;
    }
    ThreadState s = state.get();
    int context = s.regionContext(name, kind);
    contexts.asyncPins.pin(context); // while the thread's own holder still pins it
    AsyncFrame f = new AsyncFrame(this, context, metric, System.nanoTime());
    if (s.pool != null) {
      s.giveBackIfDone(); // taken for this open alone
    }
    return f;
  }

  /**
   * Closes {@code f} on the calling thread: records its duration in that thread's table, then lets
   * its context age again; a second close is counted.
   */
  void closeAsync(AsyncFrame f) {
    long now = System.nanoTime();
    if (stopped) {
      return; // nothing collects any more; a state made now would only keep this recorder alive
    }
    if (!f.markClosed()) {
      misuse(
          Misuse.CLOSED_TWICE,
          "async",
          "an asynchronous region was closed twice; the first close was recorded");
      return;
    }
    ThreadState s = state.get();
    // Clocks of two CPUs may differ slightly: a negative duration is recorded as 0.
    s.record(f.context, f.metric, Math.max(0, now - f.start) * 1e-9);
    contexts.asyncPins.unpin(f.context); // after the write: see AsyncPins
    if (s.pool != null) {
      s.giveBackIfDone();
    }
  }

  /**
   * Makes {@code f}'s context current on the calling thread until the returned scope closes (see
   * {@link AsyncRegion#enter}); after {@code f} ended, counts the misuse and returns a scope that
   * does nothing.
   */
  Scope enterAsync(AsyncFrame f) {
    if (stopped) {
      return NOTHING; // and no state made in a recorder nothing collects (see closeAsync)
    }
    ThreadState s = state.get();
    Scope entered = s.enterAsync(f);
    if (entered == null) {
      misuse(
          Misuse.BAD_ARGUMENT,
          "entered after end",
          "an asynchronous region was entered after it ended; what ran inside was recorded in"
              + " the thread's own context");
      if (s.pool != null) {
        s.giveBackIfDone();
      }
      return NOTHING;
    }
    return entered;
  }

  /** The scope of an {@link #enterAsync} refused. */
  private static final Scope NOTHING = () -> {};

  /**
   * Counts a region opened with a null kind or a name that is null, empty or too long, and returns
   * the name to record it under.
   */
  private String badRegion(String name, Kind kind) {
    if (misuseToLog(Misuse.BAD_ARGUMENT, "region")) {
      logMisuse(
          "region(name, kind) needs a name of 1.."
              + MAX_REGION_NAME
              + " characters and a kind; got "
              + (name == null ? "null" : name.length() + " characters")
              + " and "
              + kind
              + " (recorded as \"null\", \"empty\" or the name cut, and COMPUTE)");
    }
    return name == null
        ? "null"
        : name.isEmpty() ? "empty" : name.substring(0, Math.min(name.length(), MAX_REGION_NAME));
  }

  /**
   * The type each attribute key was first used with in the process, for {@link
   * #checkAttributeType}.
   */
  private final ConcurrentHashMap<String, ValueType> attributeTypes = new ConcurrentHashMap<>();

  /** Attribute keys whose first type is kept; further keys are checked per thread only. */
  private static final int MAX_TYPED_KEYS = 4096;

  /**
   * Counts a change of type of attribute {@code key} between threads: the first use of a key on a
   * thread is checked against the type the process first used it with (a thread's own changes are
   * checked by its cache). Called at a thread's first use of the key, not at every scope.
   */
  /**
   * Distinct scoped attribute keys (with their types) the process sends at most: each is an
   * attribute definition on the wire, which the collector keeps for the stream, and it refuses a
   * stream's 4097th, with the whole delta. The rest of the 4096: {@link #MAX_MEASUREMENTS}
   * measurements, as many {@code .per_thread} companions under SET, and 64 for the built-in ones
   * (region, thread labels, the library's own). Keys made of ids (a key per user) are what reaches
   * it.
   */
  public static final int MAX_KEYS = 4096 - 2 * MAX_MEASUREMENTS - 64;

  /**
   * The attribute under which the agent records what JFR reports (one context per event type, right
   * under the root; its frames below): a time there is the innermost frame's own ({@link
   * ContextView#selfTimed}).
   */
  public static final String AGENT_EVENT_ATTRIBUTE = "event";

  /**
   * The scoped attribute keys admitted ({@link #admitKey}), each with a bit per type admitted with
   * it ({@code 1 << type number}): looked up by the key alone, so that neither an admitted key nor
   * a refused one allocates.
   */
  private final ConcurrentHashMap<String, Integer> admittedKeys = new ConcurrentHashMap<>();

  /** Keys with their types admitted; guarded by {@link #admittedKeys}' monitor. */
  private int admittedKeyTypes;

  /**
   * Whether scoped attribute {@code key} of {@code type} may be sent: true for a key admitted
   * before with that type, or a new (key, type) while fewer than {@link #MAX_KEYS} are; else false,
   * counted. Asked when a thread first uses a key, and when it uses it with another type.
   */
  boolean admitKey(String key, ValueType type) {
    int bit = 1 << type.getNumber();
    Integer types = admittedKeys.get(key);
    if (types != null && (types & bit) != 0) {
      return true;
    }
    synchronized (admittedKeys) { // so the limit is exact
      types = admittedKeys.get(key);
      int t = types == null ? 0 : types;
      if ((t & bit) != 0) {
        return true;
      }
      if (admittedKeyTypes < MAX_KEYS) {
        admittedKeys.put(key, t | bit);
        admittedKeyTypes++;
        return true;
      }
    }
    if (misuseToLog(Misuse.KEYS_FULL, "")) {
      logMisuse(
          "more than "
              + MAX_KEYS
              + " distinct attribute keys; scopes of further ones (\""
              + key
              + "\" here) record into their enclosing context. Put what varies in the"
              + " attribute's value, not in its key");
    }
    return false;
  }

  void checkAttributeType(String key, ValueType type) {
    ValueType first = attributeTypes.get(key);
    if (first == null && attributeTypes.size() < MAX_TYPED_KEYS) {
      first = attributeTypes.putIfAbsent(key, type);
    }
    if (first != null && first != type && misuseToLog(Misuse.ATTRIBUTE_TYPE_CHANGE, "")) {
      logMisuse(
          "attribute \""
              + key
              + "\" was "
              + first
              + " on another thread and is now "
              + type
              + " (recorded under the new type)");
    }
  }

  /** Opens a scoped string attribute on the calling thread. */
  public Scope with(String key, String value) {
    if (value == null && misuseToLog(Misuse.BAD_ARGUMENT, "null value")) {
      logMisuse("attribute \"" + key + "\" was given a null value; it was recorded as \"null\"");
    }
    String v = String.valueOf(value);
    if (v.length() > MAX_ATTRIBUTE_VALUE) {
      if (misuseToLog(Misuse.BAD_ARGUMENT, "long value")) {
        logMisuse(
            "attribute \""
                + key
                + "\" got a value of "
                + v.length()
                + " characters; values are cut to "
                + MAX_ATTRIBUTE_VALUE);
      }
      v = v.substring(0, MAX_ATTRIBUTE_VALUE);
    }
    return state.get().enterScope(key(key), ValueType.VALUE_TYPE_STRING, v, 0);
  }

  /** Opens a scoped integer attribute on the calling thread. */
  public Scope with(String key, long value) {
    return state.get().enterScope(key(key), ValueType.VALUE_TYPE_INT, "", value);
  }

  /**
   * Opens a scoped floating-point attribute on the calling thread. NaN and infinities are no value
   * the collector takes (it would refuse the whole delta): such a scope changes nothing, counted.
   */
  public Scope with(String key, double value) {
    if (!Double.isFinite(value)) {
      if (misuseToLog(Misuse.BAD_ARGUMENT, "not finite attribute")) {
        logMisuse(
            "attribute \""
                + key
                + "\" was given "
                + value
                + ", not a finite number; the scope records into the enclosing context");
      }
      return NOTHING;
    }
    return state
        .get()
        .enterScope(key(key), ValueType.VALUE_TYPE_DOUBLE, "", Double.doubleToLongBits(value));
  }

  /** Opens a scoped boolean attribute on the calling thread. */
  public Scope with(String key, boolean value) {
    return state.get().enterScope(key(key), ValueType.VALUE_TYPE_BOOL, "", value ? 1 : 0);
  }

  /** The id of measurement {@code name} with {@code unit}, defining it if new. */
  public int metric(String measurementName, String measurementUnit) {
    String name = measurementName == null ? "null" : measurementName;
    String unit = measurementUnit == null ? "" : measurementUnit;
    if ((measurementName == null || measurementUnit == null)
        && misuseToLog(Misuse.BAD_ARGUMENT, "measurement")) {
      logMisuse(
          "a measurement needs a name and a unit (\"\" for none); got name "
              + (measurementName == null ? "null" : "\"" + name + "\"")
              + " and unit "
              + (measurementUnit == null ? "null" : "\"" + unit + "\"")
              + "; null was recorded as \"null\" and \"\"");
    }
    String key = metricKey(name, unit);
    Integer id = metrics.get(key);
    if (id != null) {
      return id; // the common case: a known measurement, with a unit checked when it was new
    }
    if (!UNIT.matcher(unit).matches()) {
      // The collector refuses a delta defining such a unit, with all else it carries.
      if (misuseToLog(Misuse.BAD_ARGUMENT, "unit")) {
        logMisuse(
            "measurement \""
                + name
                + "\" has the unit \""
                + unit
                + "\"; a unit is a base-unit word in lower case such as seconds or bytes"
                + " ([a-z_], at most 32 characters); its values are recorded without a unit");
      }
      unit = "";
      key = metricKey(name, unit);
      id = metrics.get(key);
    }
    if (id == null) {
      synchronized (metricsLock) { // so the limit is exact
        id = metrics.get(key);
        if (id == null) {
          if (metrics.size() >= MAX_MEASUREMENTS) {
            // Logged here, counted by record() for each value dropped.
            if (firstTime(Misuse.MEASUREMENTS_FULL, "")) {
              logMisuse(
                  "more than "
                      + MAX_MEASUREMENTS
                      + " distinct measurements; values of further ones (\""
                      + name
                      + "\" here) are dropped, counted as events dropped. Put what varies in an"
                      + " attribute, not in the measurement name");
            }
            return NO_METRIC;
          }
          id = encoder.measurement(measurementName(name), ValueType.VALUE_TYPE_DOUBLE, unit);
          metrics.put(key, id);
        }
      }
    }
    return id;
  }

  /**
   * The id of a measurement of Profold's own (such as the agent's allocation bytes), defined if
   * new; unlike {@link #metric} never refused by the measurement limit, so the application's names
   * cannot crowd it out. {@code name} must be a valid name.
   */
  public int ownMetric(String name, String unit) {
    String key = "\u0001" + metricKey(name, unit); // apart from the application's names
    synchronized (metricsLock) {
      Integer id = metrics.get(key);
      if (id == null) {
        id = encoder.measurement(name, ValueType.VALUE_TYPE_DOUBLE, unit);
        metrics.put(key, id);
      }
      return id;
    }
  }

  /**
   * {@code name} made valid, not one of Profold's own measurements ({@link #TIME}, {@link
   * #ASYNC_DURATION}, {@link #ALLOCATION}), and not one ending in {@link
   * EntryEncoder#PER_THREAD_SUFFIX}: that is the companion measurement SET adds for each
   * measurement. The user's values would be merged into those; such names get an underscore
   * appended, counted as misuse.
   */
  private String measurementName(String name) {
    String valid = validName(name);
    if (valid.equals(TIME) || valid.equals(ASYNC_DURATION) || valid.equals(ALLOCATION)) {
      return renamed(
          valid,
          "own measurement name",
          "names a measurement of Profold's own ("
              + TIME
              + ": the regions' durations; "
              + ASYNC_DURATION
              + ": the asynchronous regions' durations; "
              + ALLOCATION
              + ": the agent's allocated bytes), which the values would be merged into");
    }
    if (valid.endsWith(EntryEncoder.PER_THREAD_SUFFIX)) {
      return renamed(
          valid,
          "per_thread name",
          "ends in "
              + EntryEncoder.PER_THREAD_SUFFIX
              + ", which names the distribution across threads Profold adds for each"
              + " measurement");
    }
    return valid;
  }

  /**
   * {@code valid} with an underscore appended (cut first if need be: a name has 128 characters at
   * most), counted as misuse under {@code topic}, with {@code why} the name could not be kept.
   */
  private String renamed(String valid, String topic, String why) {
    String renamed = valid.substring(0, Math.min(valid.length(), 127)) + "_";
    misuse(
        Misuse.BAD_ARGUMENT,
        topic,
        "\"" + valid + "\" " + why + "; it was recorded as \"" + renamed + "\"");
    return renamed;
  }

  /** The measurement of every region's duration, in seconds. */
  public static final String TIME = "time";

  /**
   * The measurement of asynchronous regions' durations, in seconds: not {@link #TIME}, which is
   * thread time (a thread's regions never overlap), while one thread may have many asynchronous
   * regions open at once. A name an application is unlikely to use itself, as it is reserved.
   */
  public static final String ASYNC_DURATION = "async_duration";

  /** The agent's measurement of allocated bytes. */
  public static final String ALLOCATION = "allocation";

  private static String metricKey(String name, String unit) {
    return unit.isEmpty() ? name : name + "\u0000" + unit;
  }

  /** Records {@code value} of metric {@code id} in the calling thread's current context. */
  public void record(int id, double value) {
    if (id < 0) {
      dropped.incrementAndGet();
      misuse(Misuse.MEASUREMENTS_FULL, "a value of a measurement over the limit was dropped");
      return;
    }
    if (!Double.isFinite(value)) {
      if (misuseToLog(Misuse.BAD_ARGUMENT, "not finite")) {
        logMisuse("recorded a value that is not a finite number: " + value);
      }
      return;
    }
    ThreadState s = state.get();
    s.recordHere(id, value);
    if (s.pool != null) {
      s.giveBackIfDone(); // a measurement outside any region: taken for it alone
    }
  }

  private String key(String key) {
    if (key == null) {
      misuse(
          Misuse.BAD_ARGUMENT,
          "null key",
          "an attribute was given no key (null); it was recorded under \"null\"");
      return "null";
    }
    return validName(key);
  }

  /**
   * The name scoped attribute {@code key} (a valid name) is sent under: itself, or for a name of
   * Profold's own key values ({@link #isReserved}), the name with an underscore appended, counted
   * as misuse. Asked when a thread first uses a key, not at every scope.
   */
  String attributeName(String key) {
    if (!isReserved(key)) {
      return key;
    }
    String renamed = key + "_";
    misuse(
        Misuse.BAD_ARGUMENT,
        "reserved key",
        "\""
            + key
            + "\" is a name Profold's own key values use (region, thread, thread.group,"
            + " thread.role, thread.cluster): an entry would carry it twice, which the collector"
            + " refuses; the attribute was recorded as \""
            + renamed
            + "\"");
    return renamed;
  }

  /**
   * True for the names of the key values Profold adds itself: the region path ({@value
   * ContextTable#REGION_ATTRIBUTE}) and the thread labels of the thread aggregation ({@link
   * ThreadAggregators#THREAD} and the others). A scoped attribute of such a name would put the name
   * into an entry's key twice.
   */
  static boolean isReserved(String name) {
    return name.equals(ContextTable.REGION_ATTRIBUTE)
        || (name.startsWith(ThreadAggregators.THREAD)
            && (name.length() == ThreadAggregators.THREAD.length()
                || name.equals(ThreadAggregators.GROUP)
                || name.equals(ThreadAggregators.ROLE)
                || name.equals(ThreadAggregators.CLUSTER)));
  }

  /** True for {@code [a-zA-Z_][a-zA-Z0-9_.]{0,127}}, checked without allocating. */
  static boolean isValidName(String name) {
    int n = name.length();
    if (n == 0 || n > 128) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      char c = name.charAt(i);
      boolean letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
      boolean more = (c >= '0' && c <= '9') || c == '.';
      if (!(letter || (i > 0 && more))) {
        return false;
      }
    }
    return true;
  }

  private String validName(String name) {
    if (isValidName(name)) {
      return name;
    }
    if (misuseToLog(Misuse.BAD_ARGUMENT, "invalid name")) {
      logMisuse(
          "\""
              + name
              + "\" is not a valid attribute name ([a-zA-Z_][a-zA-Z0-9_.]*, at most 128"
              + " characters); invalid characters were replaced by _");
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(name.length(), 128); i++) {
      char c = name.charAt(i);
      boolean ok = (Character.isLetterOrDigit(c) && c < 128) || c == '_' || c == '.';
      sb.append(ok && !(i == 0 && (Character.isDigit(c) || c == '.')) ? c : '_');
    }
    return sb.length() == 0 ? "_" : sb.toString();
  }

  /** The id of the {@code time} measurement regions record (seconds). */
  public int timeMetric() {
    return timeMetric;
  }

  /**
   * True when {@code child}, from {@link #regionContext} or {@link #attributeContext} for {@code
   * parent}, is where the context limit put it rather than its own context: callers must not cache
   * it (their caches would grow with the names the limit keeps out).
   */
  public boolean isOverflow(int parent, int child) {
    return contexts.isOverflow(parent, child);
  }

  /** Context look-ups for thread aggregation and encoding. */
  public ContextView contexts() {
    return contexts;
  }

  /**
   * Contexts in use, the root and the overflow ones included. Above half of {@code maxContexts} the
   * least recently used are aged out at each collection (see {@link ContextTable}); at {@code
   * maxContexts} new ones go to the overflow contexts.
   */
  public int contextCount() {
    return contexts.size();
  }

  /**
   * Swaps every thread's table and returns what each recorded since the previous call (threads that
   * recorded nothing are left out). Threads that have ended are forgotten after their last data is
   * collected. Call from one thread at a time (the flush). The contexts of the cells returned stay
   * valid ({@link #contexts()}) until the next call. Contexts whose keys are equal (the same path
   * and scoped attributes, opened in another order) come as one: a thread has at most one cell per
   * key and metric.
   */
  public List<ThreadSnapshot> collect() {
    return collect(ThreadCpu.NONE);
  }

  /**
   * {@link #collect()}, with CPU samples valued by {@code cpu}: the threads' CPU time over the
   * interval, for the threads whose CPU time is known (see {@link SampledCpu}; the samples of other
   * threads keep their nominal values).
   */
  public synchronized List<ThreadSnapshot> collect(ThreadCpu cpu) {
    // The previous collection's ageing runs now, before anything is drained: its contexts were
    // encoded by then, and should it throw, no table has been taken yet, so nothing is lost.
    contexts.endCollection();
    collections.incrementAndGet();
    contexts.beginCollection();
    Taken taken = new Taken();
    try {
      return collectDrained(cpu, taken);
    } catch (RuntimeException | Error e) {
      // The tables drained so far are lost with this collection: the next delta says so.
      eventsLost(taken.values);
      threadsLostInFailedCollect.addAll(taken.threads);
      threadsLostInFailedCollect.addAll(taken.failed);
      throw e;
    }
  }

  /**
   * What a collection took from the tables so far: lost with it, should it fail; and the threads
   * whose tables it could not take (their values counted as lost already).
   */
  private static final class Taken {
    long values;
    final Set<Long> threads = new HashSet<>();
    final Set<Long> failed = new HashSet<>();

    void add(long threadId, List<Cell> cells) {
      for (Cell c : cells) {
        values += c.state().count();
      }
      if (!cells.isEmpty()) {
        threads.add(threadId);
      }
    }
  }

  /** Threads whose drained values a failed collection lost; see {@link #takeThreadsLost()}. */
  private final Set<Long> threadsLostInFailedCollect = new HashSet<>();

  /**
   * The ids of the threads whose values collections that failed part-way had taken from their
   * tables (and lost, counted as events dropped), since the last call: their CPU time of that
   * interval must not value their later samples.
   */
  public synchronized Set<Long> takeThreadsLost() {
    Set<Long> out = Set.copyOf(threadsLostInFailedCollect);
    threadsLostInFailedCollect.clear();
    return out;
  }

  /** Runs after each table a collection drains (tests make a collection fail part-way). */
  Runnable afterEachDrain = () -> {};

  private List<ThreadSnapshot> collectDrained(ThreadCpu cpu, Taken taken) {
    List<ThreadSnapshot> out = new ArrayList<>();
    Map<Long, Integer> byThread = new HashMap<>();
    for (ThreadStatePool pool : pools.values()) {
      pool.retireIdle(); // drained and dropped below, as states that are not alive
    }
    Iterator<ThreadState> it = threads.iterator();
    while (it.hasNext()) {
      ThreadState s = it.next();
      boolean alive = s.alive();
      List<Cell> cells = drain(s, false, taken);
      taken.add(s.threadId, cells);
      afterEachDrain.run();
      if (s.pool != null) {
        s.idleCollections = cells.isEmpty() && !s.lent() ? s.idleCollections + 1 : 0;
      }
      if (!alive) {
        // The table swapped in, which gets the regions others closed, and maybe the last writes.
        List<Cell> last = drain(s, true, taken);
        taken.add(s.threadId, last);
        cells = new ArrayList<>(cells);
        cells.addAll(last);
        it.remove();
        if (s.holder() != null) {
          contexts.forget(s.holder());
        }
      }
      contexts.used(cells);
      if (cells.isEmpty()) {
        continue;
      }
      // A platform thread's name as it is now: a thread renamed after its first record (OkHttp
      // names its dispatcher after the call it runs) is grouped by its current name, as the
      // thread activity groups it.
      boolean own = s.pool == null && s.owner != null;
      String renamed = s.renamed;
      String name = own ? s.owner.getName() : renamed != null ? renamed : s.name;
      String group = name.equals(s.name) ? s.group : ThreadGroups.normalise(name);
      Integer at = byThread.putIfAbsent(s.threadId, out.size());
      if (at == null) {
        out.add(new ThreadSnapshot(s.threadId, name, group, s.initial, cells));
      } else { // the thread's own table and tables recorded on its behalf: one thread
        ThreadSnapshot t = out.get(at);
        out.set(
            at,
            s.owner != null
                ? new ThreadSnapshot(s.threadId, name, group, s.initial, concat(t.cells(), cells))
                : merged(t, cells));
      }
    }
    // One cell per key and metric in each thread, whether the cells came from the thread's own
    // table and one recorded on its behalf, from an ended thread's two tables, or from contexts
    // with equal keys (scopes opened in another order): what is per thread (SET's totals,
    // CALLTREE's visited sets) then counts each thread once per key.
    out.replaceAll(
        t ->
            new ThreadSnapshot(
                t.threadId(),
                t.name(),
                t.group(),
                t.initial(),
                mergedByKey(contexts.canonical(t.cells()))));
    return sampledCpu.apply(out, cpu.without(taken.failed));
  }

  /**
   * {@code s}'s cells since its last drain ({@link ThreadState#swapAndDrain}), after {@link
   * ThreadState#finishAfterThreadEnded} when {@code ended}. A failure there is one table's: it is
   * counted ({@link #failedDrains()}), logged once, and the table's values counted as lost (by the
   * state), and the collection goes on with the other threads' tables, returning none of this one.
   */
  private List<Cell> drain(ThreadState s, boolean ended, Taken taken) {
    if (ended) {
      try {
        s.finishAfterThreadEnded();
      } catch (RuntimeException | Error e) {
        drainFailed(s, e, taken);
      }
    }
    try {
      return s.swapAndDrain();
    } catch (RuntimeException | Error e) {
      drainFailed(s, e, taken);
      return List.of();
    }
  }

  private void drainFailed(ThreadState s, Throwable e, Taken taken) {
    failedDrains++;
    taken.failed.add(s.threadId); // its CPU time must not value its later samples
    if (!loggedFailedDrain) {
      loggedFailedDrain = true;
      LOG.log(
          Level.WARNING,
          "Profold: a thread's recorded values could not be collected; they were dropped (counted"
              + " as events dropped) and the other threads' were collected (logged once)",
          e);
    }
  }

  /** Tables whose drain failed ({@link #drain}); written by the collection only. */
  private long failedDrains;

  private boolean loggedFailedDrain;

  /** Tables whose values a collection could not take (they were counted as lost), so far. */
  synchronized long failedDrains() {
    return failedDrains;
  }

  /** How many times {@link #collect()} ran: intervals closed so far. Any thread may read it. */
  public long collections() {
    return collections.get();
  }

  /** {@code t} with {@code cells} added (merged by {@link #collect} at its end). */
  private static ThreadSnapshot merged(ThreadSnapshot t, List<Cell> cells) {
    return new ThreadSnapshot(
        t.threadId(), t.name(), t.group(), t.initial(), concat(t.cells(), cells));
  }

  private static List<Cell> concat(List<Cell> a, List<Cell> b) {
    List<Cell> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  /**
   * {@code cells} with the cells of one (context, metric) merged into the first of them, in order
   * of first appearance. The states are the flush's own copies.
   */
  private static List<Cell> mergedByKey(List<Cell> cells) {
    Map<Long, Cell> byKey = new LinkedHashMap<>();
    for (Cell c : cells) {
      Cell prior = byKey.putIfAbsent(c.key(), c);
      if (prior != null) {
        prior.state().merge(c.state());
      }
    }
    return byKey.size() == cells.size() ? cells : new ArrayList<>(byKey.values());
  }

  /** States the recorder holds: threads', pooled and foreign (for tests). */
  int states() {
    return threads.size();
  }

  /** The pool of pooled threads of {@code group}, or null (for tests). */
  ThreadStatePool pool(String group) {
    return pools.get(group);
  }

  /** The calling thread's state (for tests). */
  ThreadState stateOfCallingThread() {
    return state.get();
  }

  /**
   * The runtime stopped: nothing will collect this recorder again. Asynchronous regions closed from
   * now on record nothing (they were opened before; new ones are not opened, the API having no
   * runtime any more).
   */
  public void stop() {
    stopped = true;
  }

  /** Approximate bytes held by the recording tables (for the client's self-overhead). */
  public long bytesHeld() {
    long cells = 0;
    for (ThreadState s : threads) {
      cells += s.cells();
    }
    return cells * 1_500 + (long) contexts.size() * 64 + contexts.asyncPins.bytesHeld();
  }

  /** {@link #misuse(Misuse, String, String)} for kinds that cover one problem. */
  void misuse(Misuse kind, String message) {
    misuse(kind, "", message);
  }

  /**
   * Counts a misuse of {@code kind} and logs {@code message} the first time this {@code topic} (a
   * constant naming the problem, for kinds that cover several: {@code bad_argument}) is met. For a
   * constant message; one built from values is built only when logged: see {@link #misuseToLog}.
   */
  void misuse(Misuse kind, String topic, String message) {
    if (misuseToLog(kind, topic)) {
      logMisuse(message);
    }
  }

  /**
   * Counts a misuse of {@code kind}; true the first time this {@code topic} of it is met, when the
   * caller logs it ({@link #logMisuse}). So a message is built once, not at every occurrence of a
   * misuse that may repeat on a hot path. Allocates nothing after the first time.
   */
  boolean misuseToLog(Misuse kind, String topic) {
    misuse.get(kind).increment();
    return firstTime(kind, topic);
  }

  /** True the first time {@code topic} of {@code kind} is met; counts nothing. */
  private boolean firstTime(Misuse kind, String topic) {
    Set<String> topics = logged.get(kind);
    return !topics.contains(topic) && topics.add(topic);
  }

  /** Logs the message of a misuse {@link #misuseToLog} said to log. */
  static void logMisuse(String message) {
    LOG.log(Level.WARNING, "Profold: " + message + " (logged once; counted)");
  }

  /**
   * Times the API was misused or a limit bit since the previous call, by kind (snake_case), kinds
   * with none left out. Call from one thread at a time (the flush).
   */
  public synchronized Map<String, Long> takeMisuseCounts() {
    Map<String, Long> out = new java.util.TreeMap<>();
    misuse.forEach(
        (k, v) -> {
          long total = v.sum();
          long d = total - reportedMisuse.getOrDefault(k, 0L);
          if (d > 0) {
            out.put(k.name().toLowerCase(java.util.Locale.ROOT), d);
            reportedMisuse.put(k, total);
          }
        });
    return out;
  }

  /** Times the API was misused, by kind. */
  public Map<String, Long> misuseCounts() {
    Map<String, Long> out = new java.util.TreeMap<>();
    misuse.forEach((k, v) -> out.put(k.name().toLowerCase(java.util.Locale.ROOT), v.sum()));
    return out;
  }

  void dropped(long n) {
    if (n > 0) {
      dropped.addAndGet(n);
      if (misuseToLog(Misuse.TABLE_FULL, "")) {
        logMisuse(
            "a thread recorded more than "
                + maxCellsPerThread
                + " distinct (region, attribute, metric) cells within two intervals; further"
                + " values were dropped (counted as events dropped)");
      }
    }
  }

  /**
   * Counts {@code n} events a source (the agent) observed but could not record, so that the next
   * delta reports them as events dropped.
   */
  public void eventsLost(long n) {
    if (n > 0) {
      dropped.addAndGet(n);
    }
  }

  /** Values not recorded because a thread's table was full, and takes the count. */
  public long takeDropped() {
    return dropped.getAndSet(0);
  }
}
