package dev.profold.client.internal.activity;

import static dev.profold.client.internal.activity.TimeClasses.CLASSES;
import static dev.profold.client.internal.activity.TimeClasses.COMPUTE;
import static dev.profold.client.internal.activity.TimeClasses.CPU_WAIT;
import static dev.profold.client.internal.activity.TimeClasses.IDLE;
import static dev.profold.client.internal.activity.TimeClasses.IO;
import static dev.profold.client.internal.activity.TimeClasses.RUNTIME;
import static dev.profold.client.internal.activity.TimeClasses.SYNC;
import static dev.profold.client.internal.activity.TimeClasses.THREAD_MGMT;
import static dev.profold.client.internal.activity.TimeClasses.WAIT;

import dev.profold.proto.v1.ThreadGroupActivity;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The running totals of one thread group in an interval: its threads, wall time, time per class and
 * the spread of its threads' CPU time. Not thread-safe: {@link ThreadActivity}'s lock.
 */
final class GroupTotals {
  final String name;
  final long[] classes = new long[CLASSES];
  final Set<Long> ids = new HashSet<>(); // its threads: one alive in two merged intervals once
  long idsLeftOut; // threads counted without their ids (ended before a given-back close)
  long wall;
  long cpuMin = Long.MAX_VALUE;
  long cpuMax;
  long cpuSum;

  GroupTotals(String name) {
    this.name = name;
  }

  void add(long threadId, long threadWall, long[] threadClasses, long cpu) {
    ids.add(threadId);
    wall += threadWall;
    for (int k = 0; k < CLASSES; k++) {
      classes[k] += threadClasses[k];
    }
    cpuMin = Math.min(cpuMin, cpu);
    cpuMax = Math.max(cpuMax, cpu);
    cpuSum += cpu;
  }

  /** Keeps only the thread ids in {@code alive}, counting the others. */
  void keepOnlyIds(Set<Long> alive) {
    int before = ids.size();
    ids.retainAll(alive);
    idsLeftOut += before - ids.size();
  }

  void merge(GroupTotals g) {
    ids.addAll(g.ids);
    idsLeftOut += g.idsLeftOut;
    wall += g.wall;
    for (int k = 0; k < CLASSES; k++) {
      classes[k] += g.classes[k];
    }
    cpuMin = Math.min(cpuMin, g.cpuMin);
    cpuMax = Math.max(cpuMax, g.cpuMax);
    cpuSum += g.cpuSum;
  }

  ThreadGroupActivity toProto() {
    return ThreadGroupActivity.newBuilder()
        .setThreadGroup(name)
        .setThreads(Math.toIntExact(Math.min(Integer.MAX_VALUE, ids.size() + idsLeftOut)))
        .setWallNanos(wall)
        .setComputeNanos(classes[COMPUTE])
        .setSyncNanos(classes[SYNC])
        .setWaitNanos(classes[WAIT])
        .setIoNanos(classes[IO])
        .setRuntimeNanos(classes[RUNTIME])
        .setThreadMgmtNanos(classes[THREAD_MGMT])
        .setIdleNanos(classes[IDLE] + classes[CPU_WAIT]) // on the wire cpu_wait is part of idle
        .setCpuWaitNanos(classes[CPU_WAIT])
        .setCpuMinNanos(ids.isEmpty() && idsLeftOut == 0 ? 0 : cpuMin)
        .setCpuSumNanos(cpuSum)
        .setCpuMaxNanos(cpuMax)
        .build();
  }

  /** {@code groups} as the wire's thread activity, compacted as {@link #compact} says. */
  static List<ThreadGroupActivity> encode(Map<String, GroupTotals> groups) {
    List<GroupTotals> compact = compact(groups);
    List<ThreadGroupActivity> out = new ArrayList<>(compact.size());
    for (GroupTotals g : compact) {
      out.add(g.toProto());
    }
    return out;
  }

  /** {@code groups} as {@link GroupCompaction} orders and bounds them. */
  static List<GroupTotals> compact(Map<String, GroupTotals> groups) {
    return GroupCompaction.compact(
        groups,
        g -> g.wall,
        g -> g.name,
        folded -> {
          GroupTotals rest = new GroupTotals(ThreadActivity.OTHER_GROUP);
          folded.forEach(rest::merge);
          return rest;
        });
  }
}
