package dev.profold.collector.archive;

import dev.profold.collector.fold.IntervalListener;
import dev.profold.collector.query.JsonRecords;
import dev.profold.collector.query.online.SnapshotRecords;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.OwnMeter;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes every closed interval of the chosen schemes to JSON Lines files that {@code profold query}
 * reads offline: {@code <directory>/<scheme>/<scheme>-<yyyy-MM-dd>.jsonl} (UTC date of the
 * interval's start), one record per group tuple with the scheme's labels, {@value #START} and
 * {@value #END} (RFC 3339, UTC, millisecond precision: fixed width, so they compare as text), the
 * record count, and each measurement as its mergeable state. Merging records of several intervals
 * or files in a query is exact, as for the collector's own queries.
 *
 * <p>The fold thread only queues (bounded, {@value #QUEUE} intervals); a writer thread formats and
 * appends. An interval that does not fit the queue, or cannot be written (disk full, permission),
 * is counted in {@code profold_archive_intervals_dropped_total{reason}} and logged once per reason;
 * the collector never stops for it.
 *
 * <p>The directory is held by one collector at a time: the constructor takes an exclusive lock on
 * {@value #LOCK_FILE} in it (the operating system's advisory file lock, released by {@link #close}
 * or when the process ends, however it ends), so a second collector given the same directory is
 * refused at start rather than interleaving its lines with the first one's.
 *
 * <p>Thread-safe.
 */
public final class IntervalArchive implements IntervalListener {
  /** Attribute holding the interval's start (no scheme groups by it). */
  public static final String START = SchemeDefinition.INTERVAL_START;

  /** Attribute holding the interval's end (no scheme groups by it). */
  public static final String END = SchemeDefinition.INTERVAL_END;

  static final int QUEUE = 1024;

  /** The file in the archive directory that the running collector locks; it holds its pid. */
  public static final String LOCK_FILE = "collector.lock";

  private static final Logger log = LoggerFactory.getLogger(IntervalArchive.class);
  private static final DateTimeFormatter INSTANT =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter DAY =
      DateTimeFormatter.ofPattern("uuuu-MM-dd").withZone(ZoneOffset.UTC);

  private record Closed(
      String scheme, List<String> labelNames, List<String> pathLabels, IntervalSnapshot interval) {}

  private static final Closed STOP = new Closed("", List.of(), List.of(), null);

  /**
   * The lock files (real paths) archives of this process hold. The operating system's lock is the
   * process's, and closing any descriptor this process has open on the file drops it (POSIX record
   * locks): a second archive of this process on the same directory is refused here, before it opens
   * the file, and nothing else opens a held lock file.
   */
  private static final Set<Path> HELD = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final Path directory;
  private final Set<String> schemes;
  private final BlockingQueue<Closed> queue = new ArrayBlockingQueue<>(QUEUE);
  private final MeterRegistry registry;
  private final Counter written;
  private final Set<String> loggedReasons = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final Thread writer;
  private final FileChannel lockChannel;
  private final Path lockFile;
  private final Path heldKey; // this archive's entry in HELD
  private final Object lockFileKey; // the lock file's identity when locked (inode), or null
  private final Object closing = new Object();
  private boolean closed; // guarded by closing: no interval is queued once set
  private volatile boolean lockFileGone; // logged once

  /**
   * An archive in {@code directory} (created if missing) of {@code schemes} (empty: all).
   *
   * @throws InUse when another collector (or another archive of this process) holds the directory
   * @throws IOException when the directory cannot be created or written
   */
  public IntervalArchive(Path directory, Set<String> schemes, MeterRegistry registry)
      throws IOException {
    this.directory = directory;
    this.schemes = Set.copyOf(schemes);
    this.registry = registry;
    Files.createDirectories(directory);
    if (!Files.isWritable(directory)) {
      throw new IOException("archive directory " + directory + " is not writable");
    }
    this.lockFile = directory.resolve(LOCK_FILE);
    this.heldKey = directory.toRealPath().resolve(LOCK_FILE);
    if (!HELD.add(heldKey)) {
      throw new InUse(directory, Long.toString(ProcessHandle.current().pid()));
    }
    FileChannel locked = null;
    try {
      locked = lock(lockFile);
      this.lockChannel = locked;
      this.lockFileKey = fileKey(lockFile);
      this.written =
          OwnMeter.ARCHIVE_INTERVALS_WRITTEN
              .counter()
              .description("Closed intervals written to the archive files.")
              .register(registry);
      for (String reason : DROP_REASONS) {
        droppedCounter(reason); // at 0 from the start, so that rate() and alerts see the series
      }
      this.writer = new Thread(this::run, "profold-archive");
      this.writer.setDaemon(true);
      this.writer.start();
    } catch (IOException | RuntimeException | Error e) {
      // Nothing will close this archive: the lock goes now, or it would stay until the process
      // ends (and a later archive of this directory would be refused).
      if (locked != null) {
        try {
          locked.close();
        } catch (IOException again) {
          e.addSuppressed(again);
        }
      }
      HELD.remove(heldKey);
      throw e;
    }
  }

  /** The identity (device and inode) of {@code file}, read without opening it; null if none. */
  private static Object fileKey(Path file) throws IOException {
    return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
  }

  /**
   * Opens and locks {@code file}, then writes this process's pid into it.
   *
   * @throws InUse when the lock is held, naming the holder's pid as its file says
   */
  private static FileChannel lock(Path file) throws IOException {
    FileChannel ch =
        FileChannel.open(
            file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    try {
      FileLock held;
      try {
        held = ch.tryLock();
      } catch (OverlappingFileLockException e) { // this JVM holds it already
        held = null;
      }
      if (held == null) {
        throw new InUse(file.getParent(), holder(ch));
      }
      ch.truncate(0);
      ch.write(
          ByteBuffer.wrap(
              (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)),
          0);
      return ch;
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  /** The pid the lock file names, or "" when it names none. */
  private static String holder(FileChannel ch) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(32);
    ch.read(b, 0);
    String text = new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII).trim();
    return text.chars().allMatch(Character::isDigit) ? text : "";
  }

  /** The archive directory is held by another collector. */
  public static final class InUse extends IOException {
    private static final long serialVersionUID = 1L;

    /** The holder's pid as its lock file gives it, or "" when unknown. */
    private final String pid;

    InUse(Path directory, String pid) {
      super(
          "another collector"
              + (pid.isEmpty() ? "" : " (pid " + pid + ")")
              + " writes to "
              + directory
              + " (it holds the lock on "
              + directory.resolve(LOCK_FILE)
              + ")");
      this.pid = pid;
    }

    /** The holder's pid as its lock file gives it, or "" when unknown. */
    public String pid() {
      return pid;
    }
  }

  @Override
  public void closed(
      String scheme, List<String> labelNames, List<String> pathLabels, IntervalSnapshot interval) {
    if (!schemes.isEmpty() && !schemes.contains(scheme)) {
      return;
    }
    synchronized (closing) {
      if (closed) { // the fold thread closed it after the shutdown's time for it ran out
        dropped(
            "shutdown",
            "an interval closed after the archive's share of shutdown_timeout had run out");
        return;
      }
      if (!queue.offer(new Closed(scheme, labelNames, pathLabels, interval))) {
        dropped("queue_full", "the archive writer is behind by " + QUEUE + " intervals");
      }
    }
  }

  private void run() {
    try {
      while (true) {
        Closed c = queue.take();
        if (c.interval() == null) { // the stop marker
          return;
        }
        write(c);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void write(Closed c) {
    Path file = fileOf(c.scheme(), c.interval().startUnixNanos());
    try {
      StringWriter text = new StringWriter();
      try (PrintWriter out = new PrintWriter(text)) {
        JsonRecords.writeLines(records(c.labelNames(), c.pathLabels(), c.interval()), out);
      }
      Files.createDirectories(file.getParent());
      append(file, text.toString().getBytes(StandardCharsets.UTF_8));
      written.increment();
    } catch (IOException | RuntimeException | OutOfMemoryError | StackOverflowError e) {
      // An interval too large to format (out of memory) is lost, but the writer goes on: ended,
      // it would leave every later interval to pile up in the queue, then count as queue_full.
      dropped("write_failed", "cannot write " + file + ": " + e);
    }
    touchLock();
  }

  /**
   * Keeps the lock file's modification time recent, so that a clean-up of old files by age ({@code
   * find ... -mtime +30 -delete}) leaves it, by writing the pid again through the locked channel;
   * says once if it was removed or replaced all the same (another collector could then lock a new
   * one and write here too). The file is never opened again for this: closing a second descriptor
   * on it would drop this process's lock.
   */
  private void touchLock() {
    try {
      lockChannel.write(
          ByteBuffer.wrap(
              (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)),
          0);
      Object key = fileKey(lockFile);
      if (lockFileKey != null && !lockFileKey.equals(key)) {
        throw new IOException("it was replaced by another file");
      }
    } catch (IOException e) {
      if (!lockFileGone) {
        lockFileGone = true;
        log.error(
            "archive: {} was removed or cannot be touched ({}); while it is gone another collector"
                + " could lock a new one and write to the same files: leave it in place (restart"
                + " this collector to make a new one)",
            lockFile,
            e.toString());
      }
    }
  }

  /**
   * Appends whole lines to {@code file} so that it only ever holds whole lines: a tail without a
   * newline (left by a write cut short: the process killed or exiting mid-write) is cut off first,
   * and a write that fails is undone, since one torn line makes {@code profold query} refuse the
   * whole file and would glue itself to the next record appended.
   */
  private void append(Path file, byte[] lines) throws IOException {
    try (FileChannel ch =
        FileChannel.open(
            file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long whole = wholeLines(ch);
      if (whole < ch.size()) {
        log.warn("archive: {} ended in an incomplete line (a write cut short); cut it off", file);
        ch.truncate(whole);
      }
      try {
        ByteBuffer b = ByteBuffer.wrap(lines);
        long at = whole;
        while (b.hasRemaining()) {
          at += ch.write(b, at);
        }
      } catch (IOException e) {
        ch.truncate(whole);
        throw e;
      }
    }
  }

  /** The length of {@code ch}'s content up to and including its last newline (0: none). */
  private static long wholeLines(FileChannel ch) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(8192);
    long end = ch.size();
    while (end > 0) {
      long from = Math.max(0, end - b.capacity());
      b.clear().limit((int) (end - from));
      while (b.hasRemaining() && ch.read(b, from + b.position()) >= 0) {
        // reads until the chunk is full
      }
      for (int i = b.position() - 1; i >= 0; i--) {
        if (b.get(i) == '\n') {
          return from + i + 1;
        }
      }
      end = from;
    }
    return 0;
  }

  /** The records of one closed interval: the interval bounds first, then the scheme's record. */
  static List<Map<String, Object>> records(
      List<String> labelNames, List<String> pathLabels, IntervalSnapshot interval) {
    String start = text(interval.startUnixNanos());
    String end = text(interval.endUnixNanos());
    List<Map<String, Object>> out = new ArrayList<>();
    for (Map<String, Object> r :
        SnapshotRecords.records(labelNames, pathLabels, List.of(interval.series()))) {
      Map<String, Object> withTime = new LinkedHashMap<>();
      withTime.put(START, start);
      withTime.put(END, end);
      // The bounds win over a measurement of the same name (schemes cannot group by these names,
      // but a client may send a measurement so named): queries select by them.
      r.forEach(withTime::putIfAbsent);
      out.add(withTime);
    }
    return out;
  }

  /** The file an interval starting at {@code startUnixNanos} goes to. */
  Path fileOf(String scheme, long startUnixNanos) {
    return directory
        .resolve(scheme)
        .resolve(scheme + "-" + DAY.format(instant(startUnixNanos)) + ".jsonl");
  }

  private static String text(long unixNanos) {
    return INSTANT.format(instant(unixNanos));
  }

  private static Instant instant(long unixNanos) {
    return Instant.ofEpochSecond(
        Math.floorDiv(unixNanos, 1_000_000_000L), Math.floorMod(unixNanos, 1_000_000_000L));
  }

  /** The {@code reason} values of {@code profold_archive_intervals_dropped_total}. */
  static final java.util.List<String> DROP_REASONS =
      java.util.List.of("queue_full", "write_failed", "shutdown");

  private io.micrometer.core.instrument.Counter droppedCounter(String reason) {
    return OwnMeter.ARCHIVE_INTERVALS_DROPPED
        .counter()
        .tag("reason", reason)
        .description("Closed intervals not archived, by reason.")
        .register(registry);
  }

  private void dropped(String reason, String detail) {
    droppedCounter(reason).increment();
    if (loggedReasons.add(reason)) {
      log.error("archive: an interval was not written ({}); logged once, counted", detail);
    }
  }

  /**
   * Writes what is queued (waiting at most {@code timeout}), then stops the writer. What is still
   * queued at the deadline is not written: counted as dropped with reason {@code shutdown}, and
   * logged.
   */
  public void close(Duration timeout) throws InterruptedException {
    try {
      closeWriter(timeout);
    } finally {
      if (writer.isAlive()) {
        // Still writing: the lock stays until the process ends, or a collector started meanwhile
        // would take the directory and cut the line being written as a torn one.
        log.warn("archive: {} stays locked until this process ends", directory);
      } else if (lockChannel.isOpen()) { // a second close must not free another archive's entry
        try {
          lockChannel.close(); // releases the lock
        } catch (IOException e) {
          log.warn("archive: cannot release {}: {}", directory.resolve(LOCK_FILE), e.toString());
        } finally {
          HELD.remove(heldKey);
        }
      }
    }
  }

  private void closeWriter(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
    synchronized (closing) {
      closed = true; // from now on an interval is counted, not queued behind the stop marker
    }
    if (queue.offer(STOP, timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      writer.join(Math.max(1, left));
    }
    List<Closed> unwritten = new ArrayList<>();
    queue.drainTo(unwritten); // the writer takes nothing more once these are gone
    if (writer.isAlive()) {
      boolean unused = queue.offer(STOP); // room now: it ends after its write in progress
      // Not interrupted: an interrupt closes the file channel under the write, so its undo fails
      // too and a torn line stays. The write in progress gets a second to end.
      writer.join(1000);
      if (writer.isAlive()) {
        log.warn(
            "archive: a write was still in progress at exit; if it was cut short, its torn last"
                + " line is cut off before the next append to that file");
      }
    }
    long lost = unwritten.stream().filter(c -> c.interval() != null).count();
    if (lost > 0) {
      droppedCounter("shutdown").increment((double) lost);
      log.warn(
          "archive: the writer was still busy after {}; {} closed intervals were not written"
              + " (profold_archive_intervals_dropped_total{{reason=\"shutdown\"}}); a longer"
              + " shutdown_timeout gives it time",
          timeout,
          lost);
    }
  }
}
