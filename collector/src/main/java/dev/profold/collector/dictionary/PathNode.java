package dev.profold.collector.dictionary;

/**
 * A globally interned node of a nested path (a region inside a region, a frame in a call path).
 *
 * @param id global id, > 0
 * @param parent global id of the parent, 0 under the root
 * @param attribute global id of the PATH attribute it belongs to
 * @param name the node's own name, for example {@code db.query}
 * @param kind region kind, {@code ""} when not a region; lower case ({@code compute}, {@code wait},
 *     ...)
 * @param path names from the root to this node joined with {@code /}
 * @param depth 1 for a node under the root
 */
public record PathNode(
    int id, int parent, int attribute, String name, String kind, String path, int depth) {}
