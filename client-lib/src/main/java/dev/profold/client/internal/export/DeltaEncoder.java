package dev.profold.client.internal.export;

import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.AttributeKind;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Client side of the wire dictionary: assigns ids to strings, attributes and path nodes, and puts
 * into each outgoing delta exactly the definitions the current stream has not carried yet.
 *
 * <p>Ids are stable for the life of the encoder. {@link #newStream()} forgets what was sent, so the
 * next delta carries the source identity and every definition again, as a new Push stream requires.
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
  private int sentStrings;
  private int sentAttributes;
  private int sentPaths;
  private boolean identitySent;

  public DeltaEncoder(SourceIdentity identity) {
    this.identity = identity;
  }

  public SourceIdentity identity() {
    return identity;
  }

  /** The id of {@code s}. */
  public synchronized int string(String s) {
    Integer id = strings.get(s);
    if (id == null) {
      stringById.add(s);
      id = stringById.size();
      strings.put(s, id);
    }
    return id;
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
      attributeById.add(probe.toBuilder().setId(id).build());
      attributes.put(probe, id);
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

  /** The id of the node {@code name} under {@code parent} (0: the root) of path attribute. */
  public synchronized int pathNode(int parent, int attribute, String name, RegionKind kind) {
    int nameId = string(name);
    List<Object> key = List.of(parent, attribute, nameId, kind);
    Integer id = paths.get(key);
    if (id == null) {
      id = pathById.size() + 1;
      pathById.add(
          PathNode.newBuilder()
              .setId(id)
              .setParentId(parent)
              .setAttributeId(attribute)
              .setNameId(nameId)
              .setKind(kind)
              .build());
      paths.put(key, id);
    }
    return id;
  }

  /** Forget what the current stream carried: the next delta re-sends identity and dictionary. */
  public synchronized void newStream() {
    sentStrings = 0;
    sentAttributes = 0;
    sentPaths = 0;
    identitySent = false;
  }

  /**
   * Adds to {@code delta} the source identity (if the stream has not carried it) and every
   * definition the stream has not carried, and marks them as carried. Call it for deltas in the
   * order they are sent on the stream.
   */
  public synchronized Delta.Builder prepare(Delta.Builder delta) {
    if (!identitySent) {
      delta.setSource(identity);
      identitySent = true;
    }
    if (sentStrings == stringById.size()
        && sentAttributes == attributeById.size()
        && sentPaths == pathById.size()) {
      return delta;
    }
    Dictionary.Builder d = Dictionary.newBuilder();
    for (int i = sentStrings; i < stringById.size(); i++) {
      d.putStrings(i + 1, stringById.get(i));
    }
    d.addAllAttributes(attributeById.subList(sentAttributes, attributeById.size()));
    d.addAllPathNodes(pathById.subList(sentPaths, pathById.size()));
    sentStrings = stringById.size();
    sentAttributes = attributeById.size();
    sentPaths = pathById.size();
    return delta.setDictionary(d);
  }
}
