package dev.profold.collector.config;

/** Invalid configuration: the message says where, what and how to fix it. */
public final class ConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  public ConfigException(String message) {
    super(message);
  }
}
