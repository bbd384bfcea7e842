package dev.profold.client.internal.export;

import com.google.protobuf.CodedOutputStream;
import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.AttributeKind;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.IntStack;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Client side of the wire dictionary: assigns ids to strings, attributes and path nodes, and puts
 * into each outgoing delta exactly the definitions it references (a path node's ancestors, names
 * and attribute included) that the current stream has not carried yet.
 *
 * <p>{@link #newStream()} forgets what was sent, so the next delta carries the source identity
 * again, and each definition again the first time a delta on the new stream references it, as a new
 * Push stream requires. Definitions no buffered delta references (a thread that ended long ago, a
 * call path not seen since) are not re-sent.
 *
 * <p><b>Ageing.</b> So that a long-running process whose call paths and attribute values keep
 * changing does not fill the dictionary for good (and then send everything new as {@link
 * #OVERFLOW}), {@link #age} frees the strings and path nodes nothing uses any more once more than
 * half the bound is in use: what no buffered delta references, no {@linkplain #addPinSource pin
 * source} (the recorder's contexts in use) holds, and no look-up returned in the current or the
 * previous ageing round (a delta being built). A kept node keeps its ancestors and their names;
 * attributes are never freed. A freed string or node that is needed again is defined again, under a
 * new id. Ids stay stable while defined: a freed id is handed out again only after {@link
 * #newStream()}, since the current stream's collector still maps it to what it named.
 *
 * <p>Thread-safe (all methods synchronize): recording threads define, the exporter thread encodes.
 */
public final class DeltaEncoder {
  private final SourceIdentity identity;
  private final Map<String, Integer> strings = new HashMap<>();
  private final List<String> stringById = new ArrayList<>();
  private final Map<AttributeDef, Integer> attributes = new HashMap<>();
  private final List<AttributeDef> attributeById = new ArrayList<>();
  private final Map<List<Object>, Integer> paths = new HashMap<>();
  private final List<PathNode> pathById = new ArrayList<>();
  // What the current stream has carried, by id.
  private final BitSet sentStrings = new BitSet();
  private final BitSet sentAttributes = new BitSet();
  private final BitSet sentPaths = new BitSet();
  private boolean identitySent;
  // Ageing: the round each id was last looked up in, freed ids, and what holds ids outside.
  private int[] stringTouched = new int[64];
  private int[] pathTouched = new int[64];
  private int round = 1;
  private final IntStack freeStrings = new IntStack();
  private final IntStack freePaths = new IntStack();
  private final IntStack retiredStrings = new IntStack();
  private final IntStack retiredPaths = new IntStack();
  private final List<Consumer<BitSet>> pinSources = new CopyOnWriteArrayList<>();
  private long freed;

  private long maxDictionaryBytes;

  /** An encoder whose dictionary is bounded at {@value #MAX_DICTIONARY_BYTES} bytes. */
  public DeltaEncoder(SourceIdentity identity) {
    this(identity, MAX_DICTIONARY_BYTES);
  }

  /**
   * An encoder whose dictionary (strings and path nodes, as serialized) is bounded at about {@code
   * maxDictionaryBytes}: one message may carry all of it (a new stream's first, at worst), which
   * must fit the collector's limit. Beyond the bound a new string becomes {@link #OVERFLOW} and a
   * new path node the {@link #OVERFLOW} node of its kind under the root; attribute definitions are
   * never refused (the recorder bounds them) but count towards the bound.
   */
  public DeltaEncoder(SourceIdentity identity, long maxDictionaryBytes) {
    if (maxDictionaryBytes < MAX_STRING_BYTES) {
      throw new IllegalArgumentException(
          "maxDictionaryBytes must be >= " + MAX_STRING_BYTES + ", was " + maxDictionaryBytes);
    }
    this.identity = identity;
    this.maxDictionaryBytes = maxDictionaryBytes;
  }

  /**
   * Lowers the dictionary's bound to {@code bytes} (not below {@value #MAX_STRING_BYTES}): the
   * collector's message limit turned out lower than configured. Definitions made from now on keep
   * within it; those made already stay.
   */
  public synchronized void limitDictionaryBytes(long bytes) {
    maxDictionaryBytes = Math.min(maxDictionaryBytes, Math.max(MAX_STRING_BYTES, bytes));
  }

  public SourceIdentity identity() {
    return identity;
  }

  /** The longest dictionary string the protocol accepts, in UTF-8 bytes. */
  static final int MAX_STRING_BYTES = 4096;

  /**
   * The dictionary's serialized bytes at most, by default: a new stream may re-send it whole in its
   * first message, which must stay well under the collector's message limit (16 MiB by default).
   */
  public static final long MAX_DICTIONARY_BYTES = 4L << 20;

  /**
   * What a dictionary string costs on the wire besides its UTF-8 bytes, at most: the map entry's
   * tag and length, the key's tag and varint id, the value's tag and length.
   */
  static final int STRING_ENTRY_BYTES = 13;

  /** What a string becomes once the dictionary is full. */
  public static final String OVERFLOW = "profold.overflow";

  private long dictionaryBytes;
  private long stringsCut;
  private long refused;

  /**
   * The id of {@code s}, cut to {@value #MAX_STRING_BYTES} UTF-8 bytes (on a character boundary);
   * once a new string would take the dictionary over its bound (see the constructors), it gets the
   * id of {@link #OVERFLOW}. Both are counted ({@link #takeLimitCounts()}).
   */
  public synchronized int string(String s) {
    Integer id = strings.get(s);
    if (id != null) {
      return touchString(id);
    }
    String v = cut(s);
    if (v.length() != s.length()) {
      stringsCut++;
      id = strings.get(v);
      if (id != null) {
        return touchString(id);
      }
    }
    int bytes = stringBytes(v);
    if (dictionaryBytes + bytes > maxDictionaryBytes && !v.equals(OVERFLOW)) {
      refused++;
      return string(OVERFLOW);
    }
    dictionaryBytes += bytes;
    if (freeStrings.isEmpty()) {
      stringById.add(v);
      id = stringById.size();
      stringTouched = ensure(stringTouched, id);
    } else {
      id = freeStrings.pop();
      stringById.set(id - 1, v);
    }
    strings.put(v, id);
    return touchString(id);
  }

  private int touchString(int id) {
    stringTouched[id] = round;
    return id;
  }

  private static int stringBytes(String v) {
    return utf8Length(v) + STRING_ENTRY_BYTES;
  }

  private static int[] ensure(int[] a, int index) {
    return index < a.length ? a : Arrays.copyOf(a, Math.max(index + 1, a.length * 2));
  }

  /**
   * Strings cut to the protocol's length ({@code string_cut}) and strings and path nodes that found
   * the dictionary full ({@code dictionary_full}) since the previous call, kinds with none left
   * out.
   */
  public synchronized Map<String, Long> takeLimitCounts() {
    Map<String, Long> out = new java.util.TreeMap<>();
    if (stringsCut > 0) {
      out.put("string_cut", stringsCut);
    }
    if (refused > 0) {
      out.put("dictionary_full", refused);
    }
    stringsCut = 0;
    refused = 0;
    return out;
  }

  /** {@code s}, or its longest prefix of whole characters within {@value #MAX_STRING_BYTES}. */
  static String cut(String s) {
    if (s.length() * 3 <= MAX_STRING_BYTES) {
      return s; // at most 3 bytes per char (a surrogate pair: 4 bytes for 2 chars)
    }
    int bytes = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (bytes + n > MAX_STRING_BYTES) {
        return s.substring(0, i);
      }
      bytes += n;
      i += Character.charCount(cp);
    }
    return s;
  }

  private static int utf8Length(String s) {
    int bytes = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      i += Character.charCount(cp);
    }
    return bytes;
  }

  /** The id of a dimension attribute. */
  public synchronized int dimension(String name, ValueType type) {
    return attribute(name, type, AttributeKind.ATTRIBUTE_KIND_DIMENSION, "");
  }

  /** The id of a measurement attribute with a base unit ("seconds", "bytes" or ""). */
  public synchronized int measurement(String name, ValueType type, String unit) {
    return attribute(name, type, AttributeKind.ATTRIBUTE_KIND_MEASUREMENT, unit);
  }

  private int attribute(String name, ValueType type, AttributeKind kind, String unit) {
    AttributeDef probe =
        AttributeDef.newBuilder().setName(name).setType(type).setKind(kind).setUnit(unit).build();
    Integer id = attributes.get(probe);
    if (id == null) {
      id = attributeById.size() + 1;
      AttributeDef def = probe.toBuilder().setId(id).build();
      attributeById.add(def);
      attributes.put(probe, id);
      dictionaryBytes +=
          CodedOutputStream.computeMessageSize(Dictionary.ATTRIBUTES_FIELD_NUMBER, def);
    }
    return id;
  }

  /**
   * The definition of attribute {@code id} (as returned by {@link #dimension} / {@link
   * #measurement}).
   */
  public synchronized AttributeDef attribute(int id) {
    return attributeById.get(id - 1);
  }

  /**
   * The id of the node {@code name} under {@code parent} (0: the root) of path attribute. Once a
   * new node would take the dictionary over its bound, it gets the id of the {@link #OVERFLOW} node
   * of its kind under the root instead, counted ({@code dictionary_full}).
   */
  public synchronized int pathNode(int parent, int attribute, String name, RegionKind kind) {
    int nameId = string(name);
    Integer id = paths.get(List.of(parent, attribute, nameId, kind));
    if (id != null) {
      pathTouched[id] = round;
      return id;
    }
    Integer overflow = strings.get(OVERFLOW); // not defined before it is needed
    boolean overflowName = overflow != null && overflow == nameId;
    boolean isOverflowNode = parent == 0 && overflowName;
    int fresh = freePaths.isEmpty() ? pathById.size() + 1 : freePaths.peek();
    PathNode node =
        PathNode.newBuilder()
            .setId(fresh)
            .setParentId(parent)
            .setAttributeId(attribute)
            .setNameId(nameId)
            .setKind(kind)
            .build();
    int bytes = nodeBytes(node);
    if (!isOverflowNode && (overflowName || dictionaryBytes + bytes > maxDictionaryBytes)) {
      if (!overflowName) {
        refused++; // (a name refused by string() was counted there)
      }
      return pathNode(0, attribute, OVERFLOW, kind);
    }
    dictionaryBytes += bytes;
    if (fresh == pathById.size() + 1) {
      pathById.add(node);
      pathTouched = ensure(pathTouched, fresh);
    } else {
      freePaths.pop();
      pathById.set(fresh - 1, node);
    }
    paths.put(List.of(parent, attribute, nameId, kind), fresh);
    pathTouched[fresh] = round;
    return fresh;
  }

  private static int nodeBytes(PathNode node) {
    return CodedOutputStream.computeMessageSize(Dictionary.PATH_NODES_FIELD_NUMBER, node);
  }

  /**
   * Every definition made so far, whatever any stream carried (for tests and tools: the wire
   * carries only what deltas reference, see {@link #prepare}).
   */
  public synchronized Dictionary definitions() {
    Dictionary.Builder d = Dictionary.newBuilder();
    for (int i = 0; i < stringById.size(); i++) {
      if (stringById.get(i) != null) {
        d.putStrings(i + 1, stringById.get(i));
      }
    }
    d.addAllAttributes(attributeById);
    for (PathNode n : pathById) {
      if (n != null) {
        d.addPathNodes(n);
      }
    }
    return d.build();
  }

  // ---- ageing ----

  /**
   * Registers {@code source}, which adds to the set it is given the path node ids it holds outside
   * this encoder (ids it will put into deltas without looking them up again); {@link #age} keeps
   * them. Sources are called by {@link #pin} without this encoder's lock held, so they may take
   * their own (the lock order is theirs first, then this encoder's).
   */
  public void addPinSource(Consumer<BitSet> source) {
    pinSources.add(source);
  }

  /**
   * Adds the path node ids the pin sources hold to {@code pathIds}; call it before {@link #age}.
   */
  public void pin(BitSet pathIds) {
    for (Consumer<BitSet> source : pinSources) {
      source.accept(pathIds);
    }
  }

  /** Bytes of the definitions held (strings, attributes and path nodes, as serialized). */
  public synchronized long dictionaryBytes() {
    return dictionaryBytes;
  }

  /** The dictionary's bound, bytes (see the constructors and {@link #limitDictionaryBytes}). */
  public synchronized long maxDictionaryBytes() {
    return maxDictionaryBytes;
  }

  /** True when more than half the dictionary's bound is in use: time for an {@link #age} round. */
  public synchronized boolean ageingDue() {
    return dictionaryBytes > maxDictionaryBytes / 2;
  }

  /** Strings and path nodes freed by {@link #age} so far. */
  public synchronized long freed() {
    return freed;
  }

  /** Adds the string and path node ids that {@code delta}'s entry keys reference to the sets. */
  public static void references(Delta delta, BitSet stringIds, BitSet pathIds) {
    for (Entry e : delta.getEntriesList()) {
      for (AttributeValue v : e.getKeyList()) {
        if (v.getValueCase() == AttributeValue.ValueCase.STRING_ID) {
          stringIds.set(v.getStringId());
        } else if (v.getValueCase() == AttributeValue.ValueCase.PATH_NODE_ID) {
          pathIds.set(v.getPathNodeId());
        }
      }
    }
  }

  /**
   * One ageing round: frees every string and path node that is not in {@code stringIds} / {@code
   * pathIds} (what the caller's buffered deltas reference, see {@link #references}, and what the
   * pin sources hold, see {@link #pin}), was not looked up in this round or the previous one, and
   * is neither an ancestor nor the name of a node kept. The {@link #OVERFLOW} string and nodes
   * stay, and so do attributes. A freed id is handed out again only after the next {@link
   * #newStream()}. Call it where no delta is on its way between the encoder and the caller's buffer
   * except ones being built now (their look-ups are in this round).
   *
   * @return the number of strings and path nodes freed
   */
  public synchronized int age(BitSet stringIds, BitSet pathIds) {
    Integer overflow = strings.get(OVERFLOW);
    BitSet keptPaths = new BitSet();
    BitSet keptStrings = (BitSet) stringIds.clone();
    if (overflow != null) {
      keptStrings.set(overflow);
    }
    for (int id = 1; id <= pathById.size(); id++) {
      PathNode n = pathById.get(id - 1);
      boolean keep =
          n != null
              && (pathIds.get(id)
                  || pathTouched[id] >= round - 1
                  || (n.getParentId() == 0 && overflow != null && n.getNameId() == overflow));
      for (int a = id; keep && a >= 1 && !keptPaths.get(a); ) { // the node and its ancestors
        PathNode node = pathById.get(a - 1);
        keptPaths.set(a);
        keptStrings.set(node.getNameId());
        a = node.getParentId();
      }
    }
    int n = 0;
    for (int id = 1; id <= pathById.size(); id++) {
      PathNode node = pathById.get(id - 1);
      if (node != null && !keptPaths.get(id)) {
        paths.remove(
            List.of(node.getParentId(), node.getAttributeId(), node.getNameId(), node.getKind()));
        pathById.set(id - 1, null);
        dictionaryBytes -= nodeBytes(node);
        retiredPaths.push(id);
        n++;
      }
    }
    for (int id = 1; id <= stringById.size(); id++) {
      String v = stringById.get(id - 1);
      if (v != null && !keptStrings.get(id) && stringTouched[id] < round - 1) {
        strings.remove(v);
        stringById.set(id - 1, null);
        dictionaryBytes -= stringBytes(v);
        retiredStrings.push(id);
        n++;
      }
    }
    round++;
    freed += n;
    return n;
  }

  /**
   * A new stream: forgets what the current one carried, so the next delta re-sends identity and
   * dictionary, and lets the ids freed so far be handed out again (the new stream's collector maps
   * none of them).
   */
  public synchronized void newStream() {
    resendAll();
    retiredStrings.moveTo(freeStrings);
    retiredPaths.moveTo(freePaths);
  }

  /**
   * Forgets what the current stream carried, which goes on: the next delta re-sends identity and
   * dictionary. Freed ids stay unused, since the stream's collector still maps them.
   */
  public synchronized void resendAll() {
    sentStrings.clear();
    sentAttributes.clear();
    sentPaths.clear();
    identitySent = false;
  }

  /** What the current stream had carried at one moment; see {@link #mark()}. */
  public static final class Mark {
    private final BitSet strings;
    private final BitSet attributes;
    private final BitSet paths;
    private final boolean identity;

    private Mark(BitSet strings, BitSet attributes, BitSet paths, boolean identity) {
      this.strings = (BitSet) strings.clone();
      this.attributes = (BitSet) attributes.clone();
      this.paths = (BitSet) paths.clone();
      this.identity = identity;
    }
  }

  /** What the current stream has carried so far, to {@link #reset} to if a message is not sent. */
  public synchronized Mark mark() {
    return new Mark(sentStrings, sentAttributes, sentPaths, identitySent);
  }

  /**
   * Forgets what the stream carried since {@code mark} (taken on this stream): the message that was
   * to carry it is not sent, so the next one that references it carries it instead.
   */
  public synchronized void reset(Mark mark) {
    sentStrings.and(mark.strings);
    sentAttributes.and(mark.attributes);
    sentPaths.and(mark.paths);
    identitySent = identitySent && mark.identity;
  }

  /**
   * Adds to {@code delta} the source identity (if the stream has not carried it) and the
   * definitions its entries reference that the stream has not carried, and marks them as carried:
   * the strings, attributes and path nodes of entry keys and measurements, and for each path node
   * its ancestors with their names and attributes. A parent node always comes before its children
   * (not necessarily in id order: a freed id reused on a new stream may be below its parent's). Ids
   * this encoder did not assign are left alone. Call it for deltas in the order they are sent on
   * the stream.
   */
  public synchronized Delta.Builder prepare(Delta.Builder delta) {
    if (!identitySent) {
      delta.setSource(identity);
      identitySent = true;
    }
    BitSet strings = new BitSet();
    BitSet attributes = new BitSet();
    BitSet nodes = new BitSet();
    for (Entry e : delta.getEntriesList()) {
      for (AttributeValue v : e.getKeyList()) {
        need(attributes, sentAttributes, attributeById.size(), v.getAttributeId());
        if (v.getValueCase() == AttributeValue.ValueCase.STRING_ID) {
          needString(strings, v.getStringId());
        } else if (v.getValueCase() == AttributeValue.ValueCase.PATH_NODE_ID) {
          needPath(v.getPathNodeId(), strings, attributes, nodes);
        }
      }
      for (Measurement m : e.getMeasurementsList()) {
        need(attributes, sentAttributes, attributeById.size(), m.getAttributeId());
      }
    }
    if (strings.isEmpty() && attributes.isEmpty() && nodes.isEmpty()) {
      return delta;
    }
    Dictionary.Builder d = Dictionary.newBuilder();
    for (int id = strings.nextSetBit(0); id >= 0; id = strings.nextSetBit(id + 1)) {
      d.putStrings(id, stringById.get(id - 1));
    }
    for (int id = attributes.nextSetBit(0); id >= 0; id = attributes.nextSetBit(id + 1)) {
      d.addAttributes(attributeById.get(id - 1));
    }
    BitSet added = new BitSet();
    for (int id = nodes.nextSetBit(0); id >= 0; id = nodes.nextSetBit(id + 1)) {
      addWithAncestors(d, id, nodes, added);
    }
    sentStrings.or(strings);
    sentAttributes.or(attributes);
    sentPaths.or(nodes);
    return delta.setDictionary(d);
  }

  /**
   * Adds node {@code id} to {@code d} after those of its ancestors in {@code nodes} not added yet:
   * a recycled id can be below its parent's, so id order alone does not put parents first.
   */
  private void addWithAncestors(Dictionary.Builder d, int id, BitSet nodes, BitSet added) {
    int depth = 0;
    for (int a = id;
        a >= 1 && nodes.get(a) && !added.get(a);
        a = pathById.get(a - 1).getParentId()) {
      depth++;
    }
    int[] chain = new int[depth];
    int a = id;
    for (int i = depth - 1; i >= 0; i--) {
      chain[i] = a;
      a = pathById.get(a - 1).getParentId();
    }
    for (int n : chain) {
      d.addPathNodes(pathById.get(n - 1));
      added.set(n);
    }
  }

  /** Adds {@code id} (of 1..{@code defined}) to {@code needed} unless {@code sent} has it. */
  private static void need(BitSet needed, BitSet sent, int defined, int id) {
    if (id >= 1 && id <= defined && !sent.get(id)) {
      needed.set(id);
    }
  }

  /** Adds string {@code id} unless the stream carried it or it is not defined (freed). */
  private void needString(BitSet needed, int id) {
    if (id >= 1 && id <= stringById.size() && stringById.get(id - 1) != null) {
      need(needed, sentStrings, stringById.size(), id);
    }
  }

  /** Adds path node {@code id} and its ancestors the stream has not carried, with what they use. */
  private void needPath(int id, BitSet strings, BitSet attributes, BitSet nodes) {
    while (id >= 1
        && id <= pathById.size()
        && pathById.get(id - 1) != null
        && !sentPaths.get(id)
        && !nodes.get(id)) {
      nodes.set(id);
      PathNode n = pathById.get(id - 1);
      needString(strings, n.getNameId());
      need(attributes, sentAttributes, attributeById.size(), n.getAttributeId());
      id = n.getParentId();
    }
  }
}
