package dev.profold.collector.archive;

import java.io.IOException;

/** The archive directory cannot be used; the message says which and why. */
public final class ArchiveException extends IOException {
  private static final long serialVersionUID = 1L;

  public ArchiveException(String message, Throwable cause) {
    super(message, cause);
  }
}
