package dev.profold.client.internal.activity;

import dev.profold.proto.v1.ThreadGroupActivity;
import java.util.List;

/** Reading a close's thread groups in tests. */
final class ActivityGroups {
  private ActivityGroups() {}

  /** The group named {@code name}; fails naming the groups there are when there is none. */
  static ThreadGroupActivity group(List<ThreadGroupActivity> groups, String name) {
    return groups.stream()
        .filter(g -> g.getThreadGroup().equals(name))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "no group "
                        + name
                        + " in "
                        + groups.stream().map(ThreadGroupActivity::getThreadGroup).toList()));
  }

  /** The sum of the wire's classes (cpu_wait is part of idle_nanos): the wall time, exactly. */
  static long classes(ThreadGroupActivity a) {
    return a.getComputeNanos()
        + a.getSyncNanos()
        + a.getWaitNanos()
        + a.getIoNanos()
        + a.getRuntimeNanos()
        + a.getThreadMgmtNanos()
        + a.getIdleNanos();
  }
}
