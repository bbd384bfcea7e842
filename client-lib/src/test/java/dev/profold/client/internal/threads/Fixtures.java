package dev.profold.client.internal.threads;

import dev.profold.client.Kind;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Entry;
import dev.profold.reduce.Aggregate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Builders and a fake context view shared by the thread-aggregation tests. */
final class Fixtures {
  private Fixtures() {}

  /**
   * A context view over a fixed kind table; a context's key is its id as region path node, and its
   * parent is given (-1, the root's, when not).
   */
  static final class FakeContexts implements ContextView {
    final Map<Integer, Kind> kinds;
    final int regionAttribute;
    final Map<Integer, Integer> parents;

    FakeContexts(Map<Integer, Kind> kinds, int regionAttribute) {
      this(kinds, regionAttribute, Map.of());
    }

    FakeContexts(Map<Integer, Kind> kinds, int regionAttribute, Map<Integer, Integer> parents) {
      this.kinds = Map.copyOf(kinds);
      this.regionAttribute = regionAttribute;
      this.parents = Map.copyOf(parents);
    }

    @Override
    public int parent(int context) {
      return parents.getOrDefault(context, -1);
    }

    /** Contexts whose time is their own only (as the agent's); none unless given. */
    java.util.Set<Integer> selfTimed = java.util.Set.of();

    @Override
    public boolean selfTimed(int context) {
      return selfTimed.contains(context);
    }

    @Override
    public Kind kind(int context) {
      return kinds.get(context);
    }

    @Override
    public int pathNode(int context) {
      return context;
    }

    @Override
    public void addKey(int context, Entry.Builder entry) {
      entry.addKey(
          AttributeValue.newBuilder().setAttributeId(regionAttribute).setPathNodeId(context));
    }
  }

  static Aggregate agg(double... values) {
    Aggregate a = new Aggregate();
    for (double v : values) {
      a.record(v);
    }
    return a;
  }

  static Aggregate merged(Iterable<Aggregate> parts) {
    Aggregate out = new Aggregate();
    for (Aggregate p : parts) {
      out.merge(p);
    }
    return out;
  }

  static Aggregate copy(Aggregate a) {
    Aggregate c = new Aggregate();
    c.copyFrom(a);
    return c;
  }

  static Cell cell(int context, int metric, double... values) {
    return new Cell(context, metric, agg(values));
  }

  static ThreadSnapshot thread(long id, String name, String group, Cell... cells) {
    return new ThreadSnapshot(id, name, group, false, List.of(cells));
  }

  static ThreadSnapshot initial(long id, String name, String group, Cell... cells) {
    return new ThreadSnapshot(id, name, group, true, List.of(cells));
  }

  /** Labels in the given order: name, value, name, value... */
  static Map<String, String> labels(String... nameValue) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < nameValue.length; i += 2) {
      m.put(nameValue[i], nameValue[i + 1]);
    }
    return m;
  }

  static AggregatedEntry entry(
      int context, Map<String, String> labels, int metric, boolean perThread, Aggregate state) {
    return new AggregatedEntry(context, labels, metric, perThread, state);
  }

  /** Every input aggregate, deep-copied, in input order. */
  static List<Aggregate> copies(List<ThreadSnapshot> threads) {
    List<Aggregate> out = new ArrayList<>();
    for (ThreadSnapshot t : threads) {
      for (Cell c : t.cells()) {
        out.add(copy(c.state()));
      }
    }
    return out;
  }

  /** Every input aggregate itself, in input order. */
  static List<Aggregate> states(List<ThreadSnapshot> threads) {
    List<Aggregate> out = new ArrayList<>();
    for (ThreadSnapshot t : threads) {
      for (Cell c : t.cells()) {
        out.add(c.state());
      }
    }
    return out;
  }
}
