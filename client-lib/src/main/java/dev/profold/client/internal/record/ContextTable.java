package dev.profold.client.internal.record;

import dev.profold.client.Kind;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.ContextView;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.ValueType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Process-wide interning of <em>events</em> (entering a region of some name and kind, setting an
 * attribute to some value) and <em>contexts</em> (the root, or a parent context changed by one
 * event). A context stands for a region path plus the scoped attributes in force; threads record
 * into (context, metric) cells, so the hot path only handles small ints.
 *
 * <p>Context 0 is the root: no region, no attributes. Ids are dense and never reused. Interning is
 * synchronized but rare: each thread caches (parent, event) → child in its own {@link ThreadState}.
 * Reads of interned contexts ({@link ContextView}) are synchronized too; they happen at flush time.
 *
 * <p><b>Limits.</b> At most {@code maxContexts} contexts and as many events are interned (plus one
 * overflow context per region kind). Beyond that a new region records into the overflow context of
 * its kind, region {@value #OVERFLOW} under the root, and a new attribute setting is left out (its
 * scope records into the enclosing context): every value is still recorded once, only its region
 * path or attribute is lost. Each time that happens {@code onOverflow} runs (the recorder counts
 * it). Callers must not cache what an overflow gave them ({@link #isOverflow}), or their caches
 * would grow with the distinct names the limit keeps out.
 */
final class ContextTable implements ContextView {
  /** A value of a scoped attribute; one of the typed fields is meaningful. */
  record AttributeSetting(String key, ValueType type, String text, long bits) {}

  /** The region name of the overflow contexts. */
  static final String OVERFLOW = "profold.overflow";

  /** The event id of an attribute setting left out: its child context is its parent. */
  static final int LEFT_OUT = -2;

  private final DeltaEncoder encoder;
  private final int regionAttribute;
  private final Map<Long, Integer> children = new HashMap<>();
  private final List<Object> events = new ArrayList<>(); // RegionEvent or AttributeSetting
  private final Map<Object, Integer> eventIds = new HashMap<>();
  private int[] parent = new int[64];
  private int[] event = new int[64];
  private int[] pathNode = new int[64];
  private Kind[] kind = new Kind[64];
  private int size = 1; // the root
  private final int maxContexts;
  private final Runnable onOverflow;
  private final Map<Kind, Integer> overflowEvent = new EnumMap<>(Kind.class);
  private final Map<Kind, Integer> overflowContext = new EnumMap<>(Kind.class); // once created

  private record RegionEvent(String name, Kind kind) {}

  /** A table without limits (for tests and tools). */
  ContextTable(DeltaEncoder encoder) {
    this(encoder, Integer.MAX_VALUE, () -> {});
  }

  /**
   * A table of at most {@code maxContexts} contexts (the root included) and {@code maxContexts}
   * events, besides the overflow ones (see the class comment); {@code onOverflow} runs, under this
   * table's lock, each time the limit keeps one out.
   */
  ContextTable(DeltaEncoder encoder, int maxContexts, Runnable onOverflow) {
    this.encoder = encoder;
    this.regionAttribute = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
    this.maxContexts = maxContexts;
    this.onOverflow = onOverflow;
    event[0] = -1;
    for (Kind k : Kind.values()) {
      overflowEvent.put(k, intern(new RegionEvent(OVERFLOW, k)));
    }
  }

  /** The event id of entering region {@code name} of {@code kind}. */
  synchronized int regionEvent(String name, Kind kind) {
    RegionEvent e = new RegionEvent(name, kind);
    Integer id = eventIds.get(e);
    if (id != null) {
      return id;
    }
    if (full(events.size() - Kind.values().length)) {
      return overflowEvent.get(kind);
    }
    return intern(e);
  }

  /** The event id of setting an attribute, or {@link #LEFT_OUT}. */
  synchronized int attributeEvent(AttributeSetting setting) {
    Integer id = eventIds.get(setting);
    if (id != null) {
      return id;
    }
    return full(events.size() - Kind.values().length) ? LEFT_OUT : intern(setting);
  }

  /** True (and counted) when {@code count} interned already reach the limit. */
  private boolean full(int count) {
    if (count < maxContexts) {
      return false;
    }
    onOverflow.run();
    return true;
  }

  private int intern(Object e) {
    int id = events.size();
    events.add(e);
    eventIds.put(e, id);
    return id;
  }

  /**
   * True for an event id that stands for more than one event: an overflow region event (interned
   * first, so its id is below the number of kinds) or {@link #LEFT_OUT}. Not to be cached by name.
   */
  static boolean isOverflowEvent(int eventId) {
    return eventId < Kind.values().length;
  }

  /**
   * True when {@code child}, returned by {@link #child} for {@code parentContext}, came from the
   * limit (an overflow context, or the parent for an attribute left out): not to be cached.
   */
  synchronized boolean isOverflow(int parentContext, int child) {
    return child == parentContext
        || (kind[child] != null && Integer.valueOf(child).equals(overflowContext.get(kind[child])));
  }

  /** The context reached from {@code parentContext} by {@code eventId}. */
  synchronized int child(int parentContext, int eventId) {
    if (eventId == LEFT_OUT) {
      return parentContext;
    }
    long key = ((long) parentContext << 32) | eventId;
    Integer id = children.get(key);
    if (id != null) {
      return id;
    }
    Object e = events.get(eventId);
    if (e instanceof RegionEvent r && overflowEvent.get(r.kind()) == eventId) {
      return overflowContext(r.kind());
    }
    if (full(size - overflowContext.size())) {
      return e instanceof RegionEvent r ? overflowContext(r.kind()) : parentContext;
    }
    return add(parentContext, eventId, key);
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
    if (size == parent.length) {
      int n = size * 2;
      parent = Arrays.copyOf(parent, n);
      event = Arrays.copyOf(event, n);
      pathNode = Arrays.copyOf(pathNode, n);
      kind = Arrays.copyOf(kind, n);
    }
    int c = size++;
    parent[c] = parentContext;
    event[c] = eventId;
    if (events.get(eventId) instanceof RegionEvent r) {
      pathNode[c] =
          encoder.pathNode(pathNode[parentContext], regionAttribute, r.name(), wire(r.kind()));
      kind[c] = r.kind();
    } else {
      pathNode[c] = pathNode[parentContext];
      kind[c] = kind[parentContext];
    }
    children.put(key, c);
    return c;
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

  /** Number of contexts, the root included. */
  synchronized int size() {
    return size;
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
  public synchronized void addKey(int context, Entry.Builder entry) {
    if (pathNode[context] != 0) {
      entry.addKey(
          AttributeValue.newBuilder()
              .setAttributeId(regionAttribute)
              .setPathNodeId(pathNode[context]));
    }
    // Scoped attributes from the outermost in; an inner setting of the same key wins.
    Map<String, AttributeSetting> settings = new java.util.LinkedHashMap<>();
    List<AttributeSetting> chain = new ArrayList<>();
    for (int c = context; c != 0; c = parent[c]) {
      if (events.get(event[c]) instanceof AttributeSetting s) {
        chain.add(s);
      }
    }
    for (int i = chain.size() - 1; i >= 0; i--) {
      AttributeSetting s = chain.get(i);
      settings.remove(s.key());
      settings.put(s.key(), s);
    }
    for (AttributeSetting s : settings.values()) {
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
