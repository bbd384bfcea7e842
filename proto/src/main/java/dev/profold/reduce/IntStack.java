package dev.profold.reduce;

import java.util.Arrays;

/**
 * A growable stack of {@code int}s without boxing, for free lists of ids (the client's contexts and
 * dictionary, the collector's dictionary).
 *
 * <p>Not thread-safe.
 */
public final class IntStack {
  private int[] values = new int[16];
  private int size;

  public boolean isEmpty() {
    return size == 0;
  }

  public int size() {
    return size;
  }

  public void push(int value) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = value;
  }

  /** The top value, left on the stack; the stack must not be empty. */
  public int peek() {
    return values[size - 1];
  }

  /** Removes and returns the top value; the stack must not be empty. */
  public int pop() {
    return values[--size];
  }

  /** Pushes every value of this stack onto {@code other} and empties this one. */
  public void moveTo(IntStack other) {
    for (int i = 0; i < size; i++) {
      other.push(values[i]);
    }
    size = 0;
  }
}
