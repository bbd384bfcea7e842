package dev.profold.client.internal.jfr;

import java.util.List;

/**
 * The fields of one JFR event that the agent reads, copied out of the parser's {@code
 * RecordedEvent} at the edge ({@link RecordedEvents}) so the mapping to records can be tested with
 * constructed events. Immutable.
 *
 * @param type the JFR event type name, e.g. {@code jdk.JavaMonitorEnter}
 * @param threadId {@link Thread#getId()} of the Java thread the event is about (the sampled thread,
 *     the thread that waited, the parent of a started thread), or -1 when there is none (GC, VM
 *     threads)
 * @param threadName that thread's name, empty when there is none
 * @param initialThread true for the JVM's initial thread ({@code main} in group {@code main})
 * @param frames the stack, innermost frame first, already cut to the depth limit, as {@link
 *     EventMapper#frameName} names
 * @param truncated true when frames were cut (by the depth limit or by JFR's own stack depth)
 * @param durationNanos the event's duration (0 for instant events)
 * @param detail the class parked on ({@code jdk.ThreadPark}) or the collector name ({@code
 *     jdk.GarbageCollection}); null otherwise
 * @param amount bytes ({@code jdk.ObjectAllocationSample} weight), nanoseconds paused ({@code
 *     jdk.GarbageCollection} sum of pauses) or the started thread's {@link Thread#getId()} ({@code
 *     jdk.ThreadStart}, -1 when unknown); 0 otherwise
 * @param osThreadId the OS thread id of the thread {@code threadId} names, or -1 when unknown (no
 *     thread, a virtual thread)
 * @param startEpochNanos when the event began, nanoseconds since the epoch, or -1 when unknown
 */
public record JfrEvent(
    String type,
    long threadId,
    String threadName,
    boolean initialThread,
    List<String> frames,
    boolean truncated,
    long durationNanos,
    String detail,
    long amount,
    long osThreadId,
    long startEpochNanos) {
  public JfrEvent {
    frames = List.copyOf(frames);
  }
}
