import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed-rate (open-loop) HTTP/1.1 load for agent-overhead.sh: {@code connections} keep-alive
 * connections, each sending GET requests on its own schedule so that together they send {@code
 * rate} requests per second, whatever the server's speed. A request late on its schedule (the
 * previous response was slow) is sent at once, and its latency counts from when it was due, so a
 * stall shows in the percentiles instead of lowering the rate.
 *
 * <p>Run with the JDK's source launcher, no build needed:
 *
 * <pre>java OpenLoopLoad.java HOST PORT RATE SECONDS CONNECTIONS</pre>
 *
 * Prints one line of key=value pairs: sent, ok, errors, rate (achieved), late (requests sent
 * more than 1 ms after they were due), p50_ms, p99_ms, p999_ms, max_ms. Exits with 2 on bad
 * arguments and 1 when no request succeeded.
 */
public final class OpenLoopLoad {
  private OpenLoopLoad() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: java OpenLoopLoad.java HOST PORT RATE SECONDS CONNECTIONS");
      System.exit(2);
    }
    String host = args[0];
    int port = Integer.parseInt(args[1]);
    double rate = Double.parseDouble(args[2]);
    double seconds = Double.parseDouble(args[3]);
    int connections = Integer.parseInt(args[4]);
    if (rate <= 0 || seconds <= 0 || connections <= 0) {
      System.err.println("RATE, SECONDS and CONNECTIONS must be positive");
      System.exit(2);
    }
    long period = Math.round(connections * 1e9 / rate); // between one connection's requests
    long perConnection = (long) Math.ceil(seconds * rate / connections);
    byte[] request =
        ("GET / HTTP/1.1\r\nHost: " + host + "\r\nConnection: keep-alive\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    long[][] latencies = new long[connections][];
    AtomicLong errors = new AtomicLong();
    AtomicLong late = new AtomicLong();
    CountDownLatch done = new CountDownLatch(connections);
    long start = System.nanoTime() + 100_000_000L; // all connections open by then
    for (int c = 0; c < connections; c++) {
      int id = c;
      long first = start + period * c / connections; // spread over one period
      Thread t =
          new Thread(
              () -> {
                try {
                  latencies[id] =
                      run(host, port, request, first, period, perConnection, errors, late);
                } finally {
                  done.countDown();
                }
              },
              "load-" + c);
      t.setDaemon(true);
      t.start();
    }
    done.await();
    double elapsed = (System.nanoTime() - start) / 1e9;
    long ok = 0;
    for (long[] l : latencies) {
      ok += l.length;
    }
    long[] all = new long[(int) ok];
    int at = 0;
    for (long[] l : latencies) {
      System.arraycopy(l, 0, all, at, l.length);
      at += l.length;
    }
    Arrays.sort(all);
    System.out.printf(
        Locale.ROOT,
        "sent=%d ok=%d errors=%d rate=%.0f late=%d p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f"
            + " max_ms=%.3f%n",
        ok + errors.get(),
        ok,
        errors.get(),
        ok / elapsed,
        late.get(),
        percentile(all, 0.50),
        percentile(all, 0.99),
        percentile(all, 0.999),
        all.length == 0 ? Double.NaN : all[all.length - 1] / 1e6);
    System.exit(ok == 0 ? 1 : 0);
  }

  /** One connection's requests; returns the latencies of those answered, nanoseconds. */
  private static long[] run(
      String host,
      int port,
      byte[] request,
      long first,
      long period,
      long count,
      AtomicLong errors,
      AtomicLong late) {
    long[] out = new long[(int) count];
    int n = 0;
    Socket socket = null;
    InputStream in = null;
    OutputStream os = null;
    for (long i = 0; i < count; i++) {
      long due = first + i * period;
      long now = System.nanoTime();
      while (now < due) {
        LockSupport.parkNanos(due - now);
        now = System.nanoTime();
      }
      if (now - due > 1_000_000L) {
        late.incrementAndGet();
      }
      try {
        if (socket == null) {
          socket = new Socket();
          socket.setTcpNoDelay(true);
          socket.connect(new InetSocketAddress(host, port), 5_000);
          socket.setSoTimeout(10_000);
          in = new BufferedInputStream(socket.getInputStream(), 4096);
          os = socket.getOutputStream();
        }
        os.write(request);
        os.flush();
        readResponse(in);
        out[n++] = System.nanoTime() - due;
      } catch (IOException e) {
        errors.incrementAndGet();
        close(socket);
        socket = null;
      }
    }
    close(socket);
    return Arrays.copyOf(out, n);
  }

  /** Reads one response: headers, then Content-Length bytes of body. */
  private static void readResponse(InputStream in) throws IOException {
    long length = -1;
    StringBuilder line = new StringBuilder();
    boolean status = true;
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("connection closed by the server");
      }
      if (b == '\n') {
        String l = line.toString().trim();
        line.setLength(0);
        if (status) {
          if (!l.startsWith("HTTP/1.1 200")) {
            throw new IOException("unexpected status: " + l);
          }
          status = false;
        } else if (l.isEmpty()) {
          break;
        } else if (l.regionMatches(true, 0, "content-length:", 0, 15)) {
          length = Long.parseLong(l.substring(15).trim());
        }
      } else {
        line.append((char) b);
      }
    }
    if (length < 0) {
      throw new IOException("response without Content-Length");
    }
    for (long left = length; left > 0; ) {
      long skipped = in.skip(left);
      if (skipped <= 0) {
        if (in.read() < 0) {
          throw new IOException("connection closed in the body");
        }
        skipped = 1;
      }
      left -= skipped;
    }
  }

  private static double percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
    return sorted[Math.max(0, i)] / 1e6;
  }

  private static void close(Socket s) {
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // closing after an error: nothing more to do
      }
    }
  }
}
