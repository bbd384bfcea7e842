package dev.profold.client.internal.activity;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link RunQueues} from the operating system ({@link OsThreads#schedstat}: Linux), for the threads
 * whose OS thread id was learnt: from JFR's events (the agent), or from the thread itself when it
 * first records (the library). Elsewhere than Linux no id is learnt and nothing is read.
 *
 * <p>At most {@link #MAX_THREADS} ids are kept; {@link #read} forgets those of threads no longer
 * alive that it knew before it started. Thread-safe.
 */
final class OsRunQueues implements RunQueues {
  /** Most OS thread ids kept; further ones are not learnt until room comes free. */
  static final int MAX_THREADS = 65_536;

  private final Map<Long, Long> tids = new ConcurrentHashMap<>(); // by Java thread id

  /** Platform thread {@code threadId} runs as OS thread {@code osThreadId} (0 or less: unknown). */
  void learn(long threadId, long osThreadId) {
    if (osThreadId > 0 && (tids.size() < MAX_THREADS || tids.containsKey(threadId))) {
      tids.put(threadId, osThreadId);
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
    Set<Long> knownBefore = new HashSet<>(tids.keySet());
    Map<Long, long[]> out = new HashMap<>();
    for (Long id : threadIds) {
      Long tid = tids.get(id);
      long[] s = tid == null ? null : OsThreads.schedstat(tid);
      if (s != null) {
        out.put(id, new long[] {s[1], s[2]});
      }
    }
    // Threads not alive now: known before this read began, so not learnt since by a thread that
    // started after the caller looked at the live ones.
    knownBefore.removeAll(threadIds);
    tids.keySet().removeAll(knownBefore);
    return out;
  }

  /** Ids kept (for tests). */
  int size() {
    return tids.size();
  }
}
