package dev.profold.client.internal.activity;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link RunQueues} from the operating system ({@link OsThreads#schedstat}: Linux), for the threads
 * whose OS thread id was learnt: from JFR's events (the agent), or from the thread itself when it
 * first records (the library). Elsewhere than Linux no id is learnt and nothing is read.
 *
 * <p>At most {@link #MAX_THREADS} ids are kept. A thread's id is forgotten once two reads in a row,
 * after the one it was learnt before, did not ask for it: a thread learns its id once, and may do
 * so between the caller's look at the live threads and its read, so one read that misses it is not
 * enough. Thread-safe; {@link #read} from one thread at a time.
 */
final class OsRunQueues implements RunQueues {
  /** Most OS thread ids kept; further ones are not learnt until room comes free. */
  static final int MAX_THREADS = 65_536;

  /** {OS thread id, the last read that asked for it or that it was learnt in} by Java thread id. */
  private final Map<Long, long[]> tids = new ConcurrentHashMap<>();

  private volatile long reads; // written by the reading thread only

  /**
   * Platform thread {@code threadId} runs as OS thread {@code osThreadId} (0 or less: unknown).
   * Cheap when already known (a look-up): the agent tells it with every JFR event.
   */
  void learn(long threadId, long osThreadId) {
    long[] known = tids.get(threadId);
    if (osThreadId > 0
        && (known == null || known[0] != osThreadId)
        && (known != null || tids.size() < MAX_THREADS)) {
      tids.put(threadId, new long[] {osThreadId, reads});
    }
  }

  /** Learns the calling thread's OS thread id, unless known. Not for a virtual thread. */
  void learnCurrentThread() {
    long id = Thread.currentThread().getId();
    if (!tids.containsKey(id)) {
      learn(id, OsThreads.currentTid());
    }
  }

  @Override
  public Map<Long, long[]> read(Collection<Long> threadIds) {
    long read = reads + 1;
    reads = read;
    Map<Long, long[]> out = new HashMap<>();
    for (Long id : threadIds) {
      long[] known = tids.get(id);
      if (known == null) {
        continue;
      }
      known[1] = read;
      long[] s = OsThreads.schedstat(known[0]);
      if (s != null) {
        out.put(id, new long[] {s[1], s[2]});
      }
    }
    tids.values().removeIf(known -> known[1] < read - 1); // not asked for twice: no longer alive
    return out;
  }

  /** Ids kept (for tests). */
  int size() {
    return tids.size();
  }
}
