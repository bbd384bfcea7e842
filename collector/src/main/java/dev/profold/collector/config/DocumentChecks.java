package dev.profold.collector.config;

import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Checks a composed config document for what a YAML reader would read silently otherwise:
 *
 * <ul>
 *   <li>One key given twice in the same mapping. YAML readers, SnakeYAML's by default among them,
 *       keep the last value and drop the first without a word, so {@code interval: 10s} near the
 *       top of a file would silently lose to an {@code interval: 1m} further down. The error names
 *       the key by its path ({@code limits.max_message_bytes}, {@code schemes[1].query}) and the
 *       lines of both. Merge keys ({@code <<}) are YAML's way to override on purpose and are left
 *       alone.
 *   <li>Numbers YAML 1.1 (SnakeYAML's) reads other than as written: a leading zero makes octal
 *       ({@code grpc_port: 07763} is port 4083) and colons make base 60 ({@code retention: 1:00} is
 *       60).
 *   <li>A key without a value ({@code listen:} with nothing after it, or a section whose lines are
 *       all commented out), which a reader takes for the key's absence: the default would apply
 *       without a word where a value was meant ({@code alertmanager:} with its {@code url}
 *       commented out sent alerts nowhere).
 *   <li>A value that contains itself (an alias inside its own anchor, {@code a: &x [*x]}), which no
 *       setting can be and which would overflow the stack when read.
 * </ul>
 *
 * Stateless.
 */
final class DocumentChecks {
  /** An integer YAML 1.1 reads as octal: a leading 0 followed by more digits. */
  private static final java.util.regex.Pattern OCTAL =
      java.util.regex.Pattern.compile("[-+]?0[0-9_]+");

  private DocumentChecks() {}

  /**
   * Checks {@code root} (a composed document, not yet constructed) and everything under it.
   *
   * @param name the file name, for the error
   * @throws ConfigException naming the file, line and column of the second key, its path, and the
   *     line of the first
   */
  static void check(Node root, String name) throws ConfigException {
    walk(
        root,
        "",
        name,
        Collections.newSetFromMap(new IdentityHashMap<>()),
        Collections.newSetFromMap(new IdentityHashMap<>()));
  }

  /** {@code file:line:column} of {@code n}, 1-based, to begin an error. */
  private static String at(String name, Node n) {
    return name + ":" + (n.getStartMark().getLine() + 1) + ":" + (n.getStartMark().getColumn() + 1);
  }

  private static void walk(Node node, String path, String name, Set<Node> seen, Set<Node> open)
      throws ConfigException {
    if (open.contains(node)) {
      throw new ConfigException(
          name
              + ":"
              + (node.getStartMark().getLine() + 1)
              + ": '"
              + (path.isEmpty() ? "the document" : path)
              + "' refers back to a value that contains it (an alias inside its own anchor, such"
              + " as a: &x [*x]); write the values out");
    }
    if (!seen.add(node)) {
      return; // an alias of a node already checked
    }
    open.add(node);
    if (node instanceof ScalarNode n
        && n.getScalarStyle() == org.yaml.snakeyaml.DumperOptions.ScalarStyle.PLAIN
        && (Tag.INT.equals(n.getTag()) || Tag.FLOAT.equals(n.getTag()))
        && (OCTAL.matcher(n.getValue()).matches() || n.getValue().contains(":"))) {
      boolean base60 = n.getValue().contains(":");
      throw new ConfigException(
          at(name, n)
              + ": '"
              + path
              + "' is "
              + n.getValue()
              + ", which YAML reads as "
              + (base60 ? "a number in base 60" : "an octal number")
              + "; write the decimal number without "
              + (base60 ? "colons" : "a leading 0")
              + ", or quote it if it is text");
    }
    if (node instanceof MappingNode m) {
      Map<String, ScalarNode> keys = new HashMap<>();
      for (NodeTuple t : m.getValue()) {
        String child = path;
        if (t.getKeyNode() instanceof ScalarNode k && !Tag.MERGE.equals(k.getTag())) {
          ScalarNode first = keys.putIfAbsent(k.getValue(), k);
          child = path.isEmpty() ? k.getValue() : path + "." + k.getValue();
          if (first != null) {
            throw new ConfigException(
                at(name, k)
                    + ": '"
                    + child
                    + "' is given twice (first at line "
                    + (first.getStartMark().getLine() + 1)
                    + "); YAML would keep only the last, so remove one of them");
          }
          if (t.getValueNode() instanceof ScalarNode v && Tag.NULL.equals(v.getTag())) {
            throw new ConfigException(
                at(name, k)
                    + ": '"
                    + child
                    + "' has no value (a key with nothing after it, or with all it held"
                    + " commented out; or an unset variable substituted into the file); give it"
                    + " one, or remove the key to use the default");
          }
        }
        walk(t.getValueNode(), child, name, seen, open);
      }
    } else if (node instanceof SequenceNode s) {
      List<Node> items = s.getValue();
      for (int i = 0; i < items.size(); i++) {
        walk(items.get(i), path + "[" + i + "]", name, seen, open);
      }
    }
    open.remove(node);
  }
}
