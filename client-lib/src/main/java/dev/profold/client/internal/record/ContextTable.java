package dev.profold.client.internal.record;

import dev.profold.client.Kind;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ContextView;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.IntStack;
import dev.profold.reduce.LongIntMap;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Process-wide interning of <em>events</em> (entering a region of some name and kind, setting an
 * attribute to some value) and <em>contexts</em> (the root, or a parent context changed by one
 * event). A context stands for a region path plus the scoped attributes in force; threads record
 * into (context, metric) cells, so the hot path only handles small ints.
 *
 * <p>Context 0 is the root: no region, no attributes. Interning is synchronized but rare: each
 * thread caches (parent, event) → child in its own {@link ThreadState}. Reads of interned contexts
 * ({@link ContextView}) are synchronized too; they happen at flush time, for contexts of the cells
 * just collected.
 *
 * <p><b>Limits.</b> At most {@code maxContexts} contexts and as many events are in use (plus one
 * overflow context per region kind). Beyond that a new region records into the overflow context of
 * its kind, region {@value #OVERFLOW} under the root, and a new attribute setting is left out (its
 * scope records into the enclosing context): every value is still recorded once, only its region
 * path or attribute is lost. Each time that happens {@code onOverflow} runs (the recorder counts
 * it). Callers must not cache what an overflow gave them ({@link #isOverflow}), or their caches
 * would grow with the distinct names the limit keeps out.
 *
 * <p><b>Ageing.</b> So that a long-running process whose paths and attribute values keep changing
 * does not end up recording everything new under the overflow contexts, contexts fall out of use:
 * when, at the end of a collection ({@link #endCollection}, run as the next one starts), more than
 * half the limit (of contexts or of events) is in use, the holders are asked for their ids back and
 * the least recently used contexts are freed until half the limit is in use, and events no context
 * uses any more with them. Asking at half, not when nearly full, leaves room for what the holders
 * intern before they answer. A context is never freed while it was used in the collection just
 * taken, while one of its descendants is kept, or while an {@link IdHolder} pins it (see there for
 * the protocol that makes reusing an id safe), or an asynchronous region is open in it or closed
 * too recently for its value to have been taken ({@link AsyncPins}). A freed context that is needed
 * again is simply interned again, under a new or reused id; what it records keeps its key, as the
 * key is computed from the path and attributes, not from the id.
 */
final class ContextTable implements ContextView {
  /** A value of a scoped attribute; one of the typed fields is meaningful. */
  record AttributeSetting(String key, ValueType type, String text, long bits) {}

  /** The region name of the overflow contexts. */
  static final String OVERFLOW = "profold.overflow";

  /** The name of the dimension holding a context's region path. */
  static final String REGION_ATTRIBUTE = "region";

  /** The event id of an attribute setting left out: its child context is its parent. */
  static final int LEFT_OUT = -2;

  /** The event of a freed context id. */
  private static final int FREE = -3;

  private static final System.Logger LOG = System.getLogger("dev.profold.client");
  private static final int KINDS = Kind.values().length;

  private final DeltaEncoder encoder;
  private final int regionAttribute;
  private final Map<Long, Integer> children = new HashMap<>();
  private final List<Object> events = new ArrayList<>(); // RegionEvent, AttributeSetting or null
  private final Map<Object, Integer> eventIds = new HashMap<>();
  private int[] eventRefs = new int[64]; // contexts in use per event
  private final IntStack freeEvents = new IntStack();
  private int liveEvents;
  private int[] parent = new int[64];
  private int[] event = new int[64];
  private int[] pathNode = new int[64];
  private Kind[] kind = new Kind[64];
  private long[] lastUsed = new long[64]; // the collection a context was last used in
  private int[] depth = new int[64]; // events from the root
  private final IntStack freeContexts = new IntStack();
  private int size = 1; // ids handed out so far: [0, size), the root included
  private int live = 1; // contexts in use, the root included
  private final int maxContexts;
  private final Runnable onOverflow;
  private final Map<Kind, Integer> overflowEvent = new EnumMap<>(Kind.class);
  private final Map<Kind, Integer> overflowContext = new EnumMap<>(Kind.class); // once created
  private final List<IdHolder> holders = new ArrayList<>();

  /** The contexts open asynchronous regions keep (see {@link AsyncPins}). */
  final AsyncPins asyncPins = new AsyncPins();

  /** The measurement whose values say nothing of where a thread ran (see {@link #visits}). */
  private volatile int notVisiting = -1;

  /** Values of {@code metric} do not mean their thread ran in their context ({@link #visits}). */
  void notVisiting(int metric) {
    notVisiting = metric;
  }

  @Override
  public boolean visits(int metric) {
    return metric != notVisiting;
  }

  private boolean loggedAsyncKept;

  private long collection; // the current collection, from beginCollection
  private long canonicalIn = -1; // the collection canonicalOf and firstWithKey are for
  private final Map<Integer, Integer> canonicalOf = new HashMap<>();
  private final Map<ContextKey, Integer> firstWithKey = new HashMap<>();
  private long lastRequest = Long.MIN_VALUE / 2;
  private long agedOut;
  private boolean loggedAgeing;

  private record RegionEvent(String name, Kind kind) {}

  /** What a context's wire key is made of: its path node and its attributes in force by name. */
  private record ContextKey(int pathNode, Map<String, AttributeSetting> settings) {}

  /** A table without limits (for tests and tools). */
  ContextTable(DeltaEncoder encoder) {
    this(encoder, Integer.MAX_VALUE, () -> {});
  }

  /**
   * A table of at most {@code maxContexts} contexts (the root included) and {@code maxContexts}
   * events in use, besides the overflow ones (see the class comment); {@code onOverflow} runs,
   * under this table's lock, each time the limit keeps one out.
   */
  ContextTable(DeltaEncoder encoder, int maxContexts, Runnable onOverflow) {
    this.encoder = encoder;
    this.regionAttribute = encoder.dimension(REGION_ATTRIBUTE, ValueType.VALUE_TYPE_PATH);
    this.maxContexts = maxContexts;
    this.onOverflow = onOverflow;
    event[0] = -1;
    for (Kind k : Kind.values()) {
      overflowEvent.put(k, intern(new RegionEvent(OVERFLOW, k)));
    }
    encoder.addPinSource(this::pinPathNodes);
  }

  /**
   * Adds the encoder's path node ids of the contexts in use to {@code out}: the table hands them to
   * entries without looking them up again, so the encoder must not age them out.
   */
  synchronized void pinPathNodes(BitSet out) {
    for (int c = 1; c < size; c++) {
      if (occupied(c)) {
        out.set(pathNode[c]);
      }
    }
  }

  /** A new holder of ids ({@code signal} runs when the table asks for them back). */
  synchronized IdHolder holder(Runnable signal) {
    IdHolder h = new IdHolder(signal);
    holders.add(h);
    return h;
  }

  /** The event id of entering region {@code name} of {@code kind}, pinned by {@code holder}. */
  synchronized int regionEvent(String name, Kind kind, IdHolder holder) {
    RegionEvent e = new RegionEvent(name, kind);
    Integer id = eventIds.get(e);
    if (id == null) {
      if (full(liveEvents - KINDS)) {
        return overflowEvent.get(kind);
      }
      id = intern(e);
    }
    pin(holder.events, id);
    return id;
  }

  /** The event id of setting an attribute (pinned by {@code holder}), or {@link #LEFT_OUT}. */
  synchronized int attributeEvent(AttributeSetting setting, IdHolder holder) {
    Integer id = eventIds.get(setting);
    if (id == null) {
      if (full(liveEvents - KINDS)) {
        return LEFT_OUT;
      }
      id = intern(setting);
    }
    pin(holder.events, id);
    return id;
  }

  private static void pin(LongIntMap set, int id) {
    set.put(id, 0);
  }

  /**
   * Pins {@code f}'s context for {@code holder} unless {@code f} has ended: while it has not, its
   * {@link AsyncPins} count keeps the context from being freed (an end drops the count only after
   * marking the frame ended), and from here on the holder's pin does, until the holder releases
   * (which keeps the contexts of its open frames: the caller makes it one before its next release).
   *
   * @return false when {@code f} has ended (its context may be freed or reused)
   */
  synchronized boolean pinUnlessEnded(IdHolder holder, AsyncFrame f) {
    if (f.ended()) {
      return false;
    }
    pin(holder.contexts, f.context);
    return true;
  }

  /** True (and counted) when {@code count} in use already reach the limit. */
  private boolean full(int count) {
    if (count < maxContexts) {
      return false;
    }
    onOverflow.run();
    return true;
  }

  private int intern(Object e) {
    int id;
    if (freeEvents.isEmpty()) {
      id = events.size();
      events.add(e);
      if (id == eventRefs.length) {
        eventRefs = Arrays.copyOf(eventRefs, id * 2);
      }
    } else {
      id = freeEvents.pop();
      events.set(id, e);
    }
    eventRefs[id] = 0;
    eventIds.put(e, id);
    liveEvents++;
    return id;
  }

  /**
   * True for an event id that stands for more than one event: an overflow region event (interned
   * first, so its id is below the number of kinds) or {@link #LEFT_OUT}. Not to be cached by name.
   */
  static boolean isOverflowEvent(int eventId) {
    return eventId < KINDS;
  }

  /**
   * True when {@code child}, returned by {@link #child} for {@code parentContext}, came from the
   * limit (an overflow context, or the parent for an attribute left out): not to be cached.
   */
  synchronized boolean isOverflow(int parentContext, int child) {
    return child == parentContext
        || (kind[child] != null && Integer.valueOf(child).equals(overflowContext.get(kind[child])));
  }

  /**
   * The context reached from {@code parentContext} (pinned by {@code holder}) by {@code eventId}
   * (from {@link #regionEvent} or {@link #attributeEvent}), pinned by {@code holder}.
   */
  synchronized int child(int parentContext, int eventId, IdHolder holder) {
    if (eventId == LEFT_OUT) {
      return parentContext;
    }
    long key = ((long) parentContext << 32) | eventId;
    Integer id = children.get(key);
    if (id == null) {
      Object e = events.get(eventId);
      if (e instanceof RegionEvent r && overflowEvent.get(r.kind()) == eventId) {
        return overflowContext(r.kind());
      }
      if (e instanceof AttributeSetting s && !roomForKey(parentContext, s.key())) {
        onKeysFull.accept(s.key());
        return parentContext; // left out, as for a full table
      }
      if (full(live - overflowContext.size())) {
        return e instanceof RegionEvent r ? overflowContext(r.kind()) : parentContext;
      }
      id = add(parentContext, eventId, key);
    }
    pin(holder.contexts, id);
    return id;
  }

  /**
   * Distinct scoped attribute keys one context holds at most: an entry's key holds at most 64
   * values (the collector refuses the whole delta beyond), of which the region path, the thread
   * group and the thread, role or cluster take three.
   */
  static final int MAX_CONTEXT_KEYS = 61;

  /** Runs, with the key, when a setting is left out for want of {@link #MAX_CONTEXT_KEYS}. */
  private java.util.function.Consumer<String> onKeysFull = key -> {};

  /** Sets what runs when a setting is left out for want of room for its key (under the lock). */
  synchronized void onKeysFull(java.util.function.Consumer<String> action) {
    this.onKeysFull = action;
  }

  /** Whether a setting of {@code key} in {@code context} keeps its key values within the bound. */
  private boolean roomForKey(int context, String key) {
    Map<String, AttributeSetting> in = settings(context);
    return in.containsKey(key) || in.size() < MAX_CONTEXT_KEYS;
  }

  private int overflowContext(Kind k) {
    Integer c = overflowContext.get(k);
    if (c == null) {
      int ev = overflowEvent.get(k);
      c = add(0, ev, (long) ev); // under the root, whatever the parent: one per kind
      overflowContext.put(k, c);
    }
    return c;
  }

  private int add(int parentContext, int eventId, long key) {
    int c;
    if (freeContexts.isEmpty()) {
      if (size == parent.length) {
        int n = size * 2;
        parent = Arrays.copyOf(parent, n);
        event = Arrays.copyOf(event, n);
        pathNode = Arrays.copyOf(pathNode, n);
        kind = Arrays.copyOf(kind, n);
        lastUsed = Arrays.copyOf(lastUsed, n);
        depth = Arrays.copyOf(depth, n);
      }
      c = size++;
    } else {
      c = freeContexts.pop();
    }
    live++;
    parent[c] = parentContext;
    event[c] = eventId;
    depth[c] = depth[parentContext] + 1;
    eventRefs[eventId]++;
    if (events.get(eventId) instanceof RegionEvent r) {
      pathNode[c] =
          encoder.pathNode(pathNode[parentContext], regionAttribute, r.name(), wire(r.kind()));
      kind[c] = r.kind();
    } else {
      pathNode[c] = pathNode[parentContext];
      kind[c] = kind[parentContext];
    }
    lastUsed[c] = Long.MIN_VALUE;
    used(c);
    children.put(key, c);
    return c;
  }

  /** Marks {@code context} and its ancestors used in the current collection. */
  private void used(int context) {
    for (int c = context; lastUsed[c] != collection; c = parent[c]) {
      lastUsed[c] = collection; // an ancestor is never less recently used than a descendant
    }
  }

  // ---- collections and ageing (the flush) ----

  /** Starts a collection: called before the threads' tables are swapped. */
  synchronized void beginCollection() {
    collection++;
    asyncPins.beginCollection(collection);
  }

  /**
   * Marks the contexts of {@code cells}, just collected, used in the current collection. An id that
   * is no context in use (a caller's bug) is left for the encoding to refuse, counted: it must not
   * make the collection, which has already taken the cells, fail here.
   */
  synchronized void used(List<Cell> cells) {
    for (Cell cell : cells) {
      int c = cell.context();
      if (c >= 0 && c < size && occupied(c)) {
        used(c);
      }
    }
  }

  /**
   * {@code cells} (one thread's) with each context replaced by the first context of the current
   * collection that has the same key. Different contexts have the same key (path node and the
   * scoped attributes in force, in any order) when scopes were opened in another order, an inner
   * scope hid an outer one of the same name, or the limits sent several paths to one overflow node;
   * the wire cannot tell them apart. An id that is no context in use is left as it is (see {@link
   * #used(List)}).
   */
  synchronized List<Cell> canonical(List<Cell> cells) {
    if (canonicalIn != collection) {
      canonicalIn = collection;
      canonicalOf.clear();
      firstWithKey.clear();
    }
    List<Cell> out = new ArrayList<>(cells.size());
    for (Cell cell : cells) {
      int c = canonical(cell.context());
      out.add(c == cell.context() ? cell : new Cell(c, cell.metric(), cell.state()));
    }
    return out;
  }

  private int canonical(int context) {
    if (context < 0 || context >= size || !occupied(context)) {
      return context;
    }
    Integer known = canonicalOf.get(context);
    if (known != null) {
      return known;
    }
    Integer first =
        firstWithKey.putIfAbsent(new ContextKey(pathNode[context], settings(context)), context);
    int c = first == null ? context : first;
    canonicalOf.put(context, c);
    return c;
  }

  /** The scoped attributes in force in {@code context} by name: the innermost setting of each. */
  private Map<String, AttributeSetting> settings(int context) {
    Map<String, AttributeSetting> byName = new TreeMap<>();
    for (int c = context; c != 0; c = parent[c]) {
      if (events.get(event[c]) instanceof AttributeSetting s) {
        byName.putIfAbsent(s.key(), s); // walking outwards: the first seen is the innermost
      }
    }
    return byName;
  }

  /**
   * The holder's caches are empty and it keeps only {@code kept} (contexts of its open regions and
   * scopes); what else it was given is aged out only after the next collection, which takes what it
   * wrote before this call.
   */
  synchronized void release(IdHolder holder, int[] kept) {
    holder.releasedContexts = union(holder.releasedContexts, holder.contexts);
    holder.releasedEvents = union(holder.releasedEvents, holder.events);
    holder.releasedIn = collection;
    holder.contexts = new LongIntMap();
    holder.events = new LongIntMap();
    for (int c : kept) {
      pin(holder.contexts, c);
    }
  }

  /** The holder will not use its ids again (its thread ended); release it and forget it. */
  synchronized void forget(IdHolder holder) {
    release(holder, new int[0]);
    holder.forgotten = true;
  }

  private static LongIntMap union(LongIntMap a, LongIntMap b) {
    if (a == null || a.size() == 0) {
      return b;
    }
    b.forEach((k, v) -> a.put(k, v));
    return a;
  }

  /**
   * Ends a collection, once its cells were marked {@linkplain #used(List) used} and encoded (the
   * recorder calls it as the next collection starts, before anything is drained): drops the pins
   * released before it began and, when more than half the limit is in use, asks the holders for
   * their ids (at most every other collection) and frees the least recently used contexts no holder
   * pins, down to half the limit, then the events no context or holder uses. When instead the
   * encoder's dictionary is over half its bound ({@link DeltaEncoder#ageingDue}), it does the same
   * for every context not used in this collection or the previous one: contexts pin their path
   * nodes in the dictionary, which can only age out what no context holds.
   */
  synchronized void endCollection() {
    Iterator<IdHolder> it = holders.iterator();
    while (it.hasNext()) {
      IdHolder h = it.next();
      if (h.releasedContexts != null && h.releasedIn < collection) {
        h.releasedContexts = null;
        h.releasedEvents = null;
        if (h.forgotten) {
          it.remove();
        }
      }
    }
    int half = maxContexts / 2;
    boolean overHalf = live - overflowContext.size() > half || liveEvents - KINDS > half;
    boolean dictionaryPressure = !overHalf && encoder.ageingDue();
    if (!overHalf && !dictionaryPressure) {
      return;
    }
    if (collection - lastRequest >= 2) {
      lastRequest = collection;
      holders.forEach(IdHolder::request);
    }
    int before = live;
    if (overHalf) {
      freeContexts(live - half, collection);
    } else {
      freeContexts(live, collection - 1); // every context idle for two collections
    }
    int eventsFreed = freeEvents();
    agedOut += before - live;
    if (before > live || eventsFreed > 0) {
      LOG.log(
          loggedAgeing ? Level.DEBUG : Level.INFO,
          overHalf
              ? "Profold: {0} of at most {1} contexts were in use; the {2} least recently used and"
                  + " {3} events were aged out (they are interned again when used; logged once at"
                  + " INFO)"
              : "Profold: the dictionary of strings and call paths was over half its bound; of the"
                  + " {0} contexts in use (at most {1}), the {2} not used in the last two intervals"
                  + " and {3} events were aged out, so that the dictionary can free their call"
                  + " paths (they are interned again when used; logged once at INFO)",
          before,
          maxContexts,
          before - live,
          eventsFreed);
      loggedAgeing = true;
    }
  }

  /**
   * Frees up to {@code wanted} contexts no holder pins and not used since collection {@code
   * usedSince}, the least recently used first.
   */
  private void freeContexts(int wanted, long usedSince) {
    if (wanted <= 0) {
      return;
    }
    boolean[] keep = new boolean[size];
    keepWithAncestors(keep, 0);
    overflowContext.values().forEach(c -> keepWithAncestors(keep, c));
    for (IdHolder h : holders) {
      for (LongIntMap pins : new LongIntMap[] {h.contexts, h.releasedContexts}) {
        if (pins != null) {
          pins.forEach((c, v) -> keepWithAncestors(keep, (int) c));
        }
      }
    }
    int keptOpen = 0;
    for (int c = 1; c < size; c++) {
      if (occupied(c) && asyncPins.keeps(c, collection)) {
        keepWithAncestors(keep, c);
        keptOpen += asyncPins.open(c) > 0 ? 1 : 0;
      }
    }
    if (keptOpen > maxContexts / 4 && !loggedAsyncKept) {
      loggedAsyncKept = true;
      LOG.log(
          Level.WARNING,
          "Profold: {0} of the {1} contexts in use are kept by asynchronous regions still open;"
              + " a region never ended (AsyncRegion.end() missed, for example on an error path)"
              + " keeps its context for good, and with an attribute that differs per request they"
              + " fill the table (logged once)",
          keptOpen,
          live);
    }
    for (int c = 1; c < size; c++) {
      if (occupied(c) && lastUsed[c] >= usedSince) {
        keep[c] = true; // its ancestors were used as recently
      }
    }
    Integer[] idle = new Integer[size];
    int n = 0;
    for (int c = 1; c < size; c++) {
      if (!keep[c] && occupied(c)) {
        idle[n++] = c;
      }
    }
    // Least recently used first and, among as recent, deepest first: a context comes after all
    // its descendants (they are never more recently used, and a kept one keeps it), so the ones
    // freed never leave a context in use without its parent.
    Arrays.sort(
        idle,
        0,
        n,
        Comparator.comparingLong((Integer c) -> lastUsed[c]).thenComparingInt(c -> -depth[c]));
    for (int i = 0; i < Math.min(n, wanted); i++) {
      free(idle[i]);
    }
  }

  /** True when {@code c} is a context in use, not a freed id (for tests). */
  synchronized boolean inUse(int c) {
    return occupied(c);
  }

  private boolean occupied(int c) {
    return event[c] != FREE;
  }

  private void keepWithAncestors(boolean[] keep, int context) {
    for (int c = context; !keep[c]; c = parent[c]) {
      keep[c] = true;
      if (c == 0) {
        break;
      }
    }
  }

  private void free(int c) {
    children.remove(((long) parent[c] << 32) | event[c]);
    eventRefs[event[c]]--;
    event[c] = FREE;
    kind[c] = null;
    pathNode[c] = 0;
    freeContexts.push(c);
    live--;
  }

  /** Frees the events no context in use refers to and no holder pins; returns how many. */
  private int freeEvents() {
    boolean[] pinned = new boolean[events.size()];
    for (IdHolder h : holders) {
      for (LongIntMap pins : new LongIntMap[] {h.events, h.releasedEvents}) {
        if (pins != null) {
          pins.forEach((e, v) -> pinned[(int) e] = true);
        }
      }
    }
    int freed = 0;
    for (int e = KINDS; e < events.size(); e++) {
      Object ev = events.get(e);
      if (ev != null && eventRefs[e] == 0 && !pinned[e]) {
        eventIds.remove(ev);
        events.set(e, null);
        freeEvents.push(e);
        liveEvents--;
        freed++;
      }
    }
    return freed;
  }

  /** Contexts aged out so far (for tests). */
  synchronized long agedOut() {
    return agedOut;
  }

  /** Events in use, the overflow ones included (for tests). */
  synchronized int eventCount() {
    return liveEvents;
  }

  private static RegionKind wire(Kind k) {
    return switch (k) {
      case COMPUTE -> RegionKind.REGION_KIND_COMPUTE;
      case SYNC -> RegionKind.REGION_KIND_SYNC;
      case WAIT -> RegionKind.REGION_KIND_WAIT;
      case IO -> RegionKind.REGION_KIND_IO;
      case RUNTIME -> RegionKind.REGION_KIND_RUNTIME;
      case THREAD_MGMT -> RegionKind.REGION_KIND_THREAD_MGMT;
    };
  }

  /** Contexts in use, the root and the overflow ones included. */
  synchronized int size() {
    return live;
  }

  @Override
  public synchronized Kind kind(int context) {
    return kind[context];
  }

  @Override
  public synchronized int pathNode(int context) {
    return pathNode[context];
  }

  @Override
  public synchronized int parent(int context) {
    return context == 0 ? -1 : parent[context];
  }

  @Override
  public synchronized boolean selfTimed(int context) {
    int top = context;
    while (top != 0 && parent[top] != 0) {
      top = parent[top];
    }
    return top != 0
        && events.get(event[top]) instanceof AttributeSetting s
        && s.key().equals(Recorder.AGENT_EVENT_ATTRIBUTE);
  }

  @Override
  public synchronized void addKey(int context, Entry.Builder entry) {
    if (pathNode[context] != 0) {
      entry.addKey(
          AttributeValue.newBuilder()
              .setAttributeId(regionAttribute)
              .setPathNodeId(pathNode[context]));
    }
    // Scoped attributes by name, whatever order they were opened in; an inner setting of the same
    // name wins. So contexts with the same key give the same key values in the same order.
    for (AttributeSetting s : settings(context).values()) {
      entry.addKey(value(s));
    }
  }

  private AttributeValue value(AttributeSetting s) {
    AttributeValue.Builder v =
        AttributeValue.newBuilder().setAttributeId(encoder.dimension(s.key(), s.type()));
    switch (s.type()) {
      case VALUE_TYPE_STRING -> v.setStringId(encoder.string(s.text()));
      case VALUE_TYPE_INT -> v.setIntValue(s.bits());
      case VALUE_TYPE_DOUBLE -> v.setDoubleValue(Double.longBitsToDouble(s.bits()));
      case VALUE_TYPE_BOOL -> v.setBoolValue(s.bits() != 0);
      default -> throw new IllegalStateException("not a scoped attribute type: " + s.type());
    }
    return v.build();
  }
}
