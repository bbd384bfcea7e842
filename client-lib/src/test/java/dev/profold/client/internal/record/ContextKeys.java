package dev.profold.client.internal.record;

import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.PathNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Contexts' keys as text, for tests that check where values landed. */
final class ContextKeys {
  private ContextKeys() {}

  /**
   * The key of {@code context} (interned by {@code recorder} into {@code encoder}'s dictionary), as
   * text: {@code path a/b} then {@code name=value}s in order.
   */
  static String key(Recorder recorder, DeltaEncoder encoder, int context) {
    Entry.Builder e = Entry.newBuilder();
    recorder.contexts().addKey(context, e);
    Dictionary d = encoder.definitions();
    Map<Integer, PathNode> nodes = new HashMap<>();
    d.getPathNodesList().forEach(n -> nodes.put(n.getId(), n));
    Map<Integer, String> names = new HashMap<>();
    d.getAttributesList().forEach(a -> names.put(a.getId(), a.getName()));
    List<String> parts = new ArrayList<>();
    for (AttributeValue v : e.getKeyList()) {
      if (v.hasPathNodeId()) {
        String p = "";
        for (int node = v.getPathNodeId(); node != 0; node = nodes.get(node).getParentId()) {
          String name = d.getStringsMap().get(nodes.get(node).getNameId());
          p = p.isEmpty() ? name : name + "/" + p;
        }
        parts.add(p);
      } else if (v.hasStringId()) {
        parts.add(names.get(v.getAttributeId()) + "=" + d.getStringsMap().get(v.getStringId()));
      } else {
        parts.add(names.get(v.getAttributeId()) + "=" + v.getIntValue());
      }
    }
    return String.join(" ", parts);
  }
}
