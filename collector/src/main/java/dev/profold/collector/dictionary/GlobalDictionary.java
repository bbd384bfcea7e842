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

  /** Most strings, attributes and path nodes held together. */
  public int maxEntries() {
    return maxEntries;
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
    int fresh = paths.size();
    int length = Math.toIntExact(length(parent, nameId)); // callers keep paths far shorter
    paths.add(new PathNode(fresh, parent, attribute, name, kind, depth(parent), length));
    pathIds.put(key, fresh);
    return fresh;
  }

  public synchronized PathNode pathNode(int id) {
    return paths.get(id);
  }

  /** Depth of a node under {@code parent} (a global path id, 0 for the root). */
  private int depth(int parent) {
    return parent == 0 ? 1 : paths.get(parent).depth() + 1;
  }

  /**
   * Characters of the path of a node named {@code nameId} under {@code parent} (0 for the root),
   * names joined with {@code /}; as a long, since a client may try one beyond any int.
   */
  public synchronized long length(int parent, int nameId) {
    long name = strings.get(nameId).length();
    return parent == 0 ? name : paths.get(parent).length() + 1 + name;
  }

  /** The path of node {@code id}: the names from the root to it, joined with {@code /}. */
  public synchronized String path(int id) {
    PathNode n = paths.get(id);
    char[] out = new char[n.length()];
    int end = out.length;
    while (true) {
      String name = n.name();
      end -= name.length();
      name.getChars(0, name.length(), out, end);
      if (n.parent() == 0) {
        return new String(out);
      }
      out[--end] = '/';
      n = paths.get(n.parent());
    }
  }
}
