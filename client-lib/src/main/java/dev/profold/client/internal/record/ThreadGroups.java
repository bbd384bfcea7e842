package dev.profold.client.internal.record;

/** Thread identity: pool names normalised into groups, and the initial thread. */
public final class ThreadGroups {
  private ThreadGroups() {}

  /**
   * The group of a thread name: every run of digits becomes {@code *}, so {@code http-exec-17} and
   * {@code http-exec-3} both belong to {@code http-exec-*}, and {@code pool-2-thread-5} to {@code
   * pool-*-thread-*}.
   */
  public static String normalise(String threadName) {
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

  /** True for the JVM's initial thread: {@code main} in the {@code main} thread group. */
  static boolean isInitial(Thread t) {
    ThreadGroup g = t.getThreadGroup();
    return "main".equals(t.getName()) && g != null && "main".equals(g.getName());
  }
}
