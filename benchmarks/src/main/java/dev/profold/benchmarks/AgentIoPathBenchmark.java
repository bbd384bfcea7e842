package dev.profold.benchmarks;

import dev.profold.client.internal.agent.ProfoldAgent;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.text.ParseException;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What profiling costs an application thread on the socket I/O path, per call, with no profiler,
 * with JFR alone at {@code default.jfc}, with the Profold agent's JFR stream with its I/O events on
 * ({@code profold}: {@code io.quiet=0}), after its I/O gate turned them off ({@code
 * profold-io-quiet}) and at {@code io=false}, side by side (one fork per {@code profiler} value, in
 * one run).
 *
 * <p>Once JFR's socket events are enabled (JFR alone: 20 ms threshold; the agent: {@code
 * threshold.io}, 10 ms), the JDK's socket channel reads and writes are instrumented: every call,
 * however short, reads JFR's clock before and after and compares the duration with the threshold,
 * in the calling thread. This is the part of a profiler's cost that grows with the request rate
 * rather than with time (the sampler and the agent's own threads cost CPU per second); the
 * agent-overhead server makes about one read and one write per request.
 *
 * <ul>
 *   <li>{@code writeRead}: 64 bytes written on one end of a loopback TCP connection and read on the
 *       other: two instrumented calls (more when the read returns the bytes in parts).
 *   <li>{@code emptyRead}: a non-blocking read of a connection with nothing to read, which returns
 *       0 at once: one instrumented call around the cheapest system call the path makes.
 * </ul>
 *
 * <p>The agent is started from code ({@link ProfoldAgent#start}), with its default JFR settings
 * (but for the I/O options above) and a collector that is not there (its exporter retries in the
 * background), so this measures the JFR stream the agent runs, not the thread-start hook (which
 * needs {@code -javaagent} and costs nothing on this path). Not thread-safe: one benchmark thread
 * per fork.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public class AgentIoPathBenchmark {
  @Param({"none", "jfr", "profold", "profold-io-quiet", "profold-io-off"})
  public String profiler;

  private Recording recording;
  private ServerSocketChannel listener;
  private SocketChannel writer;
  private SocketChannel reader;
  private SocketChannel idle;
  private SocketChannel idlePeer;
  private final ByteBuffer out = ByteBuffer.allocateDirect(64);
  private final ByteBuffer in = ByteBuffer.allocateDirect(64);

  /** Starts the profiler of this fork and opens two loopback connections. */
  @Setup(Level.Trial)
  public void setUp() throws IOException, ParseException {
    switch (profiler) {
      case "none" -> {}
      case "jfr" -> {
        recording = new Recording(Configuration.getConfiguration("default"));
        recording.setToDisk(true);
        recording.setMaxSize(64L << 20);
        recording.start();
      }
      case "profold" -> startAgent(",io.quiet=0"); // I/O events on throughout
      case "profold-io-quiet" -> {
        // The defaults' I/O gate, quicker: the events go off at the first batch after 20 s
        // without one (this fork makes none that waits 10 ms), and the first probe comes 20 s
        // after that, after the fork's 10 s of warm-up and measurement.
        startAgent(",io.quiet=20s");
        sleepSeconds(22);
      }
      case "profold-io-off" -> startAgent(",io=false");
      default ->
          throw new IllegalArgumentException(
              "profiler: none, jfr, profold, profold-io-quiet or profold-io-off");
    }
    listener =
        ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    writer = SocketChannel.open(listener.getLocalAddress());
    reader = listener.accept();
    idle = SocketChannel.open(listener.getLocalAddress());
    idlePeer = listener.accept();
    idle.configureBlocking(false);
  }

  /** Closes the connections and stops the profiler. */
  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    for (SocketChannel c : new SocketChannel[] {writer, reader, idle, idlePeer}) {
      c.close();
    }
    listener.close();
    if (recording != null) {
      recording.close();
    }
    if (profiler.startsWith("profold")) {
      ProfoldAgent.stop();
    }
  }

  private static void sleepSeconds(long seconds) {
    try {
      Thread.sleep(seconds * 1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the I/O events to go off", e);
    }
  }

  private static void startAgent(String more) {
    if (ProfoldAgent.start("endpoint=127.0.0.1:9,service=io-bench,instance=fork" + more) == null) {
      throw new IllegalStateException("the Profold agent did not start (see its log above)");
    }
  }

  /** 64 bytes there: one write, then reads (blocking) until all 64 arrived. */
  @Benchmark
  public int writeRead() throws IOException {
    out.clear();
    while (out.hasRemaining()) {
      writer.write(out);
    }
    in.clear();
    while (in.hasRemaining()) {
      reader.read(in);
    }
    return in.get(0);
  }

  /** A non-blocking read of an idle connection: returns 0. */
  @Benchmark
  public int emptyRead() throws IOException {
    in.clear();
    return idle.read(in);
  }
}
