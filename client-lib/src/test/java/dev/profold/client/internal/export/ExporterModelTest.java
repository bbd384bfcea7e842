package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.Code;
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
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The exporter against a model of the collector, in random scenarios: a fake collector that follows
 * the protocol's rules (de-duplication by sequence, overlapping ranges refused, the first delta of
 * a stream carries the source, every reference defined on its stream) and, step by step at random,
 * deltas submitted as the runtime submits them (with the export report and the lost events of
 * earlier deltas), acks APPLIED, permanent and retryable rejections, acks lost with the stream,
 * stream failures with and without RetryInfo, a gRPC message limit lowered below the client's,
 * small buffers (merges, drops), large deltas (splits), rotations and time passing.
 *
 * <p>Checked after every step: no protocol violation and nothing resolved twice; at the end, once
 * the collector stops failing: everything resolved, the buffer empty, and every event, reconnect
 * and merge accounted exactly once: applied, refused, or reported lost and not yet re-reported. In
 * scenarios where an ack is lost after the collector applied the delta, the delta may be counted
 * lost as well (the exporter's documented over-count), so only "at least once" holds there.
 *
 * <p>{@code -Dprofold.model.seeds=N} runs N scenarios (150 by default).
 */
class ExporterModelTest {

  /** The fake collector. All callbacks run on the test thread (direct executors). */
  static final class Collector extends IngestGrpc.IngestImplBase {
    final List<FStream> streams = new ArrayList<>();
    long lastApplied;
    long limit = Long.MAX_VALUE;
    final Tally applied = new Tally();
    final Tally refused = new Tally();
    final Set<Long> rejectedSeqs = new HashSet<>();
    final List<String> violations = new ArrayList<>();
    int keyAttribute = -1; // the attribute whose value names an entry's path node

    @Override
    public StreamObserver<Delta> push(StreamObserver<Ack> responses) {
      FStream s = new FStream((ServerCallStreamObserver<Ack>) responses);
      streams.add(s);
      s.out.setOnCancelHandler(() -> s.dead = true);
      return new StreamObserver<>() {
        @Override
        public void onNext(Delta d) {
          if (s.dead) {
            return;
          }
          if (d.getSerializedSize() > limit) {
            s.fail(
                Status.RESOURCE_EXHAUSTED
                    .withDescription(
                        "gRPC message exceeds maximum size " + limit + ": " + d.getSerializedSize())
                    .asRuntimeException());
            return;
          }
          if (s.received == 0 && !d.hasSource()) {
            violations.add("first delta of a stream without source: seq " + d.getSequence());
          }
          s.received++;
          checkDictionary(s, d);
          s.pending.add(d);
        }

        @Override
        public void onError(Throwable t) {
          s.dead = true;
          s.pending.clear();
        }

        @Override
        public void onCompleted() {
          s.halfClosed = true;
          s.maybeComplete();
        }
      };
    }

    /** Handles the oldest pending delta of {@code s}: 0 apply, 1 permanent reject, 2 retry. */
    void process(FStream s, int how) {
      Delta d = s.pending.poll();
      if (d == null) {
        return;
      }
      long seq = d.getSequence();
      long first = d.getFirstSequence() == 0 ? seq : d.getFirstSequence();
      if (seq <= lastApplied) {
        s.ack(seq, AckResult.ACK_RESULT_DUPLICATE, null);
      } else if (first <= lastApplied) {
        violations.add("overlap: [" + first + "," + seq + "] after " + lastApplied);
        s.ack(seq, AckResult.ACK_RESULT_REJECTED, status(Code.FAILED_PRECONDITION, null));
      } else if (rejectedSeqs.contains(seq)) {
        violations.add("a permanently rejected delta was sent again: " + seq);
        s.ack(seq, AckResult.ACK_RESULT_REJECTED, status(Code.INVALID_ARGUMENT, null));
      } else if (how == 1) {
        rejectedSeqs.add(seq);
        refused.add(d);
        s.ack(seq, AckResult.ACK_RESULT_REJECTED, status(Code.INVALID_ARGUMENT, null));
      } else if (how == 2) {
        s.ack(seq, AckResult.ACK_RESULT_REJECTED, status(Code.UNAVAILABLE, Duration.ofMillis(700)));
      } else if (how == 3) {
        lastApplied = seq; // applied, but the ack is lost: the stream then breaks
        applied.add(d);
        s.fail(Status.UNAVAILABLE.asRuntimeException());
        return;
      } else {
        lastApplied = seq;
        applied.add(d);
        s.ack(seq, AckResult.ACK_RESULT_APPLIED, null);
      }
      s.maybeComplete();
    }

    void checkDictionary(FStream s, Delta d) {
      for (var e : d.getDictionary().getStringsMap().entrySet()) {
        String old = s.strings.putIfAbsent(e.getKey(), e.getValue());
        if (old != null && !old.equals(e.getValue())) {
          violations.add(
              "string " + e.getKey() + " redefined on a stream: " + old + " -> " + e.getValue());
        }
      }
      for (var a : d.getDictionary().getAttributesList()) {
        s.attributes.add(a.getId());
      }
      for (var n : d.getDictionary().getPathNodesList()) {
        if (n.getParentId() != 0 && !s.paths.containsKey(n.getParentId())) {
          violations.add("path node " + n.getId() + " before its parent");
        }
        if (!s.strings.containsKey(n.getNameId())) {
          violations.add(
              "path node "
                  + n.getId()
                  + " names undefined string "
                  + n.getNameId()
                  + " seq "
                  + d.getSequence());
        }
        String name = s.strings.get(n.getNameId());
        String old = s.paths.putIfAbsent(n.getId(), name);
        if (old != null && !old.equals(name)) {
          violations.add("path " + n.getId() + " redefined on a stream: " + old + " -> " + name);
        }
      }
      for (var e : d.getEntriesList()) {
        String node = null;
        long kv = -1;
        for (var v : e.getKeyList()) {
          if (!s.attributes.contains(v.getAttributeId())) {
            violations.add("undefined attribute " + v.getAttributeId() + " seq " + d.getSequence());
          }
          if (v.getValueCase() == AttributeValue.ValueCase.PATH_NODE_ID) {
            node = s.paths.get(v.getPathNodeId());
            if (node == null) {
              violations.add(
                  "undefined path node " + v.getPathNodeId() + " seq " + d.getSequence());
              return;
            }
          } else if (v.getAttributeId() == keyAttribute) {
            kv = v.getIntValue();
          }
        }
        if (node != null
            && !node.equals(DeltaEncoder.OVERFLOW)
            && !node.equals("n-" + kv + "-" + "y".repeat(30))) {
          violations.add("entry of k=" + kv + " resolves to " + node + " seq " + d.getSequence());
          return;
        }
      }
      for (var m : d.getEntriesList()) {
        for (var x : m.getMeasurementsList()) {
          if (!s.attributes.contains(x.getAttributeId())) {
            violations.add("undefined measurement attribute " + x.getAttributeId());
          }
        }
      }
    }

    FStream live() {
      for (int i = streams.size() - 1; i >= 0; i--) {
        if (!streams.get(i).dead) {
          return streams.get(i);
        }
      }
      return null;
    }
  }

  static com.google.rpc.Status status(Code code, Duration retry) {
    com.google.rpc.Status.Builder b =
        com.google.rpc.Status.newBuilder().setCode(code.getNumber()).setMessage("no");
    if (retry != null) {
      b.addDetails(ExporterTest.retryInfo(retry));
    }
    return b.build();
  }

  /** What the deltas a collector applied (or refused) carried: events and export counts. */
  static final class Tally {
    long events;
    long dropped;
    long reconnects;
    long merges;

    void add(Delta d) {
      ClientOverhead o = d.getOverhead();
      events += DeltaBuffer.events(d);
      dropped += o.getEventsDropped();
      reconnects += o.getExportReconnects();
      merges += o.getExportDeltasMerged();
    }
  }

  static final class FStream {
    final ServerCallStreamObserver<Ack> out;
    final ArrayDeque<Delta> pending = new ArrayDeque<>();
    boolean dead;
    boolean halfClosed;
    int received;
    final java.util.Map<Integer, String> strings = new java.util.HashMap<>();
    final java.util.Map<Integer, String> paths = new java.util.HashMap<>();
    final Set<Integer> attributes = new HashSet<>();

    FStream(ServerCallStreamObserver<Ack> out) {
      this.out = out;
    }

    void ack(long seq, AckResult r, com.google.rpc.Status st) {
      Ack.Builder a = Ack.newBuilder().setSequence(seq).setResult(r);
      if (st != null) {
        a.setStatus(st);
      }
      out.onNext(a.build());
    }

    void fail(RuntimeException e) {
      if (!dead) {
        dead = true;
        pending.clear();
        out.onError(e);
      }
    }

    void maybeComplete() {
      if (halfClosed && pending.isEmpty() && !dead) {
        dead = true;
        out.onCompleted();
      }
    }
  }

  @Test
  void randomScenarios() throws Exception {
    int seeds = Integer.getInteger("profold.model.seeds", 150);
    List<String> failures = new ArrayList<>();
    for (int seed = 0; seed < seeds && failures.size() < 5; seed++) {
      String f = run(seed);
      if (f != null) {
        failures.add("seed " + seed + ": " + f);
      }
    }
    assertThat(failures).isEmpty();
    // The scenarios reached every path they are meant to exercise.
    assertThat(cover.merged).as("merges").isPositive();
    assertThat(cover.dropped).as("drops").isPositive();
    assertThat(cover.split).as("splits").isPositive();
    assertThat(cover.rotations).as("rotations").isPositive();
    assertThat(cover.reconnects).as("reconnects").isPositive();
    assertThat(cover.rejected).as("rejections").isPositive();
    assertThat(cover.duplicates).as("duplicates").isPositive();
    assertThat(cover.limited).as("lowered message limits").isPositive();
    assertThat(cover.internalErrors).as("internal errors").isZero();
  }

  /** What the scenarios went through, summed over them. */
  private static final class Coverage {
    long merged;
    long dropped;
    long split;
    long rotations;
    long reconnects;
    long rejected;
    long duplicates;
    long limited;
    long internalErrors;
  }

  private final Coverage cover = new Coverage();

  private static long unresolved(Exporter e) {
    return e.unacknowledged();
  }

  String run(long seed) throws Exception {
    Random rnd = new Random(seed);
    Collector c = new Collector();
    String name = InProcessServerBuilder.generateName();
    Server server = InProcessServerBuilder.forName(name).directExecutor().addService(c).build();
    server.start();
    ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    ManualScheduler scheduler = new ManualScheduler();
    DeltaEncoder encoder =
        new DeltaEncoder(
            SourceIdentity.newBuilder()
                .setService("s")
                .setInstance("i")
                .setIncarnationId(1)
                .setProcessStartUnixNanos(ExporterTest.T0 - 1)
                .build(),
            new long[] {6_000, 12_000, 1 << 20}[rnd.nextInt(3)]);
    int region = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
    int k = encoder.dimension("k", ValueType.VALUE_TYPE_INT);
    c.keyAttribute = k;
    int jd = encoder.dimension("j", ValueType.VALUE_TYPE_INT);
    int time = encoder.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
    int[] nodes = new int[20];
    for (int i = 0; i < nodes.length; i++) {
      nodes[i] =
          encoder.pathNode(
              0,
              region,
              "node-with-a-longish-name-" + i + "-" + "x".repeat(40),
              RegionKind.REGION_KIND_COMPUTE);
    }
    int maxInFlight = rnd.nextInt(3) == 0 ? 3 : 1;
    boolean silentSeed = seed % 3 == 0;
    boolean limitSeed = seed % 4 == 1;
    ExporterConfig config =
        ExporterConfig.defaults()
            .withJitter(0)
            .withBackoff(Duration.ofMillis(500), Duration.ofSeconds(2))
            .withAckTimeout(Duration.ofSeconds(30))
            .withMaxInFlight(maxInFlight)
            .withMaxMessageBytes(64 << 10)
            .withMaxBufferBytes(new long[] {20_000, 60_000, 150_000}[rnd.nextInt(3)])
            .withRotation(1 + rnd.nextInt(3000), Duration.ofSeconds(rnd.nextInt(20)));
    Exporter e = new Exporter(channel, encoder, config, scheduler, ExporterTest.fixedRandom(0.5));
    long generated = 0;
    long lastEventsLost = 0;
    int interval = 0;
    StringBuilder log = new StringBuilder();
    try {
      for (int step = 0; step < 250; step++) {
        int a = rnd.nextInt(100);
        FStream live = c.live();
        if (a < 30) {
          // submit, as ProfoldRuntime.flushInterval does
          ExporterStats stats = e.stats();
          ExportReport report = e.takeReport();
          long newlyLost = Math.max(0, stats.eventsLost() - lastEventsLost);
          lastEventsLost = stats.eventsLost();
          int n = rnd.nextInt(10) == 0 ? 300 + rnd.nextInt(1200) : 1 + rnd.nextInt(40);
          Delta.Builder d =
              Delta.newBuilder()
                  .setIntervalStartUnixNanos(ExporterTest.T0 + interval * 10_000_000_000L)
                  .setIntervalEndUnixNanos(ExporterTest.T0 + (interval + 1) * 10_000_000_000L)
                  .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_SUM)
                  .setOverhead(
                      ClientOverhead.newBuilder()
                          .setCpuNanos(1)
                          .setEventsDropped(newlyLost)
                          .setExportReconnects(report.reconnects())
                          .setExportDeltasMerged(report.deltasMerged())
                          .setExportBufferedBytes(report.bufferedBytes())
                          .setExportBufferLimitBytes(report.bufferLimitBytes()));
          for (int j = 0; j < n; j++) {
            int idx = interval * 2 + rnd.nextInt(12);
            int node =
                encoder.pathNode(
                    0, region, "n-" + idx + "-" + "y".repeat(30), RegionKind.REGION_KIND_COMPUTE);
            Aggregate agg = new Aggregate();
            int cnt = 1 + rnd.nextInt(3);
            for (int x = 0; x < cnt; x++) {
              agg.record(rnd.nextDouble());
            }
            generated += cnt;
            d.addEntries(
                Entry.newBuilder()
                    .addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(node))
                    .addKey(AttributeValue.newBuilder().setAttributeId(k).setIntValue(idx))
                    .addKey(AttributeValue.newBuilder().setAttributeId(jd).setIntValue(j))
                    .addMeasurements(
                        Measurement.newBuilder()
                            .setAttributeId(time)
                            .setState(WireStates.toProto(agg))));
          }
          interval++;
          e.submit(d);
          log.append("submit(").append(n).append(") ");
        } else if (a < 60 && live != null) {
          int how = 0;
          int r = rnd.nextInt(100);
          if (r < 4) {
            how = 1;
          } else if (r < 8 && maxInFlight == 1) {
            how = 2;
          } else if (r < 12 && silentSeed) {
            how = 3;
          }
          c.process(live, how);
          log.append("process(").append(how).append(") ");
        } else if (a < 65 && live != null) {
          live.fail(
              StatusProto.toStatusRuntimeException(
                  status(Code.UNAVAILABLE, Duration.ofMillis(rnd.nextInt(3000)))));
          log.append("fail ");
        } else if (a < 66 && live != null) {
          live.fail(Status.UNAVAILABLE.asRuntimeException()); // no RetryInfo
          log.append("failNoRetry ");
        } else if (a < 67 && limitSeed && c.limit == Long.MAX_VALUE) {
          c.limit = 40_000 + rnd.nextInt(20_000);
          log.append("limit(").append(c.limit).append(") ");
        } else {
          Duration adv = Duration.ofMillis(rnd.nextInt(rnd.nextInt(10) == 0 ? 40_000 : 3_000));
          scheduler.advance(adv);
          log.append("advance(").append(adv.toMillis()).append(") ");
        }
        scheduler.runDue();
        long u = unresolved(e);
        if (u < 0) {
          return "unresolved went negative: " + u + " after " + tail(log);
        }
        if (!c.violations.isEmpty()) {
          return c.violations + " after " + tail(log);
        }
      }
      // heal: no more failures or rejections; deliver everything
      for (int i = 0; i < 3000 && !e.flush(Duration.ZERO); i++) {
        FStream live = c.live();
        if (live != null && !live.pending.isEmpty()) {
          c.process(live, 0);
        } else {
          scheduler.advance(Duration.ofMillis(500));
        }
        scheduler.runDue();
      }
      if (!c.violations.isEmpty()) {
        return c.violations.toString();
      }
      ExporterStats s = e.stats();
      if (!e.flush(Duration.ZERO)) {
        return "not settled: unresolved " + unresolved(e) + " " + s;
      }
      if (unresolved(e) != 0) {
        return "unresolved " + unresolved(e);
      }
      ExportReport last = e.takeReport();
      cover.merged += s.merged();
      cover.dropped += s.dropped();
      cover.split += s.split();
      cover.rotations += s.rotations();
      cover.reconnects += s.reconnects();
      cover.rejected += s.rejected().values().stream().mapToLong(x -> x).sum();
      cover.duplicates += s.duplicates();
      cover.internalErrors += s.internalErrors();
      cover.limited += c.limit == Long.MAX_VALUE ? 0 : 1;
      long pendingLost = s.eventsLost() - lastEventsLost;
      long accounted =
          c.applied.events + c.applied.dropped + c.refused.events + c.refused.dropped + pendingLost;
      List<String> problems = new ArrayList<>();
      if (silentSeed ? accounted < generated : accounted != generated) {
        problems.add(
            "events: generated "
                + generated
                + " but applied "
                + c.applied.events
                + "+"
                + c.applied.dropped
                + " rejected "
                + c.refused.events
                + "+"
                + c.refused.dropped
                + " pendingLost "
                + pendingLost);
      }
      long rec = c.applied.reconnects + c.refused.reconnects + last.reconnects();
      if (silentSeed ? rec < s.reconnects() : rec != s.reconnects()) {
        problems.add("reconnects: stats " + s.reconnects() + " but reported " + rec);
      }
      long mer = c.applied.merges + c.refused.merges + last.deltasMerged();
      if (silentSeed ? mer < s.merged() : mer != s.merged()) {
        problems.add("merged: stats " + s.merged() + " but reported " + mer);
      }
      if (s.bufferedDeltas() != 0 || s.bufferedBytes() != 0) {
        problems.add("buffer not empty: " + s);
      }
      if (!problems.isEmpty()) {
        return problems + " stats=" + s + " maxInFlight=" + maxInFlight + " log: " + tail(log);
      }
      return null;
    } finally {
      e.close();
      scheduler.runDue();
      channel.shutdownNow();
      server.shutdownNow();
    }
  }

  private static String tail(StringBuilder log) {
    return log.length() > 3000 ? "..." + log.substring(log.length() - 3000) : log.toString();
  }
}
