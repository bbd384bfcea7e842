package dev.profold.collector.scheme;

/** A scheme definition that cannot be used; the message says which scheme, where and why. */
public final class SchemeException extends Exception {
  private static final long serialVersionUID = 1L;

  public SchemeException(String message) {
    super(message);
  }
}
