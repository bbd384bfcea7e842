package dev.profold.collector.dictionary;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Collector-wide interning of strings, attributes and path nodes. Every stream translates its own
 * client-chosen ids to these global ids once, when definitions arrive; entries then carry only
 * global ids, so per-entry work never touches this class.
 *
 * <p>Ids are dense, start at 1 and are never reused. Size is bounded by {@code maxEntries} (all
 * three tables together): interning past it throws {@link DictionaryFullException}.
 *
 * <p>Thread-safe: interning and look-ups synchronize on this object (both are rare: at definition
 * time and when a new group is created).
 */
public final class GlobalDictionary {
  private final int maxEntries;
  private final Map<String, Integer> stringIds = new HashMap<>();
  private final List<String> strings = new ArrayList<>();
  private final Map<Attribute, Integer> attributeIds = new HashMap<>();
  private final List<Attribute> attributes = new ArrayList<>();
  private final Map<PathKey, Integer> pathIds = new HashMap<>();
  private final List<PathNode> paths = new ArrayList<>();

  private record PathKey(int parent, int attribute, int name, String kind) {}

  public GlobalDictionary(int maxEntries) {
    this.maxEntries = maxEntries;
    strings.add(null);
    attributes.add(null);
    paths.add(null);
  }

  private void checkRoom() {
    if (size() >= maxEntries) {
      throw new DictionaryFullException(maxEntries);
    }
  }

  /** Number of interned strings, attributes and path nodes together. */
  public synchronized int size() {
    return strings.size() + attributes.size() + paths.size() - 3;
  }

  /** The global id of {@code s}, interning it if new. */
  public synchronized int internString(String s) {
    Integer id = stringIds.get(s);
    if (id != null) {
      return id;
    }
    checkRoom();
    int fresh = strings.size();
    strings.add(s);
    stringIds.put(s, fresh);
    return fresh;
  }

  public synchronized String string(int id) {
    return strings.get(id);
  }

  /** The global id of the attribute with these properties, interning it if new. */
  public synchronized int internAttribute(
      String name, AttributeType type, boolean measurement, String unit) {
    Attribute probe = new Attribute(0, name, type, measurement, unit);
    Integer id = attributeIds.get(probe);
    if (id != null) {
      return id;
    }
    checkRoom();
    int fresh = attributes.size();
    attributes.add(new Attribute(fresh, name, type, measurement, unit));
    attributeIds.put(probe, fresh);
    return fresh;
  }

  public synchronized Attribute attribute(int id) {
    return attributes.get(id);
  }

  /**
   * The global id of the node named {@code nameId} (a global string id) under {@code parent} (0 for
   * the root) in path attribute {@code attribute}, interning it if new.
   */
  public synchronized int internPathNode(int parent, int attribute, int nameId, String kind) {
    PathKey key = new PathKey(parent, attribute, nameId, kind);
    Integer id = pathIds.get(key);
    if (id != null) {
      return id;
    }
    checkRoom();
    String name = strings.get(nameId);
    PathNode p = parent == 0 ? null : paths.get(parent);
    String path = p == null ? name : p.path() + "/" + name;
    int depth = p == null ? 1 : p.depth() + 1;
    int fresh = paths.size();
    paths.add(new PathNode(fresh, parent, attribute, name, kind, path, depth));
    pathIds.put(key, fresh);
    return fresh;
  }

  public synchronized PathNode pathNode(int id) {
    return paths.get(id);
  }
}
