package dev.profold.client.internal.export;

import com.google.rpc.Code;
import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.IngestGrpc;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * Sends an instrumented process's profile deltas to the collector over one {@code
 * profold.v1.Ingest/Push} stream, following the client rules of docs/protocol.md.
 *
 * <p><b>Contract.</b> {@link #submit} takes one interval's delta (entries, interval, thread
 * aggregation, overhead; no source, dictionary or sequence), numbers it (1, 2, ... for the life of
 * the exporter: use one exporter per {@link DeltaEncoder}, that is per incarnation) and keeps it in
 * a {@link DeltaBuffer} until the collector acknowledges it. Deltas go out in sequence order, at
 * most {@link ExporterConfig#maxInFlight()} unacknowledged on the stream, each with the source and
 * dictionary definitions the stream has not carried yet ({@link DeltaEncoder#prepare}). An ack
 * APPLIED or DUPLICATE removes the delta; a REJECTED ack with a permanent code (anything but
 * RESOURCE_EXHAUSTED and UNAVAILABLE) drops it, counted by code and logged once per code; a
 * retryable rejection keeps it and restarts the stream after the RetryInfo delay. When the stream
 * fails (an error or end from the server, or no progress within the ack timeout) a new one is
 * opened after the RetryInfo delay of the failure if it has one, else after an exponential backoff
 * with jitter; the new stream starts with {@link DeltaEncoder#newStream()} and resends every
 * unacknowledged delta unchanged, in order, the first carrying the source, each the definitions it
 * references that the new stream has not carried. A stream is opened only when there is something
 * to send, and a delta counts as sent only once the stream is ready, so deltas buffered during an
 * outage stay mergeable. The buffer is bounded by {@link ExporterConfig#maxBufferBytes()}: see
 * {@link DeltaBuffer} for merging and dropping.
 *
 * <p><b>Rotation.</b> The collector keeps every definition a stream carried for as long as the
 * stream is open, so a long-running process whose contexts keep changing would pin all it ever
 * defined. The exporter therefore ends a stream once both hold: the dictionary definitions carried
 * by the messages sent on it (serialized bytes of their {@code dictionary}; a message not sent does
 * not count) reach {@link ExporterConfig#rotateAfterBytes()} or twice those of its first message,
 * whichever is larger; and it has been open {@link ExporterConfig#minStreamAge()} (a task scheduled
 * when it opens, so time is the {@link Scheduler}'s). From then on no further delta is sent on it;
 * once every delta in flight on it is acknowledged (acks handled as above) it is half-closed, and a
 * new stream is opened at once without backoff if a delta waits, else when the next one is
 * submitted, starting with {@link DeltaEncoder#newStream()} so that it carries only the definitions
 * its deltas reference. The collector's end of the half-closed stream is not a failure; should it
 * not come within {@link ExporterConfig#ackTimeout()}, that call is cancelled (nothing is in flight
 * on it). A failure or timeout while the stream drains is handled as any other. Counted in {@link
 * ExporterStats#rotations()}, not in reconnects; logged at DEBUG.
 *
 * <p><b>Message size.</b> A delta larger than {@link ExporterConfig#maxDeltaBytes()} is split into
 * parts of the same interval, each numbered as a delta of its own ({@link DeltaSplitter}), and
 * merges stay within that size. A message that with its dictionary definitions would still exceed
 * {@link ExporterConfig#maxMessageBytes()} is not sent, since the collector's gRPC layer would end
 * the stream and refuse it again after every reconnect: it is dropped, counted and logged, and the
 * definitions go with the next message. When the collector ends a stream with RESOURCE_EXHAUSTED
 * and no RetryInfo (its gRPC layer refusing a message: its limit is below the configured one), the
 * exporter lowers its message limit to the one the error names (or, if it names none, below the
 * largest message then in flight) and goes on: the refused delta is dropped when resent, counted,
 * and buffered deltas that were never sent are split to the new limit and renumbered.
 *
 * <p><b>Threads.</b> Thread-safe. Every decision runs on the {@link Scheduler}'s single logical
 * thread ({@code profold-exporter} by default); gRPC callbacks and {@link #submit} only enqueue
 * work. No public method throws (failures are counted in {@link ExporterStats#internalErrors()} and
 * logged once per kind) and none blocks except {@link #flush}, which waits at most its timeout.
 * Memory is bounded: the buffer by its byte bound, deltas waiting for the exporter's thread by the
 * same bound again (beyond it, submit drops), and gRPC's own buffering by sending only while the
 * stream {@linkplain ClientCallStreamObserver#isReady() is ready}.
 *
 * <p><b>Losses.</b> A delta counts as {@linkplain ExporterStats#dropped() dropped} only once it is
 * known not to reach the collector. The buffer may drop a delta that is in flight on the current
 * stream (its bound holds whatever is in flight); its loss is then decided by its ack: APPLIED or
 * DUPLICATE count it as acknowledged, a permanent rejection as rejected, and only a retryable
 * rejection or the end of the stream before the ack (it cannot be resent) as dropped. Until then it
 * is remembered by its counts alone, at most {@link ExporterConfig#maxInFlight()} of them.
 */
public final class Exporter implements AutoCloseable {
  private static final System.Logger log = System.getLogger(Exporter.class.getName());

  /**
   * The slowest upload the progress timer allows for (64 KiB/s, about half a megabit per second):
   * see {@link #armTimer}.
   */
  static final long UPLOAD_BYTES_PER_SECOND = 64 * 1024;

  /**
   * The codes of a REJECTED ack that keep the delta to send it again after the collector's delay;
   * any other drops it.
   */
  public static final java.util.Set<String> RETRYABLE_CODES =
      java.util.Set.of(Code.RESOURCE_EXHAUSTED.name(), Code.UNAVAILABLE.name());

  private final Channel channel;
  private final DeltaEncoder encoder;
  private final ExporterConfig config;
  private final Scheduler scheduler;
  private final boolean ownsScheduler;

  /**
   * The jitter's random numbers: {@code java.base}'s, as {@code RandomGenerator.getDefault()} needs
   * the {@code jdk.random} module, which a trimmed runtime may leave out; safe from any thread.
   */
  private static final RandomGenerator JITTER = () -> ThreadLocalRandom.current().nextLong();

  // Any thread.
  private final ConcurrentLinkedQueue<Delta> inbox = new ConcurrentLinkedQueue<>();
  private final AtomicLong inboxBytes = new AtomicLong();
  private final Unresolved unresolved = new Unresolved();
  private final ExportCounters counters = new ExportCounters();
  private final OnceLog once = new OnceLog(log);
  private volatile boolean closed;

  /** Set by {@link #expectLateSubmit}: a delta submitted after close is lost without a warning. */
  private volatile boolean lateSubmitExpected;

  /**
   * Whether the reconnect scheduled now follows a delay the collector asked for (RetryInfo) that
   * has not passed yet; {@code askedTimer} clears it when it has.
   */
  private boolean reconnectAsked;

  private Scheduler.Cancellable askedTimer;

  /**
   * The {@link #flushLast} waiting now (its number, from {@link #lastChances}), or 0: the wait
   * before a shutdown. The exporter then tries the collector at once instead of waiting out its
   * backoff, and a stream that ends without ever having been ready (the collector could not be
   * reached) ends that wait ({@link Unresolved#giveUp}). The exporter's own schedule is not
   * changed.
   */
  private volatile long lastChance;

  /** Numbers the calls of {@link #flushLast}. */
  private final AtomicLong lastChances = new AtomicLong();

  // Confined to the exporter's thread.
  private final DeltaBuffer buffer;
  private final Backoff backoff;
  private long nextSequence = 1;
  private PushStream stream;
  private Scheduler.Cancellable reconnect;
  private boolean everConnected;
  private boolean rotated; // the last stream was ended by rotation: the next is no reconnect
  private long maxMessageBytes; // config's, lowered when the collector refuses a message size

  /**
   * An exporter running on its own daemon thread ({@link Scheduler#daemon()}, shut down by {@link
   * #close}), drawing jitter from the default random generator.
   */
  public Exporter(Channel channel, DeltaEncoder encoder, ExporterConfig config) {
    this(channel, encoder, config, Scheduler.daemon(), JITTER, true);
  }

  /**
   * An exporter running on {@code scheduler} (which the caller owns and shuts down), drawing jitter
   * from {@code random} (used on the scheduler's thread only).
   */
  public Exporter(
      Channel channel,
      DeltaEncoder encoder,
      ExporterConfig config,
      Scheduler scheduler,
      RandomGenerator random) {
    this(channel, encoder, config, scheduler, random, false);
  }

  private Exporter(
      Channel channel,
      DeltaEncoder encoder,
      ExporterConfig config,
      Scheduler scheduler,
      RandomGenerator random,
      boolean ownsScheduler) {
    this.channel = channel;
    this.encoder = encoder;
    this.config = config;
    this.scheduler = scheduler;
    this.ownsScheduler = ownsScheduler;
    this.buffer = new DeltaBuffer(config.maxBufferBytes(), config.maxDeltaBytes());
    this.backoff = new Backoff(config, random);
    this.maxMessageBytes = config.maxMessageBytes();
  }

  /**
   * Queues one interval's delta for sending; {@code delta} is copied, the caller may reuse it. Its
   * source, dictionary, sequence and first_sequence are ignored. Never blocks, never throws.
   */
  public void submit(Delta.Builder delta) {
    try {
      Delta d = delta.build();
      counters.submitted.incrementAndGet();
      unresolved.add(1);
      if (closed) {
        lose(d);
        if (!lateSubmitExpected) {
          once.log("closed", Level.WARNING, "profold: a delta was submitted after close; dropped");
        }
        return;
      }
      int size = d.getSerializedSize();
      if (size > config.maxBufferBytes()) {
        refuseLargerThanBuffer(d, size); // (numbered, in parts, it is checked again)
        return;
      }
      if (inboxBytes.addAndGet(size) > config.maxBufferBytes()) {
        inboxBytes.addAndGet(-size);
        lose(d);
        once.log(
            "inbox",
            Level.WARNING,
            "profold: the exporter thread is not keeping up; deltas are being dropped");
        return;
      }
      inbox.add(d);
      post(this::drainInbox);
      if (closed) {
        // close() ran since the check above: the exporter's thread may be done already (its
        // scheduler shut down), so whatever is left in the inbox is dropped here.
        dropInbox();
      }
    } catch (RuntimeException e) {
      internalError("submit", e);
    }
  }

  /**
   * Waits until every submitted delta is acknowledged or dropped, at most {@code timeout}. Call it
   * from any thread but the exporter's (a shutdown hook, typically after submitting a last delta).
   *
   * @return true when nothing is left unacknowledged
   */
  public boolean flush(Duration timeout) {
    return await(timeout, Long.MIN_VALUE);
  }

  /** {@link #flush}, also ending when the wait numbered {@code giveUpOn} is given up on. */
  private boolean await(Duration timeout, long giveUpOn) {
    try {
      return unresolved.await(Durations.saturatedNanos(timeout), giveUpOn);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return unresolved.get() <= 0;
    } catch (RuntimeException e) {
      internalError("flush", e);
      return false;
    }
  }

  /**
   * {@link #flush} for the last time, before a shutdown: when the exporter waits out a backoff (the
   * collector was unreachable), it tries to connect now, and when a stream ends without ever having
   * been ready (the collector could not be reached), the wait ends at once: an unreachable
   * collector does not hold the process's exit for the whole {@code timeout}. A collector that was
   * reached and asks for a retry (RetryInfo, a restart) is retried as usual within the timeout; an
   * unanswered attempt (a host that drops packets) is waited for until the timeout. The exporter
   * runs on as before afterwards.
   *
   * @return true when nothing is left unacknowledged
   */
  public boolean flushLast(Duration timeout) {
    long number = lastChances.incrementAndGet();
    lastChance = number;
    try {
      post(this::tryOnceMore);
      return await(timeout, number);
    } finally {
      lastChance = 0;
    }
  }

  /**
   * {@code s}, the current stream, ended: when it never became ready while a {@link #flushLast}
   * waits, the collector could not be reached, and that wait ends.
   */
  private void unreachableAtLastChance(PushStream s) {
    long waiting = lastChance;
    if (waiting != 0 && !s.ready) {
      unresolved.giveUp(waiting);
    }
  }

  /**
   * On the exporter's thread: connects now if a reconnect waits for its backoff to pass, unless the
   * collector asked for that wait (RetryInfo: overloaded, shutting down, too many sources; its
   * retry_delay is the least wait the protocol allows).
   */
  private void tryOnceMore() {
    if (stream == null && reconnect != null && !reconnectAsked) {
      reconnect.cancel();
      reconnect = null;
      connectIfNeeded();
    }
  }

  /**
   * Submitted deltas, counted in sequence numbers (an interval each, or a part of a split one),
   * that are neither acknowledged nor counted dropped or rejected yet: what {@link #flush} waits
   * for. Never negative (each delta is resolved once).
   */
  public long unacknowledged() {
    return unresolved.get();
  }

  /**
   * Says that a delta may still be submitted after {@link #close}, its loss reported already by the
   * caller (a shutdown that gave up on its last interval while it was being built): it is counted
   * dropped, as any late delta, but not logged.
   */
  public void expectLateSubmit() {
    lateSubmitExpected = true;
  }

  /**
   * Stops: later submits are dropped, no stream is opened any more, and the current stream is
   * half-closed. Does not wait; call {@link #flush} first to give buffered deltas a chance. The
   * deltas still buffered then (and the acks of those in flight) are not waited for: they are
   * counted {@linkplain ExporterStats#dropped() dropped}, with their events. Idempotent, never
   * throws.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    post(this::shutdownOnExporterThread);
  }

  /** The settings it runs with. */
  public ExporterConfig config() {
    return config;
  }

  /** The current counters. */
  public ExporterStats stats() {
    return counters.stats();
  }

  /**
   * The export's counts since the previous call, with those that deltas dropped since carried
   * (reported again, as lost events are), and the buffer now: for the delta about to be submitted.
   * Called by one thread (the flush), once per delta.
   */
  public ExportReport takeReport() {
    return counters.takeReport(config.maxBufferBytes());
  }

  /**
   * The misuse counts (by kind) of the deltas dropped since the previous call, so that the caller
   * reports them again in a later delta, as it does the lost events.
   */
  public Map<String, Long> takeLostMisuse() {
    return counters.takeLostMisuse();
  }

  // ---------------------------------------------------------------- exporter thread

  private void drainInbox() {
    if (closed) {
      dropInbox(); // nothing is sent any more
      return;
    }
    Delta d;
    boolean drained = false;
    while ((d = inbox.poll()) != null) {
      drained = true;
      inboxBytes.addAndGet(-d.getSerializedSize());
      Delta numbered =
          d.toBuilder()
              .clearSource()
              .clearDictionary()
              .clearFirstSequence()
              .setSequence(nextSequence)
              .build();
      DeltaSplitter.Renumbered parts = DeltaSplitter.renumber(List.of(numbered), maxDeltaBytes());
      long bytes = 0; // as buffered: numbered, each part with the fields it repeats
      for (Delta part : parts.deltas()) {
        bytes += part.getSerializedSize();
      }
      if (bytes > config.maxBufferBytes()) {
        // The buffer would drop every older delta and then this one too.
        refuseLargerThanBuffer(d, bytes);
        continue;
      }
      nextSequence += 1 + parts.addedSequences();
      unresolved.add(parts.addedSequences()); // each part is acknowledged as a delta
      if (parts.split() > 0) {
        counters.split.incrementAndGet();
        once.log(
            "split",
            Level.INFO,
            "profold: a delta of "
                + numbered.getSerializedSize()
                + " bytes is sent as "
                + parts.deltas().size()
                + " messages of at most "
                + maxDeltaBytes()
                + " bytes (half the message limit, PROFOLD_MAX_MESSAGE_BYTES)");
      }
      for (Delta part : parts.deltas()) {
        add(part);
      }
    }
    if (drained) {
      ageDictionary();
    }
    updateGauges();
    if (stream == null) {
      connectIfNeeded();
    } else {
      pump();
    }
  }

  /**
   * Once the dictionary is over half its bound, frees the definitions nothing uses any more ({@link
   * DeltaEncoder#age}): every buffered delta's references are kept, and what the encoder's pin
   * sources (the recorder's contexts) hold. Once per batch of submitted deltas: a delta being built
   * while a round runs looked up its ids in that round, which keeps them through the next one, and
   * it is drained into the buffer before the round after.
   */
  private void ageDictionary() {
    if (!encoder.ageingDue()) {
      return;
    }
    BitSet stringIds = new BitSet();
    BitSet pathIds = new BitSet();
    for (Delta buffered : buffer.deltas()) {
      DeltaEncoder.references(buffered, stringIds, pathIds);
    }
    encoder.pin(pathIds);
    int freed = encoder.age(stringIds, pathIds);
    if (freed > 0) {
      once.log(
          "dictionary ageing",
          Level.INFO,
          "profold: the dictionary of strings and call paths is over half its bound; "
              + freed
              + " definitions no buffered delta or context uses were freed, as they will be"
              + " each interval while it stays there");
    }
  }

  /**
   * Drops submitted delta {@code d}, which takes {@code bytes} (as buffered, or as submitted): more
   * than the whole buffer holds.
   */
  private void refuseLargerThanBuffer(Delta d, long bytes) {
    lose(d);
    counters.lastError(
        "a delta of "
            + bytes
            + " bytes is larger than the whole export buffer ("
            + config.maxBufferBytes()
            + " bytes, PROFOLD_MAX_BUFFER_BYTES)");
    once.log(
        "larger-than-buffer",
        Level.WARNING,
        "profold: "
            + counters.lastError()
            + "; it is dropped. Raise PROFOLD_MAX_BUFFER_BYTES, or make deltas smaller"
            + " (a thread aggregation other than NONE, fewer distinct contexts)");
  }

  /** Buffers a numbered delta, merging or dropping older ones as {@link DeltaBuffer} decides. */
  private void add(Delta numbered) {
    DeltaBuffer.AddResult r = buffer.add(numbered);
    if (r.merges() > 0) {
      counters.merged.addAndGet(r.merges());
      once.log(
          "merged",
          Level.INFO,
          "profold: the export buffer is full (collector unreachable?); merging buffered deltas");
    }
    for (Delta lost : r.dropped()) {
      dropFromBuffer(lost);
    }
  }

  /**
   * Says, once, that the buffer lost deltas: called when one is known lost, not when an in-flight
   * delta merely left the buffer (its ack may still say the collector applied it).
   */
  private void warnOverflowLoss() {
    once.log(
        "overflow",
        Level.WARNING,
        "profold: the export buffer was full even after merging; the oldest deltas were dropped,"
            + " counted as events dropped. Raise PROFOLD_MAX_BUFFER_BYTES to ride out longer"
            + " outages");
  }

  /**
   * Accounts for a delta the buffer dropped: lost now, or, when it is in flight on the current
   * stream, once its ack or the end of the stream says (see the class comment).
   */
  private void dropFromBuffer(Delta d) {
    PushStream s = stream;
    Loss loss = Loss.ofBuffered(d);
    if (s != null && s.isInFlight(d.getSequence())) {
      s.droppedInFlight.put(d.getSequence(), loss);
    } else {
      lose(loss);
      warnOverflowLoss();
    }
  }

  /** Counts the in-flight deltas of {@code s} that left the buffer as lost: {@code s} has ended. */
  private void loseDroppedInFlight(PushStream s) {
    if (!s.droppedInFlight.isEmpty()) {
      warnOverflowLoss();
    }
    for (Loss loss : s.droppedInFlight.values()) {
      lose(loss);
    }
    s.droppedInFlight.clear();
  }

  private void connectIfNeeded() {
    if (closed || stream != null || reconnect != null || buffer.isEmpty()) {
      return;
    }
    if (everConnected && !rotated) {
      counters.reconnects.incrementAndGet();
    }
    // gRPC keeps a reconnect backoff of its own (up to 2 minutes) and, while it runs, fails new
    // calls at once without trying to connect: this exporter's backoff, not gRPC's, says when to
    // try again (a collector back after a 30 s outage was otherwise reached 14 s later with a 2 s
    // maxBackoff). The first attempt too: the connection made at start may have failed.
    if (channel instanceof ManagedChannel managed) {
      managed.resetConnectBackoff();
    }
    everConnected = true;
    rotated = false;
    encoder.newStream();
    PushStream s = new PushStream();
    stream = s;
    try {
      IngestGrpc.newStub(channel).push(new Observer(s));
    } catch (RuntimeException e) {
      stream = null;
      counters.lastError("could not start a Push stream: " + e);
      scheduleReconnect(backoff.next());
      internalError("push", e);
      return;
    }
    armTimer(s);
    s.ageTimer = scheduler.schedule(() -> runSafely(() -> onOldEnough(s)), config.minStreamAge());
  }

  /** Sends what the window and gRPC's flow control allow. */
  private void pump() {
    PushStream s = stream;
    if (s == null || !s.ready || closed) {
      return;
    }
    while (!rotationDue(s) && s.inFlight.size() < config.maxInFlight() && s.call.isReady()) {
      Delta d = buffer.next(s.lastSent);
      if (d == null) {
        break;
      }
      DeltaEncoder.Mark mark = encoder.mark();
      Delta wire = encoder.prepare(d.toBuilder()).build();
      int bytes = wire.getSerializedSize();
      if (bytes > maxMessageBytes) {
        encoder.reset(mark); // the next message carries the definitions instead
        refuseTooLarge(d, bytes);
        continue;
      }
      buffer.markSent(d.getSequence());
      s.lastSent = d.getSequence();
      s.inFlight.add(new PushStream.InFlight(d.getSequence(), wire.hasDictionary(), bytes));
      s.carried(wire.hasDictionary() ? wire.getDictionary().getSerializedSize() : 0);
      s.call.onNext(wire);
      counters.sent.incrementAndGet();
    }
    if (rotationDue(s) && s.inFlight.isEmpty()) {
      rotate(s);
      return;
    }
    armTimer(s);
  }

  /**
   * Whether {@code s} is to be rotated (see the class comment): once true it stays true, as the
   * bytes carried only grow and a stream only gets older.
   */
  private boolean rotationDue(PushStream s) {
    return s.oldEnough
        && s.definitionBytes
            >= Math.max(config.rotateAfterBytes(), 2 * s.firstMessageDefinitionBytes);
  }

  private void onOldEnough(PushStream s) {
    s.ageTimer = null;
    s.oldEnough = true;
    if (s == stream) {
      pump(); // rotates it if due and drained
    }
  }

  /**
   * Ends {@code s}, the current stream, due for rotation and with nothing in flight, and opens the
   * next one if a delta waits.
   */
  private void rotate(PushStream s) {
    detach(s);
    counters.rotations.incrementAndGet();
    log.log(
        Level.DEBUG,
        () ->
            "profold: ending the Push stream after it carried "
                + s.definitionBytes
                + " bytes of dictionary definitions; the next one re-sends only those in use");
    try {
      s.call.onCompleted();
    } catch (RuntimeException e) {
      internalError("half-close", e);
    }
    s.endTimer = scheduler.schedule(() -> runSafely(() -> onNotEnded(s)), config.ackTimeout());
    rotated = true;
    connectIfNeeded();
  }

  /** Rotated stream {@code s} was not ended by the collector within the ack timeout. */
  private void onNotEnded(PushStream s) {
    s.endTimer = null;
    once.log(
        "not-ended",
        Level.INFO,
        "profold: the collector did not end a half-closed stream within "
            + config.ackTimeout()
            + "; it is cancelled (nothing was in flight on it)");
    try {
      s.call.cancel("profold exporter: rotated stream not ended", null);
    } catch (RuntimeException e) {
      internalError("cancel", e);
    }
  }

  /**
   * Drops buffered delta {@code d}, whose message would be {@code bytes} long: more than the
   * collector accepts, so sending it would only end the stream.
   */
  private void refuseTooLarge(Delta d, int bytes) {
    counters.lastError(
        "delta "
            + d.getSequence()
            + " not sent: its message would be "
            + bytes
            + " bytes ("
            + d.getSerializedSize()
            + " of data, the rest dictionary definitions), over the message limit of "
            + maxMessageBytes);
    once.log(
        "too-large",
        Level.WARNING,
        "profold: "
            + counters.lastError()
            + "; it is dropped. Raise the collector's limits.max_message_bytes and"
            + " PROFOLD_MAX_MESSAGE_BYTES together");
    buffer.remove(d.getSequence());
    lose(Loss.ofBuffered(d));
    updateGauges();
  }

  private void onReady(PushStream s) {
    if (s != stream) {
      return;
    }
    if (!s.ready) {
      s.ready = true;
      disarmTimer(s); // progress
    }
    pump();
  }

  private void onAck(PushStream s, Ack ack) {
    if (s != stream) {
      return; // an abandoned stream: everything it carried is resent anyway
    }
    PushStream.InFlight head = s.inFlight.poll();
    if (head == null || head.sequence() != ack.getSequence()) {
      counters.lastError(
          "ack for sequence "
              + ack.getSequence()
              + " while expecting "
              + (head == null ? "none in flight" : "sequence " + head.sequence()));
      once.log(
          "ack-order",
          Level.WARNING,
          "profold: the collector acknowledged out of order (" + counters.lastError() + ")");
      restart(s, backoff.next(), "unexpected ack");
      return;
    }
    disarmTimer(s); // progress
    Loss droppedMeanwhile = s.droppedInFlight.remove(head.sequence());
    switch (ack.getResult()) {
      case ACK_RESULT_REJECTED -> onRejected(s, head, ack.getStatus(), droppedMeanwhile);
      case ACK_RESULT_DUPLICATE -> {
        counters.duplicates.incrementAndGet();
        done(head.sequence(), droppedMeanwhile);
      }
      case ACK_RESULT_APPLIED -> done(head.sequence(), droppedMeanwhile);
      default -> {
        once.log(
            "ack-result",
            Level.WARNING,
            "profold: ack with unknown result " + ack.getResultValue() + "; taken as applied");
        done(head.sequence(), droppedMeanwhile);
      }
    }
    if (stream == s) {
      pump();
    }
  }

  /**
   * Removes an acknowledged delta; {@code droppedMeanwhile} is its loss pending since the buffer
   * dropped it in flight (null if it did not): the ack cancels it.
   */
  private void done(long sequence, Loss droppedMeanwhile) {
    counters.acked.incrementAndGet();
    backoff.reset();
    Delta removed = buffer.remove(sequence);
    // The gauges first: a flush woken by the ack returns to a caller that may read them (the next
    // delta reports the buffered bytes), and must not see the acknowledged delta still counted.
    updateGauges();
    resolve(removed);
    if (droppedMeanwhile != null) {
      resolve(droppedMeanwhile.deltas());
    }
  }

  private void onRejected(
      PushStream s, PushStream.InFlight head, com.google.rpc.Status status, Loss droppedMeanwhile) {
    Code code = Code.forNumber(status.getCode());
    String name = code == null ? "CODE_" + status.getCode() : code.name();
    counters.rejected(name);
    counters.lastError(
        "delta " + head.sequence() + " rejected: " + name + ": " + status.getMessage());
    if (RETRYABLE_CODES.contains(name)) {
      once.log(
          "retry:" + name,
          Level.INFO,
          "profold: the collector asked to retry later (" + counters.lastError() + ")");
      if (droppedMeanwhile != null) {
        lose(droppedMeanwhile); // no longer buffered, so it cannot be retried
      }
      Optional<Duration> asked = Statuses.retryDelay(status);
      Duration delay = asked.map(backoff::after).orElseGet(backoff::next);
      restart(s, delay, name);
      asked.ifPresent(a -> honour(a, delay));
      return;
    }
    once.log(
        "rejected:" + name,
        Level.WARNING,
        "profold: the collector rejected a delta; it is dropped (" + counters.lastError() + ")");
    resolve(buffer.remove(head.sequence()));
    if (droppedMeanwhile != null) {
      resolve(droppedMeanwhile.deltas()); // counted as rejected, not as dropped
    }
    updateGauges();
    if (head.carriedDictionary()) {
      // The collector may not have taken the definitions of a rejected delta: send each again
      // (on the same stream, so no freed id may be reused yet).
      encoder.resendAll();
    }
  }

  private void onStreamEnd(PushStream s, Throwable error) {
    if (s.endTimer != null) {
      s.endTimer.cancel(); // a rotated stream, ended as it should be
      s.endTimer = null;
    }
    if (s != stream) {
      return;
    }
    Duration delay;
    Optional<Duration> asked = Optional.empty();
    if (error == null) {
      counters.lastError("the collector ended the stream");
      delay = backoff.next();
    } else {
      counters.lastError("stream failed: " + Statuses.describe(Status.fromThrowable(error)));
      com.google.rpc.Status details = Statuses.details(error);
      Optional<Duration> retry = details == null ? Optional.empty() : Statuses.retryDelay(details);
      delay = retry.map(backoff::after).orElseGet(backoff::next);
      asked = retry;
      Status status = Status.fromThrowable(error);
      if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED
          && retry.isEmpty()
          && Statuses.aboutMessageSize(status.getDescription())) {
        lowerMessageLimit(s, status.getDescription());
      }
    }
    if (s.ready) { // it worked: a collector restarting, say
      once.log("stream", Level.INFO, "profold: " + counters.lastError() + "; reconnecting");
    } else {
      once.log(
          "stream-unready", Level.WARNING, "profold: " + counters.lastError() + "; reconnecting");
    }
    unreachableAtLastChance(s);
    detach(s);
    scheduleReconnect(delay);
    Duration waited = delay;
    asked.ifPresent(a -> honour(a, waited));
  }

  /**
   * The reconnect just scheduled, in {@code reconnectIn}, follows a delay the collector asked for
   * ({@code asked}): a {@link #flushLast} does not connect before that delay has passed, and tries
   * at once when it has (the reconnect itself may wait longer: the backoff, grown over failures in
   * a row).
   */
  private void honour(Duration asked, Duration reconnectIn) {
    reconnectAsked = true;
    // The same cap as the backoff's (Backoff.after): the longer of MAX_ASKED and maxBackoff.
    Duration cap =
        config.maxBackoff().compareTo(Backoff.MAX_ASKED) > 0
            ? config.maxBackoff()
            : Backoff.MAX_ASKED;
    Duration least = asked.compareTo(cap) > 0 ? cap : asked;
    if (least.compareTo(reconnectIn) >= 0) {
      return; // the reconnect comes no earlier than the asked delay: nothing to watch
    }
    askedTimer =
        scheduler.schedule(
            () ->
                runSafely(
                    () -> {
                      askedTimer = null;
                      reconnectAsked = false;
                      if (lastChance != 0) {
                        tryOnceMore();
                      }
                    }),
            least);
  }

  /** The largest delta sent in one message, under the current message limit. */
  private long maxDeltaBytes() {
    return ExporterConfig.deltaBytes(maxMessageBytes);
  }

  /**
   * The collector's gRPC layer refused a message of {@code s} as too large ({@code description}
   * being its status's): its limit is below ours. Keeps messages within the limit the description
   * names from now on, even one below {@link ExporterConfig#MIN_MESSAGE_BYTES} (the collector's
   * limit is what it is: kept above it, the refused message would be resent and refused forever),
   * or, if it names none, under the largest message that was in flight (that one is then refused
   * when resent, and so on until the limits agree; not below {@link
   * ExporterConfig#MIN_MESSAGE_BYTES}, as this is a guess). With nothing in flight no message was
   * refused: the limit stays.
   */
  private void lowerMessageLimit(PushStream s, String description) {
    long limit;
    OptionalLong named = Statuses.messageLimit(description);
    if (named.isPresent()) {
      limit = named.getAsLong();
    } else {
      int largest = s.largestInFlight();
      if (largest == 0) {
        return; // nothing in flight, so no message was refused: another cause
      }
      limit = Math.max(ExporterConfig.MIN_MESSAGE_BYTES, largest - 1L);
    }
    if (limit >= maxMessageBytes) {
      return;
    }
    maxMessageBytes = limit;
    buffer.limitDeltaBytes(maxDeltaBytes());
    encoder.limitDictionaryBytes(ExporterConfig.dictionaryBytes(limit));
    splitNeverSent();
    log.log(
        Level.WARNING,
        "profold: the collector refused a message as too large ("
            + counters.lastError()
            + "): its limits.max_message_bytes is below PROFOLD_MAX_MESSAGE_BYTES ("
            + config.maxMessageBytes()
            + "). Messages are kept within "
            + limit
            + " bytes from now on: the delta it refused is dropped (it was sent, so it cannot be"
            + " split), the others are split to fit. Set PROFOLD_MAX_MESSAGE_BYTES to the"
            + " collector's limit");
  }

  /**
   * Splits the buffered deltas that were never sent to the (lowered) message limit and numbers them
   * anew ({@link DeltaSplitter#renumber}); never sent, their numbers are still free to change.
   */
  private void splitNeverSent() {
    DeltaSplitter.Renumbered r = DeltaSplitter.renumber(buffer.removeNeverSent(), maxDeltaBytes());
    unresolved.add(r.addedSequences()); // first: the buffer may drop a part, resolving it
    nextSequence += r.addedSequences();
    counters.split.addAndGet(r.split());
    for (Delta part : r.deltas()) {
      add(part);
    }
    updateGauges();
  }

  private void onTimeout(PushStream s, long generation) {
    if (s != stream || s.timerGeneration != generation) {
      return;
    }
    s.timer = null;
    String within = Durations.written(s.timerBudget);
    counters.lastError(
        s.ready
            ? "no ack within " + within
            : "no gRPC stream opened within "
                + within
                + ": either no connection could be made (a firewall dropping packets?) or the"
                + " endpoint is not a Profold collector's gRPC port (its default is 7763)");
    once.log("timeout", Level.WARNING, "profold: " + counters.lastError() + "; reconnecting");
    unreachableAtLastChance(s);
    restart(s, backoff.next(), "timeout");
  }

  /** Abandons {@code s} (cancelling the call) and opens a new stream after {@code delay}. */
  private void restart(PushStream s, Duration delay, String reason) {
    detach(s);
    try {
      s.call.cancel("profold exporter: " + reason, null);
    } catch (RuntimeException e) {
      internalError("cancel", e);
    }
    scheduleReconnect(delay);
  }

  private void scheduleReconnect(Duration delay) {
    reconnectAsked = false; // the callers that honour a collector's delay set it after this
    if (askedTimer != null) {
      askedTimer.cancel();
      askedTimer = null;
    }
    if (closed) {
      return;
    }
    if (reconnect != null) {
      reconnect.cancel();
    }
    reconnect =
        scheduler.schedule(
            () ->
                runSafely(
                    () -> {
                      reconnect = null;
                      connectIfNeeded();
                    }),
            delay);
  }

  /**
   * Starts the progress timer if the stream waits for readiness or an ack and none runs: the ack
   * timeout, plus a second per {@link #UPLOAD_BYTES_PER_SECOND} bytes in flight (whole seconds), so
   * that a link slower than that is not timed out while it still carries a large message (a merged
   * delta after an outage, a first message with the dictionary) and made to send it again.
   */
  private void armTimer(PushStream s) {
    boolean waiting = !s.ready || !s.inFlight.isEmpty();
    if (!waiting) {
      disarmTimer(s);
    } else if (s.timer == null) {
      long generation = ++s.timerGeneration;
      long bytes = 0;
      for (PushStream.InFlight f : s.inFlight) {
        bytes += f.bytes();
      }
      Duration budget = config.ackTimeout().plusSeconds(bytes / UPLOAD_BYTES_PER_SECOND);
      s.timerBudget = budget;
      s.timer = scheduler.schedule(() -> runSafely(() -> onTimeout(s, generation)), budget);
    }
  }

  /**
   * Makes current stream {@code s} no longer current: its timers stop, and the deltas the buffer
   * dropped while they were in flight on it are lost.
   */
  private void detach(PushStream s) {
    disarmTimer(s);
    if (s.ageTimer != null) {
      s.ageTimer.cancel();
      s.ageTimer = null;
    }
    stream = null;
    loseDroppedInFlight(s);
  }

  private void disarmTimer(PushStream s) {
    if (s.timer != null) {
      s.timer.cancel();
      s.timer = null;
    }
    s.timerGeneration++;
  }

  private void shutdownOnExporterThread() {
    dropInbox();
    if (reconnect != null) {
      reconnect.cancel();
      reconnect = null;
    }
    PushStream s = stream;
    if (s != null) {
      detach(s); // the acks of what is in flight are not listened to any more
      try {
        s.call.onCompleted();
      } catch (RuntimeException e) {
        internalError("half-close", e);
      }
    }
    // Nothing is sent or sent again from here, and no ack is heard: what the buffer still holds
    // is known not to reach the collector through this exporter (a delta in flight as well: the
    // collector may apply it, but it cannot be resent), so it is dropped and counted now rather
    // than left pending, and a flush no longer waits for it.
    for (Delta d : buffer.deltas()) {
      buffer.remove(d.getSequence());
      lose(Loss.ofBuffered(d));
    }
    updateGauges();
    if (ownsScheduler) {
      scheduler.shutdown();
    }
  }

  // ---------------------------------------------------------------- helpers, any thread

  /**
   * Drops the deltas waiting for the exporter's thread, counted (once closed: see {@link #submit}).
   * Any thread: each delta is counted by the one thread that polls it.
   */
  private void dropInbox() {
    Delta d;
    while ((d = inbox.poll()) != null) {
      inboxBytes.addAndGet(-d.getSerializedSize());
      lose(d);
    }
  }

  /** Counts a submitted delta as dropped. */
  private void lose(Delta d) {
    lose(Loss.ofSubmitted(d));
  }

  private void lose(Loss loss) {
    counters.lost(loss);
    resolve(loss.deltas());
  }

  private void resolve(Delta removed) {
    if (removed != null) {
      resolve(DeltaBuffer.covered(removed));
    }
  }

  private void resolve(long deltas) {
    unresolved.resolve(deltas);
  }

  private void updateGauges() {
    counters.buffered(buffer.size(), buffer.bytes());
  }

  private void post(Runnable task) {
    try {
      scheduler.execute(() -> runSafely(task));
    } catch (RuntimeException e) {
      if (!closed) {
        internalError("schedule", e);
      }
    }
  }

  private void runSafely(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      internalError("task", e);
    }
  }

  private void internalError(String where, RuntimeException e) {
    counters.internalErrors.incrementAndGet();
    counters.lastError("internal error in " + where + ": " + e);
    once.log("internal:" + where, Level.ERROR, "profold: exporter failure in " + where, e);
  }

  /** Receives one stream's events on gRPC's threads and hands them to the exporter's thread. */
  private final class Observer implements ClientResponseObserver<Delta, Ack> {
    private final PushStream s;

    Observer(PushStream s) {
      this.s = s;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<Delta> call) {
      s.call = call;
      call.setOnReadyHandler(() -> post(() -> onReady(s)));
    }

    @Override
    public void onNext(Ack ack) {
      post(() -> onAck(s, ack));
    }

    @Override
    public void onError(Throwable t) {
      post(() -> onStreamEnd(s, t));
    }

    @Override
    public void onCompleted() {
      post(() -> onStreamEnd(s, null));
    }
  }
}
