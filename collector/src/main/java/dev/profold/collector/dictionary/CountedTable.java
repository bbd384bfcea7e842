package dev.profold.collector.dictionary;

import dev.profold.reduce.IntStack;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * The entries of one kind of {@link GlobalDictionary} (strings, attributes or path nodes) by dense
 * id from 1, each with its count of references. An entry lives while referenced; freed with its
 * last reference, its id is <em>retired</em> (it names nothing) until {@link #recycle} makes it
 * reusable.
 *
 * <p>Not thread-safe: the dictionary synchronizes.
 */
final class CountedTable<T> {
  private final String what;
  private final List<T> entries = new ArrayList<>();
  private int[] refs = new int[64];
  private final IntStack free = new IntStack();
  private final IntStack retired = new IntStack();
  private int live;

  /** An empty table of entries called {@code what} in errors ("string", say). */
  CountedTable(String what) {
    this.what = what;
    entries.add(null); // id 0 names nothing
  }

  /**
   * Adds the entry {@code make} builds for its id (a recycled one first), with no reference yet.
   *
   * @throws NullPointerException when {@code make} builds none; the table is unchanged
   */
  int add(IntFunction<T> make) {
    int id = free.isEmpty() ? entries.size() : free.peek();
    T entry = Objects.requireNonNull(make.apply(id), what);
    if (id == entries.size()) {
      entries.add(entry);
      if (id >= refs.length) {
        refs = Arrays.copyOf(refs, refs.length * 2);
      }
    } else {
      free.pop();
      entries.set(id, entry);
    }
    live++;
    return id;
  }

  /** The entry of {@code id}; null for an id not in use. */
  T get(int id) {
    return entries.get(id);
  }

  /**
   * Takes one more reference to entry {@code id}.
   *
   * @throws IllegalStateException when it names no entry: a caller's bug
   */
  void retain(int id) {
    if (entries.get(id) == null) {
      throw new IllegalStateException(what + " " + id + " is not in use");
    }
    refs[id]++;
  }

  /**
   * Gives back one reference to entry {@code id}: the entry when that was its last (it is freed and
   * its id retired), else null.
   *
   * @throws IllegalStateException when it had none, or names no entry: a caller's bug
   */
  T release(int id) {
    T entry = entries.get(id);
    if (entry == null || refs[id] <= 0) {
      throw new IllegalStateException(what + " " + id + " released more often than interned");
    }
    if (--refs[id] > 0) {
      return null;
    }
    entries.set(id, null);
    live--;
    retired.push(id);
    return entry;
  }

  /** Entries in use. */
  int live() {
    return live;
  }

  /** Ids freed and not yet reusable. */
  int retired() {
    return retired.size();
  }

  /** Makes the retired ids reusable. */
  void recycle() {
    retired.moveTo(free);
  }
}
