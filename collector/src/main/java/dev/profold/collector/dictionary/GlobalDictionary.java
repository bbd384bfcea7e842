package dev.profold.collector.dictionary;

import java.util.HashMap;
import java.util.Map;

/**
 * Collector-wide interning of strings, attributes and path nodes. Every stream translates its own
 * client-chosen ids to these global ids once, when definitions arrive; entries then carry only
 * global ids, so per-entry work never touches this class.
 *
 * <p>Ids are dense and start at 1. Size is bounded by {@code maxEntries} (all three tables
 * together, entries in use): interning past it throws {@link DictionaryFullException}.
 *
 * <p><b>Lifetime.</b> So that a long-running collector whose sources come and go (and change their
 * call paths, attribute names and values) does not fill up for good, strings, attributes and path
 * nodes are counted references and freed when the last one goes. Each {@link #internString}, {@link
 * #internAttribute} and {@link #internPathNode} hands its caller one reference, which it gives back
 * with {@link #releaseString} / {@link #releaseAttribute} / {@link #releasePathNode}: a stream
 * holds one per id it maps, until it ends. A path node holds one on its parent, its name and its
 * attribute.
 *
 * <p>The caller releasing a reference must know that nothing it handed on still reads the id: a
 * stream gives its references back on the fold thread, after its last delta was folded. Freed ids
 * are <em>retired</em>, not reused at once, because the fold caches what it judged per tuple of ids
 * and what it read of each attribute id ({@code SchemeFold}): only after those caches were emptied
 * does the fold thread call {@link #recycleRetired}, and only then can an id name something else.
 * Until then a retired id names nothing ({@link #string}, {@link #attribute} and {@link #pathNode}
 * return null).
 *
 * <p><b>The streams' ids.</b> Each stream maps its own client-chosen ids to these (24 to 48 bytes
 * of heap per string or attribute id in the stream's hash maps, twice that per path node id), so
 * many streams defining the same content take memory in proportion to their number though the
 * dictionary stays put. The ids all open streams map together are bounded by {@code maxStreamIds}:
 * a stream takes one with {@link #takeStreamId} for each id it maps and gives them back with {@link
 * #giveStreamIds} when it ends.
 *
 * <p>Thread-safe: every method synchronizes (interning and look-ups are rare: at definition time
 * and when a new group is created; releases come once per id when a stream ends).
 */
public final class GlobalDictionary {
  /** Ids all open streams may map together, unless set ({@code limits.stream_ids}). */
  public static final int DEFAULT_STREAM_IDS = 10_000_000;

  private final int maxEntries;
  private final int maxStreamIds;
  private int streamIds;
  private final int maxAttributes;
  private final Map<String, Integer> stringIds = new HashMap<>();
  private final CountedTable<String> strings = new CountedTable<>("string");
  private final Map<Attribute, Integer> attributeIds = new HashMap<>(); // keyed with id 0
  private final CountedTable<Attribute> attributes = new CountedTable<>("attribute");
  private final Map<PathKey, Integer> pathIds = new HashMap<>();
  private final CountedTable<PathNode> paths = new CountedTable<>("path node");
  private long freed;

  private record PathKey(int parent, int attribute, int name, String kind) {}

  /**
   * A dictionary of at most {@code maxEntries}, its streams mapping {@link #DEFAULT_STREAM_IDS}.
   */
  public GlobalDictionary(int maxEntries) {
    this(maxEntries, DEFAULT_STREAM_IDS);
  }

  /**
   * A dictionary of at most {@code maxEntries} strings, attributes and path nodes in use, whose
   * open streams map at most {@code maxStreamIds} ids together.
   */
  public GlobalDictionary(int maxEntries, int maxStreamIds) {
    this.maxEntries = maxEntries;
    this.maxStreamIds = maxStreamIds;
    this.maxAttributes = maxAttributes(maxEntries);
  }

