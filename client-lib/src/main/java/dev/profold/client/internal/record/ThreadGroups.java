package dev.profold.client.internal.record;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/** Thread identity: pool names normalised into groups, and the initial thread. */
public final class ThreadGroups {
  private ThreadGroups() {}

  /** The group of unnamed virtual threads (their name is empty). */
  static final String VIRTUAL = "virtual";

  /**
   * The thread id under which the agent records the JFR events of virtual threads, all of them in
   * one table, since a table per virtual thread would grow with the request rate. No platform
   * thread has this id.
   */
  public static final long VIRTUAL_THREADS = Long.MAX_VALUE;

  /** {@code Thread.isVirtual()} (Java 21 and later), or null on a JVM without virtual threads. */
  private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

  private static MethodHandle isVirtualHandle() {
    try {
      return MethodHandles.publicLookup()
          .findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
    } catch (NoSuchMethodException | IllegalAccessException e) {
      return null; // before Java 21: every thread is a platform thread
    }
  }

  /** True for a virtual thread (Java 21 and later); false for every thread before Java 21. */
  static boolean isVirtual(Thread t) {
    if (IS_VIRTUAL == null) {
      return false;
    }
    try {
      return (boolean) IS_VIRTUAL.invokeExact(t);
    } catch (Throwable e) { // Thread.isVirtual throws nothing; treat the impossible as platform
      return false;
    }
  }

  /**
   * The group of a thread whose state is pooled ({@link ThreadStatePool}): its normalised name, or
   * {@link #VIRTUAL} for an unnamed one (virtual threads have no name unless given one).
   */
  static String pooledGroup(String threadName) {
    return threadName.isEmpty() ? VIRTUAL : normalise(threadName);
  }

  /** The longest group name, in UTF-16 characters: the collector refuses longer ones. */
  public static final int MAX_GROUP_CHARS = 128;

  /**
   * The group of a thread name: every run of digits becomes {@code *}, so {@code http-exec-17} and
   * {@code http-exec-3} both belong to {@code http-exec-*}, and {@code pool-2-thread-5} to {@code
   * pool-*-thread-*}. A group longer than {@link #MAX_GROUP_CHARS} keeps its first 127 characters
   * (126 where the 127th would split a surrogate pair) and a final {@code *}: names that differ
   * only beyond them share a group. Idempotent.
   */
  public static String normalise(String threadName) {
    String group = collapseDigits(threadName);
    if (group.length() <= MAX_GROUP_CHARS) {
      return group;
    }
    int keep = MAX_GROUP_CHARS - 1;
    if (Character.isHighSurrogate(group.charAt(keep - 1))) {
      keep--;
    }
    return group.substring(0, keep) + '*';
  }

  private static String collapseDigits(String threadName) {
    StringBuilder sb = new StringBuilder(threadName.length());
    boolean inDigits = false;
    for (int i = 0; i < threadName.length(); i++) {
      char c = threadName.charAt(i);
      if (c >= '0' && c <= '9') {
        if (!inDigits) {
          sb.append('*');
          inDigits = true;
        }
      } else {
        sb.append(c);
        inDigits = false;
      }
    }
    return sb.length() == 0 ? "*" : sb.toString();
  }

  /** The id of the JVM's initial thread once known ({@link #initialThreadIs}), else -1. */
  private static volatile long initialThreadId = -1;

  /**
   * Makes {@code threadId} the initial thread's: the agent's {@code premain} runs on it. From then
   * on the initial thread is known by its id, whatever its name (a renamed main thread), and no
   * other thread named {@code main} is taken for it. -1 forgets it (tests).
   */
  public static void initialThreadIs(long threadId) {
    initialThreadId = threadId;
  }

  /**
   * True for the JVM's initial thread: the one {@link #initialThreadIs} named; when none was named,
   * a thread called {@code main} in the {@code main} thread group.
   */
  static boolean isInitial(Thread t) {
    ThreadGroup g = t.getThreadGroup();
    return isInitial(t.getId(), t.getName(), g == null ? null : g.getName());
  }

  /** The initial thread's id as {@link #initialThreadIs} named it, or -1. */
  public static long initialThreadId() {
    return initialThreadId;
  }

  /** As {@link #isInitial(Thread)}, for a thread known by its id, name and group's name. */
  public static boolean isInitial(long threadId, String name, String groupName) {
    long initial = initialThreadId;
    if (initial >= 0) {
      return threadId == initial;
    }
    return "main".equals(name) && "main".equals(groupName);
  }
}
