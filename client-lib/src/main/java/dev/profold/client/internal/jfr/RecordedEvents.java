package dev.profold.client.internal.jfr;

import dev.profold.client.internal.record.ThreadGroups;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordedThreadGroup;

/**
 * Copies what the agent reads out of a parser {@link RecordedEvent} into a {@link JfrEvent}.
 *
 * <p>Frame names are cached by method object: the parser hands out one {@link RecordedMethod} per
 * method and chunk, so a hot method is named once per chunk instead of once per frame of every
 * event. The cache is emptied when it reaches {@value #MAX_NAMES} methods. Not thread-safe: the
 * stream's one dispatch thread reads.
 */
final class RecordedEvents {
  /** Where the agent jar relocates its dependencies: frames there are the agent's own work. */
  static final String OWN_SHADED = "dev.profold.shaded.";

  static final int MAX_NAMES = 16_384;

  private final int maxDepth;
  private final IdentityHashMap<RecordedMethod, String> names = new IdentityHashMap<>();

  /** {@code RecordedThread.isVirtual()} (Java 21 and later), or null before. */
  private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

  private static MethodHandle isVirtualHandle() {
    try {
      return MethodHandles.publicLookup()
          .findVirtual(RecordedThread.class, "isVirtual", MethodType.methodType(boolean.class));
    } catch (NoSuchMethodException | IllegalAccessException e) {
      return null; // before Java 21: no virtual threads
    }
  }

  private static boolean isVirtual(RecordedThread t) {
    if (IS_VIRTUAL == null) {
      return false;
    }
    try {
      return (boolean) IS_VIRTUAL.invokeExact(t);
    } catch (Throwable e) { // it throws nothing; the impossible counts as a platform thread
      return false;
    }
  }

  RecordedEvents(int maxDepth) {
    this.maxDepth = maxDepth;
  }

  /**
   * The event's fields, or null for an event of the agent's own shaded gRPC and Netty threads (a
   * frame of a class under {@value #OWN_SHADED}).
   */
  JfrEvent read(RecordedEvent e) {
    String eventType = e.getEventType().getName();
    RecordedThread thread = thread(e, eventType);
    long threadId = thread == null ? -1 : thread.getJavaThreadId();
    String name = thread == null || thread.getJavaName() == null ? "" : thread.getJavaName();
    if (thread != null && isVirtual(thread)) {
      threadId = EventMapper.VIRTUAL_THREADS;
      name = EventMapper.VIRTUAL_THREADS_NAME;
    }
    boolean initial = false;
    long initialId = ThreadGroups.initialThreadId();
    if (thread != null && initialId >= 0) {
      initial = threadId == initialId;
    } else if (thread != null && "main".equals(name)) { // the group only when it can matter
      RecordedThreadGroup g = thread.getThreadGroup();
      initial = ThreadGroups.isInitial(threadId, name, g == null ? null : g.getName());
    }
    List<String> frames = new ArrayList<>();
    boolean truncated = false;
    RecordedStackTrace stack = e.getStackTrace();
    if (stack != null) {
      List<RecordedFrame> fs = stack.getFrames();
      truncated = stack.isTruncated() || fs.size() > maxDepth;
      for (int i = 0; i < fs.size(); i++) {
        RecordedFrame f = fs.get(i);
        if (!f.isJavaFrame()) {
          continue;
        }
        String frame = name(f.getMethod());
        if (frame.startsWith(OWN_SHADED)) { // a frame name starts with its class's name
          return null;
        }
        if (frames.size() < maxDepth) {
          frames.add(frame);
        }
      }
    }
    String detail = null;
    long amount = 0;
    switch (eventType) {
      case EventMapper.THREAD_PARK -> {
        RecordedClass c = e.getValue("parkedClass");
        detail = c == null ? null : c.getName();
      }
      case EventMapper.GARBAGE_COLLECTION -> {
        detail = e.getString("name");
        amount = e.getDuration("sumOfPauses").toNanos();
      }
      case EventMapper.ALLOCATION_SAMPLE -> amount = e.getLong("weight");
      case EventMapper.THREAD_START -> {
        RecordedThread started = e.getThread("thread");
        amount = started == null ? -1 : started.getJavaThreadId();
      }
      default -> {}
    }
    return new JfrEvent(
        eventType,
        threadId,
        name,
        initial,
        frames,
        truncated,
        e.getDuration().toNanos(),
        detail,
        amount,
        thread == null || isVirtual(thread) ? -1 : thread.getOSThreadId(),
        epochNanos(e.getStartTime()));
  }

  private static long epochNanos(java.time.Instant t) {
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  /** The frame name of {@code m} ({@link EventMapper#frameName}), cached. */
  private String name(RecordedMethod m) {
    String cached = names.get(m);
    if (cached != null) {
      return cached;
    }
    String name = EventMapper.frameName(m.getType().getName(), m.getName());
    if (names.size() >= MAX_NAMES) {
      names.clear();
    }
    names.put(m, name);
    return name;
  }

  /** The Java thread the event is about. */
  private static RecordedThread thread(RecordedEvent e, String type) {
    return switch (type) {
      case EventMapper.EXECUTION_SAMPLE -> e.getThread("sampledThread");
      case EventMapper.THREAD_START -> {
        RecordedThread parent = e.hasField("parentThread") ? e.getThread("parentThread") : null;
        yield parent != null ? parent : e.getThread();
      }
      case EventMapper.THREAD_END -> e.getThread("thread");
      default -> e.getThread();
    };
  }
}
