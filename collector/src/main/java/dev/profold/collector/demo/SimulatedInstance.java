package dev.profold.collector.demo;

import dev.profold.client.Kind;
import dev.profold.client.internal.activity.LiveThread;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.record.ThreadGroups;
import dev.profold.client.internal.threads.ThreadAggregators;
import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ThreadAggregation;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One simulated process of the demo: worker threads run a {@link Step} tree in a loop; every
 * interval the recorded aggregates and the workers' thread activity (CPU time from their clocks,
 * blocked time as the steps measure it, the wait for a CPU from Linux's scheduler statistics)
 * become a delta, sent on a Push stream and kept until acked. A broken stream is reopened on the
 * next interval and the unacknowledged deltas are sent again (with the dictionary, as a new stream
 * needs). With {@code THREAD_AGGREGATION_NONE} each worker's aggregates go separately, keyed by
 * thread and thread group, as the client library sends them, so that a scheme keeping per-thread
 * detail sees the spread across the workers (docs/analysis.md).
 */
final class SimulatedInstance {
  private static final Logger log = LoggerFactory.getLogger(SimulatedInstance.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int MAX_UNACKED = 100;

  private final String instance;
  private final Step work;
  private final int threads;
  private final Duration interval;
  private final DeltaEncoder encoder;
  private final int regionAttr;
  private final int timeAttr;
  private final int bytesAttr;
  private final ThreadAggregation aggregation;
  private final int threadAttr;
  private final int groupAttr;
  private final ThreadLocal<Integer> workerIndex = ThreadLocal.withInitial(() -> 0);
  private final Object sharedLock = new Object();
  private final List<Thread> workers = new ArrayList<>();
  private final ThreadMXBean threadsMx = ManagementFactory.getThreadMXBean();
  private final ThreadActivity activity = new ThreadActivity(this::liveWorkers);
  private final ScheduledExecutorService exporter;
  private final ArrayDeque<Delta> unacked = new ArrayDeque<>();
  // By worker with NONE, else one: (path << 32 | attribute) -> aggregate.
  private List<Map<Long, Aggregate>> current;
  private long sequence;
  private long intervalStart;
  private volatile boolean running = true;
  private java.util.concurrent.ScheduledFuture<?> exportTask;
  private IngestGrpc.IngestStub stub;
  private StreamObserver<Delta> stream;

  SimulatedInstance(
      String service,
      String instance,
      Step work,
      int threads,
      Duration interval,
      ThreadAggregation aggregation) {
    this.instance = instance;
    this.aggregation = aggregation;
    this.work = work;
    this.threads = threads;
    this.interval = interval;
    long incarnation = RANDOM.nextLong();
    this.encoder =
        new DeltaEncoder(
            SourceIdentity.newBuilder()
                .setService(service)
                .setInstance(instance)
                .setHost("demo")
                .setPid(ProcessHandle.current().pid())
                .putLabels("workload", "demo")
                .setRuntimeVersion("Java " + Runtime.version())
                .setSdkVersion("profold-demo/0.1")
                .setIncarnationId(incarnation == 0 ? 1 : incarnation)
                .setProcessStartUnixNanos(nowNanos())
                .build());
    this.regionAttr = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
    this.timeAttr = encoder.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
    this.bytesAttr = encoder.measurement("io", ValueType.VALUE_TYPE_INT, "bytes");
    this.threadAttr = encoder.dimension(ThreadAggregators.THREAD, ValueType.VALUE_TYPE_STRING);
    this.groupAttr = encoder.dimension(ThreadAggregators.GROUP, ValueType.VALUE_TYPE_STRING);
    this.current = freshAggregates();
    this.exporter =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "demo-export-" + instance);
              t.setDaemon(true);
              return t;
            });
  }

  private static long nowNanos() {
    java.time.Instant t = java.time.Instant.now();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  void start(ManagedChannel channel) {
    stub = IngestGrpc.newStub(channel);
    intervalStart = nowNanos();
    for (int i = 0; i < threads; i++) {
      int index = i;
      Thread t =
          new Thread(
              () -> {
                workerIndex.set(index);
                activity.learnCurrentOsThread(); // its wait for a CPU is cpu_wait, not idle
                while (running) {
                  work.run(this, 0);
                }
              },
              workerName(i));
      t.setDaemon(true);
      t.start();
      workers.add(t);
    }
    long millis = interval.toMillis();
    exportTask =
        exporter.scheduleAtFixedRate(this::exportSafely, millis, millis, TimeUnit.MILLISECONDS);
  }

  int pathNode(int parent, String name, RegionKind kind) {
    return encoder.pathNode(parent, regionAttr, name, kind);
  }

  Object sharedLock() {
    return sharedLock;
  }

  /**
   * The calling worker was blocked for {@code nanos} in a {@code kind} way. Reported to the thread
   * activity from {@link #MIN_BLOCK_NANOS} on, as the agent reports blocks above a threshold: a
   * monitor found free or a park of 0 ns never left the CPU, and a block counts as one that ended
   * with a wait for a CPU (cpu_wait).
   */
  void blocked(Kind kind, long nanos) {
    if (nanos >= MIN_BLOCK_NANOS) {
      activity.offCpu(Thread.currentThread().getId(), kind, nanos);
    }
  }

  /** Shorter than this, a block did not take the thread off its CPU. */
  private static final long MIN_BLOCK_NANOS = 10_000;

  /** This instance's workers with their CPU time: the threads its thread activity reports. */
  private List<LiveThread> liveWorkers() {
    List<LiveThread> out = new ArrayList<>(workers.size());
    for (Thread t : workers) {
      long cpu = threadsMx.isThreadCpuTimeSupported() ? threadsMx.getThreadCpuTime(t.getId()) : -1;
      out.add(new LiveThread(t.getId(), t.getName(), cpu));
    }
    return out;
  }

  void recordTime(int path, double seconds) {
    record(path, timeAttr, seconds);
  }

  void recordBytes(int path, long bytes) {
    record(path, bytesAttr, (double) bytes);
  }

  private String workerName(int index) {
    return instance + "-worker-" + index;
  }

  /** The calling worker's number, from 0. */
  int workerIndex() {
    return workerIndex.get();
  }

  private synchronized void record(int path, int attr, double value) {
    Map<Long, Aggregate> into =
        current.get(aggregation == ThreadAggregation.THREAD_AGGREGATION_NONE ? workerIndex() : 0);
    into.computeIfAbsent(((long) path << 32) | attr, k -> new Aggregate()).record(value);
  }

  private List<Map<Long, Aggregate>> freshAggregates() {
    int n = aggregation == ThreadAggregation.THREAD_AGGREGATION_NONE ? threads : 1;
    List<Map<Long, Aggregate>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(new HashMap<>());
    }
    return out;
  }

  private synchronized List<Map<Long, Aggregate>> swap() {
    List<Map<Long, Aggregate>> out = current;
    current = freshAggregates();
    return out;
  }

  private void exportSafely() {
    try {
      export();
    } catch (RuntimeException e) {
      log.warn("demo instance {}: export failed: {}", instance, e.toString());
    }
  }

  private synchronized void export() {
    long cpuBefore = exporterCpu();
    long end = nowNanos();
    Delta.Builder d =
        Delta.newBuilder()
            .setSequence(++sequence)
            .setIntervalStartUnixNanos(intervalStart)
            .setIntervalEndUnixNanos(end)
            .setThreadAggregation(aggregation);
    d.addAllThreadActivity(activity.close(intervalStart, end));
    intervalStart = end;
    List<Map<Long, Aggregate>> taken = swap();
    for (int w = 0; w < taken.size(); w++) {
      for (Map.Entry<Long, Aggregate> e : taken.get(w).entrySet()) {
        int path = (int) (e.getKey() >>> 32);
        int attr = (int) (long) e.getKey();
        Entry.Builder entry =
            Entry.newBuilder()
                .addKey(AttributeValue.newBuilder().setAttributeId(regionAttr).setPathNodeId(path));
        if (aggregation == ThreadAggregation.THREAD_AGGREGATION_NONE) {
          String name = workerName(w);
          entry
              .addKey(
                  AttributeValue.newBuilder()
                      .setAttributeId(groupAttr)
                      .setStringId(encoder.string(ThreadGroups.normalise(name))))
              .addKey(
                  AttributeValue.newBuilder()
                      .setAttributeId(threadAttr)
                      .setStringId(encoder.string(name)));
        }
        d.addEntries(
            entry.addMeasurements(
                Measurement.newBuilder()
                    .setAttributeId(attr)
                    .setState(WireStates.toProto(e.getValue()))));
      }
    }
    d.setOverhead(
        ClientOverhead.newBuilder()
            .setCpuNanos(Math.max(0, exporterCpu() - cpuBefore))
            .setBytesHeld(d.build().getSerializedSize()));
    if (stream == null) {
      openStream();
    }
    Delta delta = encoder.prepare(d).build();
    unacked.addLast(delta);
    while (unacked.size() > MAX_UNACKED) { // the demo drops the oldest; the client library merges
      unacked.removeFirst();
    }
    stream.onNext(delta);
  }

  private void openStream() {
    encoder.newStream();
    stream =
        stub.push(
            new StreamObserver<>() {
              @Override
              public void onNext(Ack ack) {
                acked(ack);
              }

              @Override
              public void onError(Throwable t) {
                streamBroken(t);
              }

              @Override
              public void onCompleted() {
                streamBroken(null);
              }
            });
    // Resend what was never acknowledged, each with the definitions it references.
    List<Delta> resend = new ArrayList<>(unacked);
    unacked.clear();
    for (Delta old : resend) {
      Delta again = encoder.prepare(old.toBuilder().clearSource().clearDictionary()).build();
      unacked.addLast(again);
      stream.onNext(again);
    }
  }

  /** Waits until every delta sent is acknowledged, the stream broke, or {@code nanos} passed. */
  private synchronized void awaitAcks(long nanos) throws InterruptedException {
    long deadline = System.nanoTime() + nanos;
    long left;
    while (stream != null && !unacked.isEmpty() && (left = deadline - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  private synchronized void acked(Ack ack) {
    if (ack.getResult() == AckResult.ACK_RESULT_REJECTED) {
      log.warn(
          "demo instance {}: delta {} rejected: {}",
          instance,
          ack.getSequence(),
          ack.getStatus().getMessage());
    }
    while (!unacked.isEmpty() && unacked.peekFirst().getSequence() <= ack.getSequence()) {
      unacked.removeFirst();
    }
    notifyAll(); // awaitAcks
  }

  private synchronized void streamBroken(Throwable t) {
    if (running) {
      log.info(
          "demo instance {}: stream ended ({}); reconnecting next interval with {} unacked deltas",
          instance,
          t == null ? "completed" : t.getMessage(),
          unacked.size());
    }
    stream = null;
    notifyAll(); // awaitAcks
  }

  private static long exporterCpu() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    return mx.isCurrentThreadCpuTimeSupported() ? mx.getCurrentThreadCpuTime() : 0;
  }

  void close() {
    running = false;
    for (Thread t : workers) {
      try {
        t.join(1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    synchronized (this) {
      if (exportTask != null) {
        exportTask.cancel(false);
      }
    }
    exporter.shutdown();
    try {
      exporter.awaitTermination(2, TimeUnit.SECONDS);
      exportSafely(); // the interval cut short, as the client library's shutdown sends it
      awaitAcks(TimeUnit.SECONDS.toNanos(1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      if (stream != null) {
        stream.onCompleted();
        stream = null;
      }
    }
  }
}
