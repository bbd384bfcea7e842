package dev.profold.collector.dictionary;

/**
 * A globally interned node of a nested path (a region inside a region, a frame in a call path). The
 * path as text is not held here but built on demand ({@link GlobalDictionary#path}): held per node,
 * the paths of a deep chain would take memory quadratic in its depth.
 *
 * @param id global id, > 0
 * @param parent global id of the parent, 0 under the root
 * @param attribute global id of the PATH attribute it belongs to
 * @param name the node's own name, for example {@code db.query}
 * @param kind region kind, {@code ""} when not a region; lower case ({@code compute}, {@code wait},
 *     ...)
 * @param depth 1 for a node under the root
 * @param length characters of the path: the names from the root to this node joined with {@code /}
 */
public record PathNode(
    int id, int parent, int attribute, String name, String kind, int depth, int length) {}