  /**
   * Most attributes held, for a dictionary of {@code maxEntries}: a sixteenth of it (at least 4096,
   * or all of it when smaller). Clients that keep defining new ones (names made of ids) on
   * long-lived streams must not be able to take the room that strings and path nodes need.
   */
  public static int maxAttributes(int maxEntries) {
    return Math.max(maxEntries / 16, Math.min(maxEntries, 4096));
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

  /** Most ids all open streams map together. */
  public int maxStreamIds() {
    return maxStreamIds;
  }

  /** Ids all open streams map now. */
  public synchronized int streamIds() {
    return streamIds;
  }

  /**
   * Takes one of the ids open streams may map, for a stream about to map a new one.
   *
   * @throws DictionaryFullException when open streams map {@link #maxStreamIds} already
   */
  public synchronized void takeStreamId() {
    if (streamIds >= maxStreamIds) {
      throw DictionaryFullException.streamIds(maxStreamIds);
    }
    streamIds++;
  }

  /** Gives back {@code n} ids taken with {@link #takeStreamId}: a stream's, when it ends. */
  public synchronized void giveStreamIds(int n) {
    if (n < 0 || n > streamIds) {
      throw new IllegalStateException(n + " stream ids given back, " + streamIds + " taken");
    }
    streamIds -= n;
  }

  /** Number of strings, attributes and path nodes in use together. */
  public synchronized int size() {
    return strings.live() + attributes.live() + paths.live();
  }

  /** Strings, attributes and path nodes freed so far, over the dictionary's life. */
  public synchronized long freed() {
    return freed;
  }

  /** Freed ids waiting for {@link #recycleRetired} before they can be handed out again. */
  public synchronized int retired() {
    return strings.retired() + attributes.retired() + paths.retired();
  }

  /**
   * Makes the retired ids reusable. Call it only when no cache keyed by ids holds one of them any
   * more: on the fold thread, right after emptying the schemes' caches.
   */
  public synchronized void recycleRetired() {
    strings.recycle();
    attributes.recycle();
    paths.recycle();
  }

  /**
   * The global id of {@code s}, interning it if new, with one reference for the caller.
   *
   * @throws DictionaryFullException when {@code s} is new and the dictionary is full
   */
  public synchronized int internString(String s) {
    Integer id = stringIds.get(s);
    if (id == null) {
      checkRoom();
      id = strings.add(fresh -> s);
      stringIds.put(s, id);
    }
    strings.retain(id);
    return id;
  }

  /** The string of {@code id}; null for an id not in use. */
  public synchronized String string(int id) {
    return strings.get(id);
  }

  /** Gives back one reference to string {@code id}; frees it with the last one. */
  public synchronized void releaseString(int id) {
    String freedString = strings.release(id);
    if (freedString != null) {
      stringIds.remove(freedString);
      freed++;
    }
  }

  /**
   * The global id of the attribute with these properties, interning it if new, with one reference
   * for the caller.
   *
   * @throws DictionaryFullException when it is new and the dictionary, or its share for attributes
   *     ({@link #maxAttributes}), is full
   */
  public synchronized int internAttribute(
      String name, AttributeType type, boolean measurement, String unit) {
    Attribute probe = new Attribute(0, name, type, measurement, unit);
    Integer id = attributeIds.get(probe);
    if (id == null) {
      if (attributes.live() >= maxAttributes) {
        throw DictionaryFullException.attributes(maxAttributes);
      }
      checkRoom();
      id = attributes.add(fresh -> new Attribute(fresh, name, type, measurement, unit));
      attributeIds.put(probe, id);
    }
    attributes.retain(id);
    return id;
  }

  /** The attribute of {@code id}; null for an id not in use. */
  public synchronized Attribute attribute(int id) {
    return attributes.get(id);
  }

  /** Gives back one reference to attribute {@code id}; frees it with the last one. */
  public synchronized void releaseAttribute(int id) {
    Attribute a = attributes.release(id);
    if (a != null) {
      attributeIds.remove(new Attribute(0, a.name(), a.type(), a.measurement(), a.unit()));
      freed++;
    }
  }

  /**
   * The global id of the node named {@code nameId} (a global string id the caller holds a reference
   * to) under {@code parent} (0 for the root, else a node the caller holds a reference to) in path
   * attribute {@code attribute} (an attribute the caller holds a reference to), interning it if
   * new, with one reference for the caller.
   *
   * @throws DictionaryFullException when the node is new and the dictionary is full
   */
  public synchronized int internPathNode(int parent, int attribute, int nameId, String kind) {
    PathKey key = new PathKey(parent, attribute, nameId, kind);
    Integer id = pathIds.get(key);
    if (id == null) {
      if (attributes.get(attribute) == null || (parent != 0 && paths.get(parent) == null)) {
        throw new IllegalStateException(
            "path node under " + parent + " of attribute " + attribute + ": not in use");
      }
      checkRoom();
      String name = strings.get(nameId);
      int length = Math.toIntExact(length(parent, nameId)); // callers keep paths far shorter
      int depth = depth(parent);
      id = paths.add(fresh -> new PathNode(fresh, parent, attribute, name, kind, depth, length));
      pathIds.put(key, id);
      strings.retain(nameId); // the node's own references
      attributes.retain(attribute);
      if (parent != 0) {
        paths.retain(parent);
      }
    }
    paths.retain(id);
    return id;
  }

  /** The node of {@code id}; null for an id not in use. */
  public synchronized PathNode pathNode(int id) {
    return paths.get(id);
  }

  /**
   * Gives back one reference to path node {@code id}; frees it with the last one, and gives back
   * its own references to its parent, name and attribute.
   */
  public synchronized void releasePathNode(int id) {
    int node = id;
    while (node != 0) {
      PathNode n = paths.release(node);
      if (n == null) {
        return;
      }
      int nameId = stringIds.get(n.name());
      pathIds.remove(new PathKey(n.parent(), n.attribute(), nameId, n.kind()));
      freed++;
      releaseString(nameId);
      releaseAttribute(n.attribute());
      node = n.parent(); // iterative: a deep chain freed at once must not overflow the stack
    }
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
