package dev.profold.collector.ingest;

import dev.profold.collector.dictionary.Attribute;
import dev.profold.collector.dictionary.AttributeType;
import dev.profold.collector.dictionary.DictionaryFullException;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.AttributeKind;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.ExponentialHistogram;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.ExpHistogram;
import dev.profold.reduce.LongIntMap;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;

/**
 * Validates the deltas of one stream and translates them to global ids ({@link DecodedDelta}).
 *
 * <p>Holds the stream's dictionary: client-chosen ids of strings, attributes and path nodes mapped
 * to global ids (each mapping holds one reference to its global entry, given back by {@link
 * #release} when the stream has ended), at most as many ids as the global dictionary holds entries
 * (a client giving the same definition ever new ids would otherwise grow the stream's maps without
 * bound while the global dictionary, which interns by content, stays put), and with the other open
 * streams at most {@link GlobalDictionary#maxStreamIds} (many clients mapping the same content take
 * memory in proportion to their number). Definitions are applied in order as a delta is read; a
 * delta rejected later in its entries keeps the definitions before the error (redefining with the
 * same content is allowed, so a client may simply resend). A delta is otherwise all or nothing:
 * nothing of a rejected delta reaches the fold.
 *
 * <p>Not thread-safe: one instance per stream, used by one thread at a time (gRPC serialises a
 * stream's messages).
 */
public final class StreamDecoder {
  static final int MAX_NAME = 128;
  static final int MAX_INSTANCE = 256;
  static final int MAX_STRING_BYTES = 4096;
  static final int MAX_KEY_VALUES = 64;
  static final int MAX_BUCKETS = 4096;
  static final int MAX_SOURCE_LABELS = 32;

  /**
   * Most attributes one stream defines. The collector keeps a stream's attributes while it is open,
   * so this bounds what one long-lived client can add to the collector's share of them ({@link
   * GlobalDictionary#maxAttributes}).
   */
  static final int MAX_STREAM_ATTRIBUTES = 4096;

  /** Most characters of a source's host, runtime and SDK versions and label values. */
  static final int MAX_SOURCE_TEXT = 256;

  /**
   * Most values one measurement of one delta may count: 2^53, up to which doubles (and so
   * Prometheus's samples) hold every integer. Far beyond any real interval; a larger count is a
   * client bug, and 2^10 of them would overflow a cumulative count.
   */
  static final long MAX_COUNT = 1L << 53;

  /** Longest path of a path node, in characters: its names from the root joined with '/'. */
  static final int MAX_PATH_CHARS = 1 << 20; // 2048 agent frames of 511 characters on average

  /**
   * Most names in a path: twice the agent's deepest setting (2048 frames). Each new key's path is
   * built and split in the fold, so a chain of half a million empty names would cost the fold
   * thread (and every other stream behind it) minutes.
   */
  static final int MAX_PATH_DEPTH = 4096;

