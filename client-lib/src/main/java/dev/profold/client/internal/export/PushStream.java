package dev.profold.client.internal.export;

import dev.profold.proto.v1.Delta;
import io.grpc.stub.ClientCallStreamObserver;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * One Push stream of an {@link Exporter}: its call, what is in flight on it, its timers and the
 * dictionary bytes it carried. Not thread-safe: the exporter's thread only; {@code call} is set
 * when gRPC starts the call.
 */
final class PushStream {
  /** A delta on the wire, waiting for its ack; {@code bytes} is its message's size. */
  record InFlight(long sequence, boolean carriedDictionary, int bytes) {}

  ClientCallStreamObserver<Delta> call;
  boolean ready;
  long lastSent;
  final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();

  /** Deltas in flight that the buffer dropped since, by sequence, with their pending loss. */
  final Map<Long, Loss> droppedInFlight = new HashMap<>();

  /** The progress timer: no readiness or ack in time. */
  Scheduler.Cancellable timer;

  long timerGeneration;

  /** How long the progress timer last armed waits (the ack timeout and the upload's allowance). */
  java.time.Duration timerBudget = java.time.Duration.ZERO;

  /** Serialized bytes of the dictionaries of the messages sent on it. */
  long definitionBytes;

  /** Those of its first message sent, once {@code sentAny}. */
  long firstMessageDefinitionBytes;

  boolean sentAny;

  /** Set when it has been open {@link ExporterConfig#minStreamAge()}, by {@code ageTimer}. */
  boolean oldEnough;

  Scheduler.Cancellable ageTimer;

  /** Set once the stream is half-closed by rotation, until the collector ends it. */
  Scheduler.Cancellable endTimer;

  /** Accounts for a message sent on it that carried {@code bytes} of dictionary definitions. */
  void carried(int bytes) {
    if (!sentAny) {
      sentAny = true;
      firstMessageDefinitionBytes = bytes;
    }
    definitionBytes += bytes;
  }

  boolean isInFlight(long sequence) {
    for (InFlight f : inFlight) {
      if (f.sequence() == sequence) {
        return true;
      }
    }
    return false;
  }

  /** The largest message in flight, in bytes; 0 when none is. */
  int largestInFlight() {
    int largest = 0;
    for (InFlight f : inFlight) {
      largest = Math.max(largest, f.bytes());
    }
    return largest;
  }
}
