package dev.profold.collector.ingest;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.RetryInfo;
import com.google.rpc.Status;
import dev.profold.collector.dictionary.DictionaryFullException;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldResult;
import dev.profold.collector.fold.FoldWorker;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.telemetry.RejectReason;
import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.ExportResponse;
import dev.profold.proto.v1.IngestGrpc;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC {@code profold.v1.Ingest} service: decodes and validates deltas on the receiving thread,
 * hands them to the {@link FoldWorker}, and acknowledges each once applied.
 *
 * <p>On a Push stream every ack (applied, duplicate or rejected) is emitted from the fold thread in
 * the order the deltas arrived. A bad delta is rejected in its ack (INVALID_ARGUMENT naming the
 * field) and the stream goes on; only a stream that cannot be attributed to a source ends with an
 * error. Overload and shutdown answer RESOURCE_EXHAUSTED / UNAVAILABLE with a google.rpc.RetryInfo
 * detail.
 *
 * <p>Push streams use gRPC flow control: the service reads a stream's next delta only while fewer
 * than {@link #MAX_UNACKED_DELTAS} of its deltas wait for their ack to be written and the stream
 * takes what is written ({@code isReady()}). A client that does not read its acks therefore holds
 * at most that many acks buffered in the collector; its stream stops being read (counted in {@code
 * profold_ingest_push_paused_total}) until it reads them, and every delta read is still applied and
 * acknowledged.
 *
 * <p>Thread-safe.
 */
public final class IngestService extends IngestGrpc.IngestImplBase {
  private static final Logger log = LoggerFactory.getLogger(IngestService.class);

  /**
   * Deltas of one Push stream read but whose ack is not yet written, at most; it also bounds the
   * acks buffered for a client that does not read them.
   */
  public static final int MAX_UNACKED_DELTAS = 64;

  private final GlobalDictionary dictionary;
  private final FoldWorker worker;
  private final CollectorMetrics metrics;
  private final Duration retryDelay;
  private final Set<AckStream> open = ConcurrentHashMap.newKeySet();
  private final Set<PendingExport> exports = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  private final ExportHolds exportHolds;

  public IngestService(
      GlobalDictionary dictionary,
      FoldWorker worker,
      CollectorMetrics metrics,
      Duration retryDelay) {
    this(dictionary, worker, metrics, retryDelay, new ExportHolds(System::nanoTime));
  }

  /** As above, with the holds of refused Export calls given (tests: their clock). */
  IngestService(
      GlobalDictionary dictionary,
      FoldWorker worker,
      CollectorMetrics metrics,
      Duration retryDelay,
      ExportHolds exportHolds) {
    this.dictionary = dictionary;
    this.worker = worker;
    this.metrics = metrics;
    this.retryDelay = retryDelay;
    this.exportHolds = exportHolds;
    metrics.pushStreams(open::size);
  }

  @Override
  public StreamObserver<Delta> push(StreamObserver<Ack> responses) {
    ServerCallStreamObserver<Ack> out = (ServerCallStreamObserver<Ack>) responses;
    out.disableAutoRequest();
    AckStream acks = new AckStream(out, metrics);
    out.setOnReadyHandler(acks::requestMore);
    // With a cancel handler set, gRPC ignores a write after the client cancelled instead of
    // throwing from onNext: an ack written between isCancelled() and onNext() logged an ERROR.
    out.setOnCancelHandler(acks::cancelled);
    open.add(acks);
    if (closed) { // opened after closeStreams(): nothing would answer its deltas
      acks.fail(unavailable());
      open.remove(acks);
    }
    acks.requestMore();
    StreamDecoder decoder = new StreamDecoder(dictionary);
    return new StreamObserver<>() {
      // Set once the stream is ending; gRPC calls onNext and onCompleted one at a time.
      private boolean ending;

      // The first sequence of a delta refused for now (retryable) on this stream, 0 for none, and
      // why: a later delta applied ahead of it would make its resend a DUPLICATE (its data lost),
      // so later deltas are refused too until it comes again.
      private long refusedFrom;
      private RejectReason refusedFor;
      private Status refusedStatus;

      @Override
      public void onNext(Delta delta) {
        if (ending) {
          return; // it ends with the status already queued after its earlier acks
        }
        int size = delta.getSerializedSize();
        metrics.deltaReceived(size);
        long seq = delta.getSequence();
        long from = delta.getFirstSequence() == 0 ? seq : delta.getFirstSequence();
        DecodedDelta decoded;
        try {
          decoded = decoder.decode(delta, size);
        } catch (InvalidDeltaException e) {
          metrics.deltaRejected(RejectReason.INVALID);
          if (decoder.source() == null) {
            io.grpc.StatusRuntimeException invalid =
                io.grpc.Status.INVALID_ARGUMENT
                    .withDescription(e.getMessage())
                    .asRuntimeException();
            // Open until the fold thread ends it, so that closeStreams ends it if that thread
            // fails before it gets there.
            if (!worker.execute(() -> close(acks, invalid))) {
              close(acks, invalid);
            }
            end();
          } else {
            answer(rejectedAck(seq, status(Code.INVALID_ARGUMENT, e.getMessage(), null)));
          }
          return;
        } catch (DictionaryFullException e) {
          metrics.deltaRejected(RejectReason.DICTIONARY_FULL);
          Status refused = status(Code.RESOURCE_EXHAUSTED, e.getMessage(), Duration.ofMinutes(1));
          refusedForNow(from, RejectReason.DICTIONARY_FULL, refused);
          answer(rejectedAck(seq, refused));
          return;
        }
        // Decoded first, so that a malformed delta behind a refused one is said to be malformed
        // (a permanent refusal), not refused for now.
        if (refusedFrom != 0) {
          if (Long.compareUnsigned(from, refusedFrom) > 0) {
            metrics.deltaRejected(refusedFor);
            answer(rejectedAck(seq, waitingFor(from)));
            return;
          }
          refusedFrom = 0; // the refused delta (or one before it) again: taken as any other
        }
        boolean queued = worker.submit(decoded, r -> acks.send(ack(seq, r)));
        if (!queued) {
          Refusal refused = refusal();
          refusedForNow(from, refused.reason(), refused.status());
          answer(rejectedAck(seq, refused.status()));
        }
      }

      /** Remembers that the delta from {@code from} was refused for now. */
      private void refusedForNow(long from, RejectReason reason, Status refused) {
        if (refusedFrom == 0) {
          refusedFrom = from;
          refusedFor = reason;
          refusedStatus = refused;
        }
      }

      /** The refusal of a delta from {@code from}, sent behind the one refused for now. */
      private Status waitingFor(long from) {
        Status.Builder b = refusedStatus.toBuilder();
        return b.setMessage(
                "sequence "
                    + Long.toUnsignedString(refusedFrom)
                    + " was refused for now on this stream and must be applied before "
                    + Long.toUnsignedString(from)
                    + "; resend from "
                    + Long.toUnsignedString(refusedFrom)
                    + " ("
                    + refusedStatus.getMessage()
                    + ")")
            .build();
      }

      /**
       * Queues a rejection ack behind the stream's earlier acks, its size counted toward
       * limits.max_pending_bytes like a delta's. Over the limit the stream ends instead, after the
       * acks already queued for it: RESOURCE_EXHAUSTED with a retry delay (UNAVAILABLE when
       * shutting down), so many streams of bad or refused deltas cannot grow the queue unbounded.
       */
      private void answer(Ack ack) {
        if (worker.executeCharged(ack.getSerializedSize(), () -> acks.send(ack))) {
          return;
        }
        end();
        io.grpc.StatusRuntimeException end;
        if (worker.accepting()) {
          metrics.pushOverloaded();
          end =
              StatusProto.toStatusRuntimeException(
                  status(
                      Code.RESOURCE_EXHAUSTED,
                      "the collector has too many received deltas and acks waiting"
                          + " (limits.max_pending_bytes); reconnect after the delay and resend"
                          + " the deltas not acknowledged",
                      retryDelay));
        } else {
          end = unavailable();
        }
        // Open until its end runs on the fold thread, so that closeStreams ends it should that
        // thread fail first (an overloaded fold is when it is likeliest to run out of memory).
        if (!worker.execute(() -> close(acks, end))) {
          close(acks, end); // the fold thread has stopped: every ack it will send is sent
        }
      }

      /**
       * The stream reads no more deltas: the dictionary references of its ids are given back on the
       * fold thread, after the deltas it queued (gRPC tells the request side nothing once the
       * server has closed the call, so the server's own ends call this too).
       */
      private void end() {
        if (!ending) {
          ending = true;
          worker.execute(decoder::release);
        }
      }

      @Override
      public void onError(Throwable t) {
        open.remove(acks);
        end();
        log.debug("push stream of {} ended by the client: {}", decoder.source(), t.toString());
      }

      @Override
      public void onCompleted() {
        // Its definitions are given back first, so that a client moving to a new stream once this
        // one is completed finds them counted once (limits.stream_ids).
        end();
        // Open until its acks are sent and it is completed, on the fold thread: if that thread
        // fails first, closeStreams ends it with UNAVAILABLE (its client resends what it has not
        // seen acknowledged) instead of leaving it without an answer.
        if (!worker.execute(
            () -> {
              acks.complete();
              open.remove(acks);
            })) {
          close(acks, unavailable());
        }
      }
    };
  }

  /** Ends {@code acks} with {@code error} and forgets it. */
  private void close(AckStream acks, Throwable error) {
    acks.fail(error);
    open.remove(acks);
  }

  /**
   * An Export call queued for the fold thread: answered once, by the fold thread's result or, if
   * that thread fails or stops before it, by {@link #closeStreams}.
   */
  private static final class PendingExport {
    final StreamObserver<ExportResponse> responses;
    private final java.util.concurrent.atomic.AtomicBoolean answered =
        new java.util.concurrent.atomic.AtomicBoolean();

    PendingExport(StreamObserver<ExportResponse> responses) {
      this.responses = responses;
    }

    /** True for the one caller that may answer the call. */
    boolean claim() {
      return answered.compareAndSet(false, true);
    }
  }

  @Override
  public void export(Delta delta, StreamObserver<ExportResponse> responses) {
    int size = delta.getSerializedSize();
    metrics.deltaReceived(size);
    long seq = delta.getSequence();
    long from = delta.getFirstSequence() == 0 ? seq : delta.getFirstSequence();
    DecodedDelta decoded;
    StreamDecoder decoder = new StreamDecoder(dictionary);
    try {
      decoded = decoder.decode(delta, size);
    } catch (InvalidDeltaException e) {
      metrics.deltaRejected(RejectReason.INVALID);
      decoder.release(); // nothing of this call was queued
      responses.onError(
          io.grpc.Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
      return;
    } catch (DictionaryFullException e) {
      metrics.deltaRejected(RejectReason.DICTIONARY_FULL);
      decoder.release(); // nothing of this call was queued
      Status refused = status(Code.RESOURCE_EXHAUSTED, e.getMessage(), Duration.ofMinutes(1));
      exportHolds.refused(delta.getSource(), from, RejectReason.DICTIONARY_FULL, refused);
      responses.onError(StatusProto.toStatusRuntimeException(refused));
      return;
    }
    // Decoded first, so that a malformed delta behind a refused one is said to be malformed (a
    // permanent refusal), not refused for now.
    ExportHolds.Hold held = exportHolds.holding(delta.getSource(), from);
    if (held != null) {
      metrics.deltaRejected(held.reason());
      decoder.release(); // nothing of this call was queued
      responses.onError(StatusProto.toStatusRuntimeException(waitingFor(held, from)));
      return;
    }
    PendingExport call = new PendingExport(responses);
    exports.add(call);
    boolean queued =
        worker.submit(
            decoded,
            r -> {
              exports.remove(call);
              if (!call.claim()) {
                return; // answered by closeStreams already
              }
              if (r.outcome() == FoldResult.Outcome.REJECTED) {
                responses.onError(StatusProto.toStatusRuntimeException(rejection(r)));
              } else {
                responses.onNext(
                    ExportResponse.newBuilder()
                        .setResult(
                            r.outcome() == FoldResult.Outcome.APPLIED
                                ? AckResult.ACK_RESULT_APPLIED
                                : AckResult.ACK_RESULT_DUPLICATE)
                        .setEntriesOverflowed(r.overflowed())
                        .build());
                responses.onCompleted();
              }
            });
    if (queued) {
      worker.execute(decoder::release); // after the delta is folded
      if (closed && exports.remove(call) && call.claim()) {
        // closeStreams ran meanwhile and may have missed it: nothing will answer it now
        responses.onError(unavailable());
      }
    } else {
      exports.remove(call);
      decoder.release(); // nothing of this call was queued
      Refusal refused = refusal();
      exportHolds.refused(delta.getSource(), from, refused.reason(), refused.status());
      if (call.claim()) {
        responses.onError(StatusProto.toStatusRuntimeException(refused.status()));
      }
    }
  }

  /** The refusal of an Export of sequences from {@code from}, sent behind {@code held}. */
  private static Status waitingFor(ExportHolds.Hold held, long from) {
    return held.status().toBuilder()
        .setMessage(
            "sequence "
                + Long.toUnsignedString(held.from())
                + " of this source was refused for now and must be applied before "
                + Long.toUnsignedString(from)
                + "; export "
                + Long.toUnsignedString(held.from())
                + " again first ("
                + held.status().getMessage()
                + ")")
        .build();
  }

  /** Why a delta was not queued, as counted, and what its sender is told. */
  private record Refusal(RejectReason reason, Status status) {}

  /** The refusal of a delta the worker would not queue (overloaded or shutting down), counted. */
  private Refusal refusal() {
    String failure = worker.failure();
    Refusal r;
    if (failure != null) {
      r = new Refusal(RejectReason.FOLD_FAILED, foldFailed(failure));
    } else if (!worker.accepting()) {
      r =
          new Refusal(
              RejectReason.SHUTTING_DOWN,
              status(Code.UNAVAILABLE, "the collector is shutting down; retry", retryDelay));
    } else {
      r =
          new Refusal(
              RejectReason.OVERLOADED,
              status(
                  Code.RESOURCE_EXHAUSTED,
                  "the collector has too many received deltas waiting to be folded"
                      + " (limits.max_pending_bytes); retry after the delay",
                  retryDelay));
    }
    metrics.deltaRejected(r.reason());
    return r;
  }

  /**
   * Ends every open Push stream with UNAVAILABLE and a retry delay (at shutdown, after the fold has
   * drained; or once the fold thread failed), and every stream opened later.
   */
  public void closeStreams() {
    closed = true;
    io.grpc.StatusRuntimeException e = unavailable();
    for (AckStream s : open) {
      s.fail(e);
    }
    open.clear();
    for (java.util.Iterator<PendingExport> it = exports.iterator(); it.hasNext(); ) {
      PendingExport call = it.next();
      it.remove();
      if (call.claim()) {
        call.responses.onError(e);
      }
    }
  }

  /** UNAVAILABLE: the fold thread died ({@code failure}); a restarted collector takes the delta. */
  private Status foldFailed(String failure) {
    return status(
        Code.UNAVAILABLE,
        "the collector cannot fold deltas: its fold thread failed ("
            + failure
            + ") and the collector must be restarted; keep the delta and retry",
        retryDelay);
  }

  /** The end of a stream nothing will answer: the fold thread failed, or the collector stops. */
  private io.grpc.StatusRuntimeException unavailable() {
    String failure = worker.failure();
    return failure != null
        ? StatusProto.toStatusRuntimeException(foldFailed(failure))
        : shuttingDown();
  }

  private io.grpc.StatusRuntimeException shuttingDown() {
    return StatusProto.toStatusRuntimeException(
        status(Code.UNAVAILABLE, "the collector is shutting down; reconnect", retryDelay));
  }

  private static Ack ack(long seq, FoldResult r) {
    return switch (r.outcome()) {
      case APPLIED ->
          Ack.newBuilder()
              .setSequence(seq)
              .setResult(AckResult.ACK_RESULT_APPLIED)
              .setEntriesOverflowed(r.overflowed())
              .build();
      case DUPLICATE ->
          Ack.newBuilder().setSequence(seq).setResult(AckResult.ACK_RESULT_DUPLICATE).build();
      case REJECTED -> rejectedAck(seq, rejection(r));
    };
  }

  private static Status rejection(FoldResult r) {
    if (r.reason() == FoldResult.Reason.TOO_MANY_SOURCES) {
      // Retryable: a place frees when a silent source expires, within minutes.
      return status(Code.RESOURCE_EXHAUSTED, r.message(), Duration.ofMinutes(1));
    }
    Code code = r.reason() == null ? Code.INTERNAL : Code.FAILED_PRECONDITION;
    return status(code, r.message(), null);
  }

  private static Ack rejectedAck(long seq, Status status) {
    return Ack.newBuilder()
        .setSequence(seq)
        .setResult(AckResult.ACK_RESULT_REJECTED)
        .setStatus(status)
        .build();
  }

  private static Status status(Code code, String message, Duration retry) {
    Status.Builder b = Status.newBuilder().setCode(code.getNumber()).setMessage(message);
    if (retry != null) {
      b.addDetails(
          Any.pack(
              RetryInfo.newBuilder()
                  .setRetryDelay(
                      com.google.protobuf.Duration.newBuilder()
                          .setSeconds(retry.getSeconds())
                          .setNanos(retry.getNano()))
                  .build()));
    }
    return b.build();
  }

  /**
   * Serialises all writes to one response stream, ignores writes after it ended, and asks for the
   * stream's next deltas while its acks are taken (flow control, see the class comment).
   */
  private static final class AckStream {
    private final ServerCallStreamObserver<Ack> out;
    private final CollectorMetrics metrics;
    private boolean ended;
    private long requested; // deltas asked for with request(n)
    private long written; // acks written (or dropped because the stream ended)
    private boolean paused;

    AckStream(ServerCallStreamObserver<Ack> out, CollectorMetrics metrics) {
      this.out = out;
      this.metrics = metrics;
    }

    synchronized void send(Ack ack) {
      written++;
      if (ended || out.isCancelled()) {
        return;
      }
      out.onNext(ack);
      requestMore();
    }

    /**
     * Asks for deltas up to {@link #MAX_UNACKED_DELTAS} not yet acknowledged, the first ones at
     * once, later ones only while the client takes its acks; else the stream pauses until the
     * on-ready handler runs.
     */
    synchronized void requestMore() {
      if (ended || out.isCancelled()) {
        return;
      }
      long room = MAX_UNACKED_DELTAS - (requested - written);
      if (room <= 0) {
        return;
      }
      if (requested > 0 && !out.isReady()) {
        if (!paused) {
          paused = true;
          metrics.pushPaused();
        }
        return;
      }
      paused = false;
      requested += room;
      out.request((int) room);
    }

    /** The client cancelled the call: nothing more is written (gRPC then calls onError). */
    synchronized void cancelled() {
      ended = true;
    }

    synchronized void complete() {
      if (!ended && !out.isCancelled()) {
        ended = true;
        out.onCompleted();
      }
    }

    synchronized void fail(Throwable t) {
      if (!ended && !out.isCancelled()) {
        ended = true;
        out.onError(t);
      }
    }
  }
}