  private static final Pattern ATTRIBUTE_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_.]*");
  private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
  private static final Pattern UNIT = Pattern.compile("[a-z_]*");

  private final GlobalDictionary dictionary;
  private final int maxIds;
  private final LongIntMap strings = LongIntMap.seeded();
  private final LongIntMap attributeIndex = LongIntMap.seeded();
  private final ArrayList<Attribute> attributes = new ArrayList<>();
  private final LongIntMap paths = LongIntMap.seeded();
  private final LongIntMap pathAttribute = LongIntMap.seeded(); // client path id -> global attr id
  private final Cursor cursor = new Cursor();
  private SourceIdentity identity;
  private SourceKey sourceKey;
  private SourceInfo sourceInfo;
  private boolean released;

  public StreamDecoder(GlobalDictionary dictionary) {
    this.dictionary = dictionary;
    this.maxIds = dictionary.maxEntries();
  }

  /** Ids this stream maps. */
  private int ids() {
    return strings.size() + attributes.size() + paths.size();
  }

  /**
   * Interns a definition for one more id this stream is about to map into {@code map}: refused once
   * the stream maps {@link #maxIds}, or the open streams together as many as the dictionary lets
   * them ({@link GlobalDictionary#takeStreamId}). The room is taken before interning, so that a
   * refusal adds nothing to the dictionary, and given back if interning fails; {@code map} is grown
   * first, so that once interned the mapping cannot fail (out of memory) and leave the entry's
   * reference with nothing to give it back. The caller maps the id it returns at once.
   *
   * @throws DictionaryFullException when the stream, the streams' ids or the dictionary is full
   */
  private int internForNewId(LongIntMap map, IntSupplier intern) {
    if (ids() >= maxIds) {
      throw DictionaryFullException.stream(maxIds);
    }
    map.reserveOne();
    dictionary.takeStreamId();
    try {
      return intern.getAsInt();
    } catch (RuntimeException | Error e) {
      dictionary.giveStreamIds(1);
      throw e;
    }
  }

  /**
   * Gives back the dictionary references of every id this stream mapped, and forgets them: the
   * stream has ended and every delta it decoded has been folded (call it on the fold thread, after
   * them). The decoder must not be used afterwards; a second call does nothing.
   */
  public void release() {
    if (released) {
      return;
    }
    released = true;
    strings.forEach((clientId, global) -> dictionary.releaseString(global));
    paths.forEach((clientId, global) -> dictionary.releasePathNode(global));
    for (Attribute a : attributes) {
      dictionary.releaseAttribute(a.id());
    }
    dictionary.giveStreamIds(ids());
  }

  /** The source this stream carries, once its first delta was read; null before. */
  public SourceKey source() {
    return sourceKey;
  }

  /**
   * Validates {@code delta} and returns its decoded form.
   *
   * @param serializedBytes the message's size on the wire, for accounting
   * @throws InvalidDeltaException when a field is invalid; the stream's dictionary keeps the
   *     definitions read before the error
   * @throws DictionaryFullException when the collector's dictionary, or this stream's, is full
   */
  public DecodedDelta decode(Delta delta, int serializedBytes) throws InvalidDeltaException {
    if (released) {
      throw new IllegalStateException("the stream's decoder was used after release()");
    }
    String problem = LenientDeltas.problem(delta);
    if (problem != null) {
      throw new InvalidDeltaException("delta", problem);
    }
    readSource(delta);
    if (delta.getSequence() == 0) {
      throw new InvalidDeltaException("sequence", "must be > 0 (the first delta is 1)");
    }
    if (delta.getSequence() < 0) {
      throw new InvalidDeltaException("sequence", "must be below 2^63");
    }
    if (delta.getFirstSequence() < 0) { // 2^63 or more, read as a signed long
      throw new InvalidDeltaException(
          "first_sequence",
          Long.toUnsignedString(delta.getFirstSequence())
              + " must be below 2^63 (and at most sequence); 0 means the delta covers only its"
              + " sequence");
    }
    if (delta.getFirstSequence() > delta.getSequence()) {
      throw new InvalidDeltaException(
          "first_sequence", delta.getFirstSequence() + " is after sequence " + delta.getSequence());
    }
    long start = delta.getIntervalStartUnixNanos();
    long end = delta.getIntervalEndUnixNanos();
    if (start <= 0) {
      throw new InvalidDeltaException(
          "interval_start_unix_nanos", "must be > 0 (unix epoch nanoseconds), was " + start);
    }
    if (end <= start) {
      throw new InvalidDeltaException(
          "interval_end_unix_nanos",
          "must be after interval_start_unix_nanos (" + start + "), was " + end);
    }
    if (delta.hasDictionary()) {
      readDictionary(delta.getDictionary());
    }
    DecodedDelta.Builder b = new DecodedDelta.Builder();
    b.source = sourceKey;
    b.info = sourceInfo;
    b.sequence = delta.getSequence();
    b.firstSequence = delta.getFirstSequence();
    b.startUnixNanos = start;
    b.endUnixNanos = end;
    b.clientCpuNanos = unsigned(delta.getOverhead().getCpuNanos());
    b.clientEventsDropped = unsigned(delta.getOverhead().getEventsDropped());
    b.clientBytesHeld = unsigned(delta.getOverhead().getBytesHeld());
    b.clientContexts = unsigned(delta.getOverhead().getContexts());
    b.clientContextsLimit = unsigned(delta.getOverhead().getContextsLimit());
    b.clientDictionaryBytes = unsigned(delta.getOverhead().getDictionaryBytes());
    b.clientDictionaryBytesLimit = unsigned(delta.getOverhead().getDictionaryBytesLimit());
    b.clientMisuse = misuse(delta.getOverhead().getMisuseMap());
    b.clientExport = export(delta.getOverhead());
    b.serializedBytes = serializedBytes;
    b.threadActivity = ActivityReader.read(delta);
    b.ioUnobservedNanos = ActivityReader.ioUnobserved(delta);
    readEntries(delta, b);
    return b.build();
  }

  private void readSource(Delta delta) throws InvalidDeltaException {
    if (!delta.hasSource()) {
      if (identity == null) {
        throw new InvalidDeltaException(
            "source",
            "required on the first delta of a Push stream and on every Export call; set service,"
                + " instance, incarnation_id and process_start_unix_nanos");
      }
      return;
    }
    SourceIdentity s = delta.getSource();
    if (identity != null) {
      if (!identity.equals(s)) {
        if (s.getIncarnationId() != identity.getIncarnationId()
            || !s.getService().equals(identity.getService())
            || !s.getInstance().equals(identity.getInstance())) {
          throw new InvalidDeltaException(
              "source",
              "a Push stream carries one source ("
                  + sourceKey
                  + ", incarnation "
                  + Long.toUnsignedString(identity.getIncarnationId())
                  + "); open a new stream for another one");
        }
      } else {
        return;
      }
    }
    checkName("source.service", s.getService(), MAX_NAME);
    checkName("source.instance", s.getInstance(), MAX_INSTANCE);
    if (s.getIncarnationId() == 0) {
      throw new InvalidDeltaException(
          "source.incarnation_id",
          "must be a random non-zero 64-bit number drawn at process start");
    }
    if (s.getProcessStartUnixNanos() <= 0) {
      throw new InvalidDeltaException(
          "source.process_start_unix_nanos",
          "must be > 0 (unix epoch nanoseconds), was " + s.getProcessStartUnixNanos());
    }
    if (s.getLabelsCount() > MAX_SOURCE_LABELS) {
      throw new InvalidDeltaException(
          "source.labels", "at most " + MAX_SOURCE_LABELS + " labels, got " + s.getLabelsCount());
    }
    checkLength("source.host", s.getHost(), MAX_SOURCE_TEXT);
    checkLength("source.runtime_version", s.getRuntimeVersion(), MAX_SOURCE_TEXT);
    checkLength("source.sdk_version", s.getSdkVersion(), MAX_SOURCE_TEXT);
    for (Map.Entry<String, String> e : s.getLabelsMap().entrySet()) {
      if (e.getKey().length() > MAX_NAME) {
        throw new InvalidDeltaException(
            "source.labels[\"" + e.getKey().substring(0, 64) + "...\"]",
            "label names have at most " + MAX_NAME + " characters, got " + e.getKey().length());
      }
      if (!LABEL_NAME.matcher(e.getKey()).matches()) {
        throw new InvalidDeltaException(
            "source.labels[\"" + e.getKey() + "\"]",
            "label names must match [a-zA-Z_][a-zA-Z0-9_]*");
      }
      checkLength("source.labels[\"" + e.getKey() + "\"]", e.getValue(), MAX_SOURCE_TEXT);
    }
    identity = s;
    sourceKey = new SourceKey(s.getService(), s.getInstance());
    sourceInfo =
        new SourceInfo(
            s.getIncarnationId(),
            s.getProcessStartUnixNanos(),
            s.getHost(),
            s.getPid(),
            s.getRuntimeVersion(),
            s.getSdkVersion(),
            s.getLabelsMap());
  }

  /**
   * Checks an optional text of the source (shown on every scrape as a label of {@code
   * profold_source_info}): at most {@code max} characters, empty allowed.
   */
  private static void checkLength(String field, String value, int max)
      throws InvalidDeltaException {
    if (value.length() > max) {
      throw new InvalidDeltaException(
          field, "at most " + max + " characters, got " + value.length());
    }
  }

  private static void checkName(String field, String value, int max) throws InvalidDeltaException {
    if (value.isEmpty()) {
      throw new InvalidDeltaException(field, "required, must not be empty");
    }
    if (value.length() > max) {
      throw new InvalidDeltaException(
          field, "at most " + max + " characters, got " + value.length());
    }
  }

  private void readDictionary(Dictionary d) throws InvalidDeltaException {
    for (Map.Entry<Integer, String> e : d.getStringsMap().entrySet()) {
      int id = e.getKey();
      String field = "dictionary.strings[" + Integer.toUnsignedString(id) + "]";
      if (id == 0) {
        throw new InvalidDeltaException(field, "string id 0 is reserved; use ids > 0");
      }
      String value = e.getValue();
      // A UTF-16 char takes at most 3 UTF-8 bytes: only long strings need encoding to check.
      if (value.length() > MAX_STRING_BYTES / 3) {
        int bytes = value.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_STRING_BYTES) {
          throw new InvalidDeltaException(
              field, "longer than " + MAX_STRING_BYTES + " UTF-8 bytes (" + bytes + ")");
        }
      }
      int previous = strings.get(id & 0xFFFFFFFFL);
      if (previous != LongIntMap.MISSING) {
        // Compared before any interning: with the dictionary full, interning the new content
        // would be refused as "dictionary full", a retryable error that no retry can cure.
        String had = dictionary.string(previous);
        if (!value.equals(had)) {
          throw new InvalidDeltaException(
              field,
              "already defined in this stream as \""
                  + had
                  + "\"; ids cannot be redefined with different content");
        }
        continue;
      }
      int global = internForNewId(strings, () -> dictionary.internString(value));
      strings.put(id & 0xFFFFFFFFL, global);
    }
    for (int i = 0; i < d.getAttributesCount(); i++) {
      readAttribute(d.getAttributes(i), "dictionary.attributes[" + i + "]");
    }
    for (int i = 0; i < d.getPathNodesCount(); i++) {
      readPathNode(d.getPathNodes(i), "dictionary.path_nodes[" + i + "]");
    }
  }

  private void readAttribute(AttributeDef a, String field) throws InvalidDeltaException {
    if (a.getId() == 0) {
      throw new InvalidDeltaException(field + ".id", "attribute id 0 is reserved; use ids > 0");
    }
    if (!ATTRIBUTE_NAME.matcher(a.getName()).matches() || a.getName().length() > MAX_NAME) {
      throw new InvalidDeltaException(
          field + ".name",
          "\""
              + a.getName()
              + "\" is not a valid attribute name ([a-zA-Z_][a-zA-Z0-9_.]*, at most "
              + MAX_NAME
              + " characters)");
    }
    AttributeType type = typeOf(a.getType(), field + ".type");
    boolean measurement;
    if (a.getKind() == AttributeKind.ATTRIBUTE_KIND_MEASUREMENT) {
      measurement = true;
      if (type != AttributeType.INT && type != AttributeType.DOUBLE) {
        throw new InvalidDeltaException(
            field + ".type", "a MEASUREMENT attribute must be VALUE_TYPE_INT or VALUE_TYPE_DOUBLE");
      }
    } else if (a.getKind() == AttributeKind.ATTRIBUTE_KIND_DIMENSION) {
      measurement = false;
    } else {
      throw new InvalidDeltaException(
          field + ".kind", "must be ATTRIBUTE_KIND_DIMENSION or ATTRIBUTE_KIND_MEASUREMENT");
    }
    if (!UNIT.matcher(a.getUnit()).matches() || a.getUnit().length() > 32) {
      throw new InvalidDeltaException(
          field + ".unit",
          "\"" + a.getUnit() + "\" is not a base-unit word such as seconds or bytes ([a-z_]*)");
    }
    long key = a.getId() & 0xFFFFFFFFL;
    int index = attributeIndex.get(key);
    if (index == LongIntMap.MISSING && attributes.size() >= MAX_STREAM_ATTRIBUTES) {
      // Checked before interning: the collector keeps a stream's attributes while it is open, so
      // one stream defining ever new ones (a measurement per user or endpoint) would take the
      // collector's whole share of attributes.
      throw new InvalidDeltaException(
          field,
          "a stream defines at most "
              + MAX_STREAM_ATTRIBUTES
              + " attributes (dimensions and measurements), and this is one more (\""
              + a.getName()
              + "\"); names made of ids, users or endpoints belong in attribute values, not"
              + " names");
    }
    if (index != LongIntMap.MISSING) {
      // Compared before any interning: a redefinition is refused without adding its attribute to
      // the dictionary, where it would stay until the stream ends.
      Attribute defined = attributes.get(index);
      if (!defined.name().equals(a.getName())
          || defined.type() != type
          || defined.measurement() != measurement
          || !defined.unit().equals(a.getUnit())) {
        throw new InvalidDeltaException(
            field + ".id",
            Integer.toUnsignedString(a.getId())
                + " is already defined in this stream as "
                + defined
                + "; ids cannot be redefined with different content");
      }
      return;
    }
    attributes.ensureCapacity(attributes.size() + 1);
    int global =
        internForNewId(
            attributeIndex,
            () -> dictionary.internAttribute(a.getName(), type, measurement, a.getUnit()));
    attributes.add(dictionary.attribute(global));
    attributeIndex.put(key, attributes.size() - 1); // after the list: an index never dangles
  }

  private static AttributeType typeOf(ValueType t, String field) throws InvalidDeltaException {
    return switch (t) {
      case VALUE_TYPE_STRING -> AttributeType.STRING;
      case VALUE_TYPE_INT -> AttributeType.INT;
      case VALUE_TYPE_DOUBLE -> AttributeType.DOUBLE;
      case VALUE_TYPE_BOOL -> AttributeType.BOOL;
      case VALUE_TYPE_PATH -> AttributeType.PATH;
      case VALUE_TYPE_UNSPECIFIED, UNRECOGNIZED ->
          throw new InvalidDeltaException(field, "must be set (STRING, INT, DOUBLE, BOOL or PATH)");
    };
  }

  private Attribute attribute(int clientId, String field) throws InvalidDeltaException {
    int index = attributeIndex.get(clientId & 0xFFFFFFFFL);
    if (index == LongIntMap.MISSING) {
      throw new InvalidDeltaException(field, undefinedAttribute(clientId));
    }
    return attributes.get(index);
  }

  private static String undefinedAttribute(int clientId) {
    return "attribute "
        + Integer.toUnsignedString(clientId)
        + " is not defined in this stream's dictionary (definitions are scoped to one Push"
        + " stream or Export call: send them again after reconnecting)";
  }

  private void readPathNode(PathNode n, String field) throws InvalidDeltaException {
    if (n.getId() == 0) {
      throw new InvalidDeltaException(field + ".id", "path node id 0 is reserved; use ids > 0");
    }
    Attribute attr = attribute(n.getAttributeId(), field + ".attribute_id");
    if (attr.type() != AttributeType.PATH) {
      throw new InvalidDeltaException(
          field + ".attribute_id",
          "attribute \"" + attr.name() + "\" is " + attr.type() + ", a path node needs a PATH one");
    }
    int parent = 0;
    if (n.getParentId() != 0) {
      parent = paths.get(n.getParentId() & 0xFFFFFFFFL);
      if (parent == LongIntMap.MISSING) {
        throw new InvalidDeltaException(
            field + ".parent_id",
            "path node "
                + Integer.toUnsignedString(n.getParentId())
                + " is not defined yet (define parents before children)");
      }
      if (pathAttribute.get(n.getParentId() & 0xFFFFFFFFL) != attr.id()) {
        throw new InvalidDeltaException(
            field + ".parent_id", "the parent belongs to another path attribute");
      }
    }
    int name = strings.get(n.getNameId() & 0xFFFFFFFFL);
    if (name == LongIntMap.MISSING) {
      throw new InvalidDeltaException(
          field + ".name_id",
          "string " + Integer.toUnsignedString(n.getNameId()) + " is not defined in this stream");
    }
    int depth = parent == 0 ? 1 : dictionary.pathNode(parent).depth() + 1;
    if (depth > MAX_PATH_DEPTH) {
      throw new InvalidDeltaException(
          field,
          "the path of node "
              + Integer.toUnsignedString(n.getId())
              + " would have "
              + depth
              + " names; at most "
              + MAX_PATH_DEPTH
              + " (the Java agent's deepest setting is 2048 frames)");
    }
    long length = dictionary.length(parent, name);
    if (length > MAX_PATH_CHARS) {
      throw new InvalidDeltaException(
          field,
          "the path of node "
              + Integer.toUnsignedString(n.getId())
              + " would be "
              + length
              + " characters long; at most "
              + MAX_PATH_CHARS
              + " (names from the top-level node joined with '/')");
    }
    String kind =
        switch (n.getKind()) {
          case REGION_KIND_UNSPECIFIED, UNRECOGNIZED -> "";
          default -> n.getKind().name().substring("REGION_KIND_".length()).toLowerCase(Locale.ROOT);
        };
    long key = n.getId() & 0xFFFFFFFFL;
    int previous = paths.get(key);
    if (previous != LongIntMap.MISSING) {
      // Compared before any interning, as for strings.
      dev.profold.collector.dictionary.PathNode had = dictionary.pathNode(previous);
      if (had.parent() != parent
          || had.attribute() != attr.id()
          || !had.name().equals(dictionary.string(name))
          || !had.kind().equals(kind)) {
        throw new InvalidDeltaException(
            field + ".id",
            "path node "
                + Integer.toUnsignedString(n.getId())
                + " is already defined in this stream with different content");
      }
      return;
    }
    pathAttribute.reserveOne();
    int under = parent; // effectively final, for the lambda
    int global =
        internForNewId(paths, () -> dictionary.internPathNode(under, attr.id(), name, kind));
    pathAttribute.put(key, attr.id()); // before the node: read only for nodes this stream maps
    paths.put(key, global);
  }

  /** The names of the current entry's key values so far (readEntries). */
  private final String[] keyNames = new String[MAX_KEY_VALUES];

  private void readEntries(Delta delta, DecodedDelta.Builder b) throws InvalidDeltaException {
    int entries = delta.getEntriesCount();
    int keyValues = 0;
    int measurements = 0;
    int buckets = 0;
    // The cheap checks first, before the columns are sized from the counts: an entry of more key
    // values than allowed, a measurement without a state (two bytes on the wire each), or a run of
    // more buckets than allowed (12 bytes decoded for each byte of a count), must not make the
    // decoder allocate for them.
    Cursor at = cursor;
    for (int e = 0; e < entries; e++) {
      Entry entry = delta.getEntries(e);
      at.entry(e);
      if (entry.getKeyCount() > MAX_KEY_VALUES) {
        throw at.error(".key", "at most " + MAX_KEY_VALUES + " values, got " + entry.getKeyCount());
      }
      keyValues += entry.getKeyCount();
      measurements += entry.getMeasurementsCount();
      for (int j = 0; j < entry.getMeasurementsCount(); j++) {
        Measurement ms = entry.getMeasurements(j);
        if (!ms.hasState()) {
          at.measurement(j);
          throw at.error(".state", "required");
        }
        ExponentialHistogram h = ms.getState().getHistogram();
        if (h.getPositive().getCountsCount() > MAX_BUCKETS
            || h.getNegative().getCountsCount() > MAX_BUCKETS) {
          at.measurement(j);
          throw tooManyBuckets(at, h);
        }
        buckets += nonZero(h.getPositive()) + nonZero(h.getNegative());
      }
    }
    b.size(entries, keyValues, measurements, buckets);
    int k = 0;
    int m = 0;
    int slab = 0;
    for (int e = 0; e < entries; e++) {
      Entry entry = delta.getEntries(e);
      at.entry(e);
      b.keyStart[e] = k;
      b.measStart[e] = m;
      if (entry.getKeyCount() > MAX_KEY_VALUES) {
        throw at.error(".key", "at most " + MAX_KEY_VALUES + " values, got " + entry.getKeyCount());
      }
      for (int i = 0; i < entry.getKeyCount(); i++) {
        AttributeValue v = entry.getKey(i);
        at.key(i);
        Attribute a = attribute(v.getAttributeId(), at);
        if (a.measurement()) {
          throw at.error(
              ".attribute_id",
              "\"" + a.name() + "\" is a MEASUREMENT; keys hold DIMENSION attributes");
        }
        for (int p = b.keyStart[e]; p < k; p++) {
          if (b.keyAttr[p] == a.id()) {
            throw at.error(".attribute_id", "\"" + a.name() + "\" appears twice in this key");
          }
          if (keyNames[p - b.keyStart[e]].equals(a.name())) {
            // Groups have one label per name: the fold would let one value overwrite the other.
            throw at.error(
                ".attribute_id",
                "\""
                    + a.name()
                    + "\" appears twice in this key, as attributes of different types or units;"
                    + " send each name once");
          }
        }
        keyNames[i] = a.name();
        b.keyAttr[k] = a.id();
        b.keyValue[k] = keyValue(v, a, at);
        k++;
      }
      at.entry(e);
      if (entry.getMeasurementsCount() == 0) {
        throw at.error(".measurements", "an entry needs at least one measurement");
      }
      for (int j = 0; j < entry.getMeasurementsCount(); j++) {
        Measurement ms = entry.getMeasurements(j);
        at.measurement(j);
        Attribute a = attribute(ms.getAttributeId(), at);
        if (!a.measurement()) {
          throw at.error(
              ".attribute_id",
              "\"" + a.name() + "\" is a DIMENSION; measurements need MEASUREMENT attributes");
        }
        for (int p = b.measStart[e]; p < m; p++) {
          if (b.measAttr[p] == a.id()) {
            throw at.error(".attribute_id", "\"" + a.name() + "\" appears twice in this entry");
          }
        }
        if (!ms.hasState()) {
          throw at.error(".state", "required");
        }
        b.measAttr[m] = a.id();
        slab = readState(ms.getState(), at, b, m, slab);
        m++;
      }
    }
    b.keyStart[entries] = k;
    b.measStart[entries] = m;
  }

  /** The attribute an entry refers to, with the error naming the cursor's field. */
  private Attribute attribute(int clientId, Cursor at) throws InvalidDeltaException {
    int index = attributeIndex.get(clientId & 0xFFFFFFFFL);
    if (index == LongIntMap.MISSING) {
      throw at.error(".attribute_id", undefinedAttribute(clientId));
    }
    return attributes.get(index);
  }

  private long keyValue(AttributeValue v, Attribute a, Cursor at) throws InvalidDeltaException {
    AttributeValue.ValueCase expected =
        switch (a.type()) {
          case STRING -> AttributeValue.ValueCase.STRING_ID;
          case INT -> AttributeValue.ValueCase.INT_VALUE;
          case DOUBLE -> AttributeValue.ValueCase.DOUBLE_VALUE;
          case BOOL -> AttributeValue.ValueCase.BOOL_VALUE;
          case PATH -> AttributeValue.ValueCase.PATH_NODE_ID;
        };
    if (v.getValueCase() != expected) {
      throw at.error(
          "",
          "attribute \""
              + a.name()
              + "\" is "
              + a.type()
              + ", so the value must be set as "
              + expected.name().toLowerCase(Locale.ROOT)
              + " (got "
              + v.getValueCase().name().toLowerCase(Locale.ROOT)
              + ")");
    }
    return switch (a.type()) {
      case STRING -> definedString(v, at);
      case PATH -> definedPath(v, a, at);
      case INT -> v.getIntValue();
      case DOUBLE -> {
        if (!Double.isFinite(v.getDoubleValue())) {
          throw at.error(".double_value", "must be finite");
        }
        yield Double.doubleToLongBits(v.getDoubleValue());
      }
      case BOOL -> v.getBoolValue() ? 1 : 0;
    };
  }

  private long definedString(AttributeValue v, Cursor at) throws InvalidDeltaException {
    int id = strings.get(v.getStringId() & 0xFFFFFFFFL);
    if (id == LongIntMap.MISSING) {
      throw at.error(
          ".string_id",
          "string "
              + Integer.toUnsignedString(v.getStringId())
              + " is not defined in this stream's dictionary");
    }
    return id;
  }

  private long definedPath(AttributeValue v, Attribute a, Cursor at) throws InvalidDeltaException {
    int id = paths.get(v.getPathNodeId() & 0xFFFFFFFFL);
    if (id == LongIntMap.MISSING) {
      throw at.error(
          ".path_node_id",
          "path node "
              + Integer.toUnsignedString(v.getPathNodeId())
              + " is not defined in this stream's dictionary");
    }
    if (pathAttribute.get(v.getPathNodeId() & 0xFFFFFFFFL) != a.id()) {
      throw at.error(".path_node_id", "the node belongs to another path attribute");
    }
    return id;
  }

  private static int readState(MetricState s, Cursor at, DecodedDelta.Builder b, int m, int slab)
      throws InvalidDeltaException {
    if (s.getCount() <= 0) {
      throw at.error(
          ".state.count",
          s.getCount() == 0
              ? "must be > 0 (leave out measurements without values)"
              : Long.toUnsignedString(s.getCount())
                  + " is too large: at most 2^53 ("
                  + MAX_COUNT
                  + ") values per measurement and delta");
    }
    // Finite values can add up beyond a double: a sum or sum of squares may be infinite (a
    // value above 1.34e154 squares to +Infinity), and refusing it would lose the whole delta.
    notNaN(s.getSum(), at, ".state.sum");
    finite(s.getMin(), at, ".state.min");
    finite(s.getMax(), at, ".state.max");
    notNaN(s.getSumOfSquares(), at, ".state.sum_of_squares");
    if (s.getMin() > s.getMax()) {
      throw at.error(
          ".state.min", "min (" + s.getMin() + ") is greater than max (" + s.getMax() + ")");
    }
    if (s.getSumOfSquares() < 0) {
      throw at.error(".state.sum_of_squares", "must be >= 0");
    }
    b.count[m] = s.getCount();
    b.sum[m] = s.getSum();
    b.min[m] = s.getMin();
    b.max[m] = s.getMax();
    b.sumOfSquares[m] = s.getSumOfSquares();
    if (!s.hasHistogram()) {
      checkCountLimit(s, at);
      b.scale[m] = ExpHistogram.MAX_SCALE;
      b.posFrom[m] = slab;
      b.negFrom[m] = slab;
      return slab;
    }
    ExponentialHistogram h = s.getHistogram();
    if (h.getScale() < ExpHistogram.MIN_SCALE || h.getScale() > ExpHistogram.MAX_SCALE) {
      throw at.error(
          ".state.histogram.scale",
          "must be within "
              + ExpHistogram.MIN_SCALE
              + ".."
              + ExpHistogram.MAX_SCALE
              + ", was "
              + h.getScale());
    }
    long total = h.getZeroCount();
    if (total < 0) {
      throw at.error(".state.histogram.zero_count", "too large (above 2^63 - 1)");
    }
    b.scale[m] = h.getScale();
    b.zeroCount[m] = h.getZeroCount();
    b.posFrom[m] = slab;
    slab = copyBuckets(h.getPositive(), h.getScale(), at, ".state.histogram.positive", b, slab);
    b.posLen[m] = slab - b.posFrom[m];
    b.negFrom[m] = slab;
    slab = copyBuckets(h.getNegative(), h.getScale(), at, ".state.histogram.negative", b, slab);
    b.negLen[m] = slab - b.negFrom[m];
    for (int i = b.posFrom[m]; i < slab; i++) {
      total += b.bucketCount[i];
      if (total < 0) {
        throw at.error(".state.histogram", "bucket counts add up to more than 2^63 - 1");
      }
    }
    if (total != s.getCount()) {
      throw at.error(
          ".state.histogram",
          "zero_count plus all bucket counts is "
              + total
              + " but count is "
              + s.getCount()
              + "; they must be equal (or leave the histogram out)");
    }
    checkCountLimit(s, at); // after the histogram's own checks, which name its fields
    return slab;
  }

  /** Refuses a count above {@link #MAX_COUNT}; the histogram's counts add up to it or less. */
  private static void checkCountLimit(MetricState s, Cursor at) throws InvalidDeltaException {
    if (s.getCount() > MAX_COUNT) {
      throw at.error(
          ".state.count",
          "too large: at most 2^53 ("
              + MAX_COUNT
              + ") values per measurement and delta, was "
              + s.getCount()
              + "; a count that large is a bug in the client (check that it sends the count of"
              + " values, not their sum or a timestamp)");
    }
  }

  /**
   * The error for a histogram with a run of more than {@link #MAX_BUCKETS} buckets (apart, so that
   * the entry loop stays small enough for the JIT to treat it as the hot loop it is).
   */
  private static InvalidDeltaException tooManyBuckets(Cursor at, ExponentialHistogram h) {
    boolean positive = h.getPositive().getCountsCount() > MAX_BUCKETS;
    return at.error(
        ".state.histogram." + (positive ? "positive" : "negative") + ".counts",
        "at most "
            + MAX_BUCKETS
            + " buckets, got "
            + (positive ? h.getPositive() : h.getNegative()).getCountsCount());
  }

  private static int nonZero(ExponentialHistogram.Buckets buckets) {
    int n = 0;
    for (int i = 0; i < buckets.getCountsCount(); i++) {
      n += buckets.getCounts(i) != 0 ? 1 : 0;
    }
    return n;
  }

  /**
   * Appends the non-zero buckets of a dense wire run at {@code scale} to the slab; returns the new
   * slab end. A non-zero bucket must be one a finite double has at that scale ({@link
   * ExpHistogram#minIndex} .. {@link ExpHistogram#maxIndex}): beyond, its boundaries are not
   * doubles (at scale 0, bucket 1024 would end at 2^1025) and no value can be in it.
   */
  private static int copyBuckets(
      ExponentialHistogram.Buckets buckets,
      int scale,
      Cursor at,
      String field,
      DecodedDelta.Builder b,
      int slab)
      throws InvalidDeltaException {
    int n = buckets.getCountsCount();
    if (n > MAX_BUCKETS) {
      throw at.error(field + ".counts", "at most " + MAX_BUCKETS + " buckets, got " + n);
    }
    long last = (long) buckets.getOffset() + n - 1;
    if (n > 0 && last > Integer.MAX_VALUE) {
      throw at.error(field + ".offset", "offset + bucket count overflows");
    }
    int offset = buckets.getOffset();
    int lowest = ExpHistogram.minIndex(scale);
    int highest = ExpHistogram.maxIndex(scale);
    for (int i = 0; i < n; i++) {
      long c = buckets.getCounts(i);
      if (c < 0) {
        throw at.error(field + ".counts[" + i + "]", "too large (above 2^63 - 1)");
      }
      if (c != 0 && (offset + i < lowest || offset + i > highest)) {
        throw at.error(
            field + ".counts[" + i + "]",
            "bucket "
                + (offset + i)
                + " (offset "
                + offset
                + " + "
                + i
                + ") is outside "
                + lowest
                + ".."
                + highest
                + ", the buckets finite doubles have at scale "
                + scale
                + " (from the bucket of 2^-1074 to that of the largest double); compute"
                + " indices as in docs/protocol.md §6");
      }
      if (c != 0) {
        b.bucketIndex[slab] = offset + i;
        b.bucketCount[slab] = c;
        slab++;
      }
    }
    return slab;
  }

  private static void notNaN(double v, Cursor at, String field) throws InvalidDeltaException {
    if (Double.isNaN(v)) {
      throw at.error(field, "must be a number (or an infinity from an overflow), was NaN");
    }
  }

  private static void finite(double v, Cursor at, String field) throws InvalidDeltaException {
    if (!Double.isFinite(v)) {
      throw at.error(field, "must be a finite number, was " + v);
    }
  }

  /**
   * Where in a delta's entries the decoder is. Field paths for errors are rendered from it only
   * when an error is thrown, so validating an entry allocates nothing.
   */
  private static final class Cursor {
    private int entry;
    private char part; // 0: the entry itself, 'k': a key value, 'm': a measurement
    private int index;

    void entry(int e) {
      entry = e;
      part = 0;
    }

    void key(int i) {
      part = 'k';
      index = i;
    }

    void measurement(int j) {
      part = 'm';
      index = j;
    }

    InvalidDeltaException error(String suffix, String problem) {
      String at =
          "entries["
              + entry
              + "]"
              + switch (part) {
                case 'k' -> ".key[" + index + "]";
                case 'm' -> ".measurements[" + index + "]";
                default -> "";
              };
      return new InvalidDeltaException(at + suffix, problem);
    }
  }

  /**
   * A {@code uint64} field's value as a long that is not negative: values of 2^63 and more (read as
   * negative) are held at {@link Long#MAX_VALUE}.
   */
  static long unsigned(long wire) {
    return wire < 0 ? Long.MAX_VALUE : wire;
  }

  /** The client's report of its export, each value read as {@link #unsigned}. */
  static dev.profold.sinks.snapshot.ClientExport export(dev.profold.proto.v1.ClientOverhead o) {
    return new dev.profold.sinks.snapshot.ClientExport(
        unsigned(o.getExportReconnects()),
        unsigned(o.getExportDeltasMerged()),
        unsigned(o.getExportBufferedBytes()),
        unsigned(o.getExportBufferLimitBytes()));
  }

  /** Kinds of client misuse kept per delta and per source at most. */
  static final int MAX_MISUSE_KINDS = 16;

  private static final java.util.regex.Pattern MISUSE_KIND =
      java.util.regex.Pattern.compile("[a-z][a-z0-9_]{0,39}");

  /**
   * The client's misuse counts with valid kinds ({@code [a-z][a-z0-9_]*}, at most 40 characters)
   * and counts, at most {@link #MAX_MISUSE_KINDS} of them in name order; the rest is ignored (a
   * client cannot grow the collector's label sets).
   */
  static java.util.Map<String, Long> misuse(java.util.Map<String, Long> reported) {
    if (reported.isEmpty()) {
      return java.util.Map.of();
    }
    java.util.Map<String, Long> out = new java.util.TreeMap<>();
    for (java.util.Map.Entry<String, Long> e : new java.util.TreeMap<>(reported).entrySet()) {
      if (out.size() < MAX_MISUSE_KINDS
          && e.getValue() != 0
          && MISUSE_KIND.matcher(e.getKey()).matches()) {
        out.put(e.getKey(), unsigned(e.getValue()));
      }
    }
    return java.util.Collections.unmodifiableMap(out);
  }
}
