package dev.profold.client.internal.runtime;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * This machine's host name, read without waiting on a name service where the system allows it.
 *
 * <p>{@code InetAddress.getLocalHost()} resolves the host name to an address before it answers: on
 * a machine whose name neither {@code /etc/hosts} nor a reachable DNS server knows, it waits for
 * the resolver's timeouts (seconds), and the start of Profold runs on the application's own thread
 * (its {@code main}, or the agent's {@code premain}). It then fails, and a container whose pid is 1
 * would be named like every other such container. So the name is read, in order, from Linux's
 * {@code /proc/sys/kernel/hostname} (what {@code gethostname} returns), from the {@code HOSTNAME}
 * or {@code COMPUTERNAME} environment variable, and only then from {@code getLocalHost()}, waited
 * for at most {@link #LOOKUP_BOUND_MILLIS}; {@code "localhost"} when none answers.
 */
public final class HostName {
  /** How long the last resort, a name service look-up, is waited for. */
  public static final long LOOKUP_BOUND_MILLIS = 1000;

  private static final Path KERNEL_HOSTNAME = Path.of("/proc/sys/kernel/hostname");

  /** The answer for this process, found at the first call. */
  private static volatile String local;

  private HostName() {}

  /** This machine's host name, never empty; the same string for every call in this process. */
  public static String local() {
    String name = local;
    if (name == null) {
      name = find(KERNEL_HOSTNAME, System.getenv(), HostName::lookUp, LOOKUP_BOUND_MILLIS);
      local = name;
    }
    return name;
  }

  /**
   * The first non-blank of: the file's first line, {@code HOSTNAME}, {@code COMPUTERNAME}, the
   * look-up's answer within {@code boundMillis} (run on a daemon thread, abandoned when late); else
   * {@code "localhost"}.
   */
  static String find(
      Path kernelFile, Map<String, String> env, Supplier<String> lookUp, long boundMillis) {
    String name = firstLine(kernelFile);
    if (name == null) {
      name = nonBlank(env.get("HOSTNAME"));
    }
    if (name == null) {
      name = nonBlank(env.get("COMPUTERNAME"));
    }
    if (name == null) {
      name = nonBlank(bounded(lookUp, boundMillis));
    }
    return name == null ? "localhost" : name;
  }

  private static String firstLine(Path file) {
    try {
      if (!Files.isRegularFile(file)) {
        return null;
      }
      String text = Files.readString(file, StandardCharsets.UTF_8);
      int end = text.indexOf('\n');
      return nonBlank(end < 0 ? text : text.substring(0, end));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static String bounded(Supplier<String> lookUp, long boundMillis) {
    CompletableFuture<String> answer = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                answer.complete(lookUp.get());
              } catch (RuntimeException e) {
                answer.complete(null);
              }
            },
            "profold-hostname");
    t.setDaemon(true);
    t.start();
    try {
      return answer.get(boundMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (ExecutionException | TimeoutException e) {
      return null;
    }
  }

  private static String lookUp() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return null;
    }
  }

  private static String nonBlank(String s) {
    if (s == null) {
      return null;
    }
    String t = s.strip();
    return t.isEmpty() ? null : t;
  }
}
