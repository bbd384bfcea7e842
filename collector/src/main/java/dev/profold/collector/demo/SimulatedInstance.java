package dev.profold.collector.demo;

import dev.profold.client.Kind;
import dev.profold.client.internal.activity.LiveThread;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.export.DeltaEncoder;
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
 * blocked time as the steps measure it) become a delta, sent on a Push stream and kept until acked.
 * A broken stream is reopened on the next interval and the unacknowledged deltas are sent again
 * (with the dictionary, as a new stream needs).
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
  private final Object sharedLock = new Object();
  private final List<Thread> workers = new ArrayList<>();
  private final ThreadMXBean threadsMx = ManagementFactory.getThreadMXBean();
  private final ThreadActivity activity = new ThreadActivity(this::liveWorkers);
  private final ScheduledExecutorService exporter;
  private final ArrayDeque<Delta> unacked = new ArrayDeque<>();
  private Map<Long, Aggregate> current = new HashMap<>();
  private long sequence;
  private long intervalStart;
  private volatile boolean running = true;
  private java.util.concurrent.ScheduledFuture<?> exportTask;
  private IngestGrpc.IngestStub stub;
  private StreamObserver<Delta> stream;

  SimulatedInstance(String service, String instance, Step work, int threads, Duration interval) {
    this.instance = instance;
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
      Thread t =
          new Thread(
              () -> {
                while (running) {
                  work.run(this, 0);
                }
              },
              instance + "-worker-" + i);
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

  /** The calling worker was blocked for {@code nanos} in a {@code kind} way. */
  void blocked(Kind kind, long nanos) {
    activity.offCpu(Thread.currentThread().getId(), kind, nanos);
  }

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

  private synchronized void record(int path, int attr, double value) {
    current.computeIfAbsent(((long) path << 32) | attr, k -> new Aggregate()).record(value);
  }

  private synchronized Map<Long, Aggregate> swap() {
    Map<Long, Aggregate> out = current;
    current = new HashMap<>();
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
            .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_SUM);
    d.addAllThreadActivity(activity.close(intervalStart, end));
    intervalStart = end;
    for (Map.Entry<Long, Aggregate> e : swap().entrySet()) {
      int path = (int) (e.getKey() >>> 32);
      int attr = (int) (long) e.getKey();
      d.addEntries(
          Entry.newBuilder()
              .addKey(AttributeValue.newBuilder().setAttributeId(regionAttr).setPathNodeId(path))
              .addMeasurements(
                  Measurement.newBuilder()
                      .setAttributeId(attr)
                      .setState(WireStates.toProto(e.getValue()))));
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
