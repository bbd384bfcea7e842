package dev.profold.collector.query.online;

/**
 * An online query that cannot run as asked. The message is complete and meant for the caller (it
 * never needs the stack trace); {@link #reason()} picks the gRPC status or HTTP code.
 */
public final class OnlineQueryException extends Exception {
  private static final long serialVersionUID = 1L;

  /** Why the query cannot run. */
  public enum Reason {
    /** A bad query, range or parameter: gRPC INVALID_ARGUMENT, HTTP 400. */
    INVALID,
    /** No scheme of that name: gRPC NOT_FOUND, HTTP 404. */
    NOT_FOUND,
    /**
     * The collector has no snapshot of its schemes yet (it is starting): gRPC UNAVAILABLE, HTTP 503
     * with Retry-After; retry.
     */
    NOT_READY,
    /**
     * The caller gave up (its deadline passed, or it cancelled) while the query ran: nothing is
     * answered.
     */
    ABANDONED
  }

  private final Reason reason;

  OnlineQueryException(Reason reason, String message) {
    this(reason, message, null);
  }

  OnlineQueryException(Reason reason, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
