package dev.profold.collector.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The java.util.logging records that reach the root logger while it is open (gRPC logs through it);
 * close it to stop listening.
 */
public final class JulRecords extends Handler implements AutoCloseable {
  private final Logger root = Logger.getLogger("");
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();

  private JulRecords() {}

  /** Starts listening on the root logger. */
  public static JulRecords capture() {
    JulRecords r = new JulRecords();
    r.root.addHandler(r);
    return r;
  }

  /** What reached the root logger so far. */
  public List<LogRecord> records() {
    return records;
  }

  @Override
  public void publish(LogRecord r) {
    records.add(r);
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    root.removeHandler(this);
  }
}
