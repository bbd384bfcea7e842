package dev.profold.client.internal.activity;

import java.util.List;

/** Lists the threads to account for, with their CPU time so far. */
@FunctionalInterface
public interface LiveThreads {
  /** The live threads now. Called by one thread (the flush) once per interval. */
  List<LiveThread> now();
}
