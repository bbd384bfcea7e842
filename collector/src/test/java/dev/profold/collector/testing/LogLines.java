package dev.profold.collector.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * The lines the collector's own code logs through one class's logger (SLF4J over logback) while it
 * is open, as formatted messages; close it to stop listening. The java.util.logging side is {@link
 * JulRecords}.
 */
public final class LogLines implements AutoCloseable {
  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  private LogLines(Class<?> source) {
    this.logger = (Logger) LoggerFactory.getLogger(source);
  }

  /** Starts listening to {@code source}'s logger. */
  public static LogLines capture(Class<?> source) {
    LogLines l = new LogLines(source);
    l.appender.start();
    l.logger.addAppender(l.appender);
    return l;
  }

  /** The messages logged so far, formatted. */
  public List<String> messages() {
    return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
  }
}
