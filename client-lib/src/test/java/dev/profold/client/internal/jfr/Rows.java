package dev.profold.client.internal.jfr;

import dev.profold.client.Kind;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.record.Recorder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.PathNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Test helper: recorded cells as readable rows (thread, event attribute, path, kind, value). */
final class Rows {
  /** One cell of one thread. */
  record Row(
      long threadId,
      String group,
      String event,
      String path,
      Kind kind,
      String metric,
      long count,
      double sum) {}

  private Rows() {}

  static List<Row> of(DeltaEncoder encoder, Recorder recorder, List<ThreadSnapshot> snapshots) {
    Map<Integer, Entry.Builder> keys = new HashMap<>(); // first, as they define attribute ids
    for (ThreadSnapshot t : snapshots) {
      for (Cell c : t.cells()) {
        keys.computeIfAbsent(
            c.context(),
            ctx -> {
              Entry.Builder e = Entry.newBuilder();
              recorder.contexts().addKey(ctx, e);
              return e;
            });
      }
    }
    Dictionary dictionary = encoder.definitions();
    Map<Integer, PathNode> nodes = new HashMap<>();
    dictionary.getPathNodesList().forEach(n -> nodes.put(n.getId(), n));
    Map<Integer, String> strings = dictionary.getStringsMap();
    Map<Integer, AttributeDef> attrs = new HashMap<>();
    dictionary.getAttributesList().forEach(a -> attrs.put(a.getId(), a));
    List<Row> out = new ArrayList<>();
    for (ThreadSnapshot t : snapshots) {
      for (Cell c : t.cells()) {
        Entry.Builder e = keys.get(c.context());
        String event = null;
        for (var v : e.getKeyList()) {
          if (attrs.get(v.getAttributeId()).getName().equals(JfrSink.EVENT_ATTRIBUTE)) {
            event = strings.get(v.getStringId());
          }
        }
        StringBuilder path = new StringBuilder();
        for (int n = recorder.contexts().pathNode(c.context()); n != 0; ) {
          PathNode p = nodes.get(n);
          path.insert(0, (path.length() == 0 ? "" : "/")).insert(0, strings.get(p.getNameId()));
          n = p.getParentId();
        }
        out.add(
            new Row(
                t.threadId(),
                t.group(),
                event,
                path.toString(),
                recorder.contexts().kind(c.context()),
                attrs.get(c.metric()).getName(),
                c.state().count(),
                c.state().sum()));
      }
    }
    return out;
  }
}
