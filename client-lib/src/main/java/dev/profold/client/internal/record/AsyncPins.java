package dev.profold.client.internal.record;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Keeps the contexts of open asynchronous regions ({@link AsyncFrame}) from ageing out, without a
 * lock on the application's threads: one word per context id, written with atomic updates by the
 * threads that open and close such regions, read by the {@link ContextTable}'s ageing under its
 * lock.
 *
 * <p>A word holds the count of asynchronous regions open in the context (low {@value #COUNT_BITS}
 * bits) and the latest collection in which one of them closed (the bits above). A context is kept
 * while the count is above zero, and also through the ageing that runs as the collection after that
 * close starts: the close recorded its value into the closing thread's table before reading the
 * collection, so the value is taken by that collection or by the next one, and the ageing between
 * the two must not free the id the value still names.
 *
 * <p>A count that reaches {@link #SATURATED} (regions opened and never closed, millions of them)
 * stays there: that context is kept for good, rather than a wrapped count freeing it under an open
 * region.
 *
 * <p>The words live in chunks of {@value #CHUNK} made on first use, so a process without
 * asynchronous regions pays one empty directory, and one with them a chunk per 1,024 context ids
 * that ever had one. A chunk is never replaced, so an update through an older directory still lands
 * in the word the ageing reads.
 */
final class AsyncPins {
  private static final int CHUNK_SHIFT = 10;
  static final int CHUNK = 1 << CHUNK_SHIFT;
  static final int COUNT_BITS = 24;
  private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;

  /** The count at which a context stays pinned for good. */
  static final long SATURATED = COUNT_MASK;

  /** The collection that marks "none closed yet": below every real one (collections start at 0). */
  private static final long NEVER = -1;

  private volatile AtomicLongArray[] chunks = new AtomicLongArray[0];

  /**
   * The collection being taken (set as each begins, read by closers): the latest whose tables a
   * value recorded now may still miss.
   */
  private volatile long collection;

  /** One more asynchronous region open in {@code context} (any thread; the id must be in use). */
  void pin(int context) {
    AtomicLongArray words = chunk(context);
    int i = context & (CHUNK - 1);
    while (true) {
      long w = words.get(i);
      long count = w & COUNT_MASK;
      if (count == SATURATED || words.compareAndSet(i, w, w + 1)) {
        return;
      }
    }
  }

  /**
   * One asynchronous region of {@code context} closed, after its value was recorded (any thread).
   */
  void unpin(int context) {
    AtomicLongArray words = chunk(context);
    int i = context & (CHUNK - 1);
    long closedIn = collection; // read after the value was written: see the class comment
    while (true) {
      long w = words.get(i);
      long count = w & COUNT_MASK;
      if (count == SATURATED) {
        return;
      }
      long latest = Math.max(closedIn, (w >> COUNT_BITS) - 1);
      long next = ((latest + 1) << COUNT_BITS) | Math.max(count - 1, 0);
      if (words.compareAndSet(i, w, next)) {
        return;
      }
    }
  }

  /** A collection begins: values recorded from now on may be taken by it or a later one. */
  void beginCollection(long number) {
    collection = number;
  }

  /**
   * True when an ageing that runs while {@code latest} is the latest collection begun (it runs as
   * the next one starts, before that one takes anything) must keep {@code context}: an asynchronous
   * region is open in it, or one closed while {@code latest} was the latest begun, so its value may
   * not have been taken yet.
   */
  boolean keeps(int context, long latest) {
    AtomicLongArray[] dir = chunks;
    int c = context >>> CHUNK_SHIFT;
    if (c >= dir.length || dir[c] == null) {
      return false;
    }
    long w = dir[c].get(context & (CHUNK - 1));
    long closedIn = (w >> COUNT_BITS) - 1;
    return (w & COUNT_MASK) != 0 || (closedIn != NEVER && closedIn >= latest);
  }

  /** The open count of {@code context} (for tests). */
  long open(int context) {
    AtomicLongArray[] dir = chunks;
    int c = context >>> CHUNK_SHIFT;
    return c < dir.length && dir[c] != null ? dir[c].get(context & (CHUNK - 1)) & COUNT_MASK : 0;
  }

  /** Bytes held by the chunks (for the client's memory estimate). */
  long bytesHeld() {
    long n = 0;
    for (AtomicLongArray a : chunks) {
      n += a == null ? 0 : 8L * CHUNK;
    }
    return n;
  }

  private AtomicLongArray chunk(int context) {
    AtomicLongArray[] dir = chunks;
    int c = context >>> CHUNK_SHIFT;
    if (c < dir.length) {
      AtomicLongArray words = dir[c];
      if (words != null) {
        return words;
      }
    }
    return makeChunk(c);
  }

  private synchronized AtomicLongArray makeChunk(int c) {
    AtomicLongArray[] dir = chunks;
    if (c >= dir.length) {
      dir = Arrays.copyOf(dir, Math.max(c + 1, dir.length * 2));
    }
    if (dir[c] == null) {
      dir[c] = new AtomicLongArray(CHUNK);
    }
    chunks = dir;
    return dir[c];
  }
}
