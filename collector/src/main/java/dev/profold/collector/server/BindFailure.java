package dev.profold.collector.server;

import java.io.IOException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The collector could not listen on one of its ports. The message is one line for the operator:
 * which port (gRPC or HTTP) on which address, why, and the option and config key that change it,
 * for example {@code cannot listen for HTTP on 127.0.0.1:7764: address already in use; choose
 * another port with --http-port or http_port in the config file (0 picks a free one)}.
 */
public final class BindFailure extends IOException {
  private static final long serialVersionUID = 1L;

  /** What Netty's native transport puts before the system's reason: "bind(..) failed: ...". */
  private static final Pattern NATIVE_PREFIX =
      Pattern.compile("^\\w+\\(\\.\\.\\) failed(?: with error\\(-?\\d+\\))?: ");

  private BindFailure(String message, Throwable cause) {
    super(message, cause);
  }

  /** The gRPC port could not be bound. */
  static BindFailure grpc(String listen, int port, Throwable cause) {
    return of("gRPC", listen, port, "--grpc-port", "grpc_port", cause);
  }

  /** The HTTP port could not be bound. */
  static BindFailure http(String listen, int port, Throwable cause) {
    return of("HTTP", listen, port, "--http-port", "http_port", cause);
  }

  private static BindFailure of(
      String what, String listen, int port, String option, String key, Throwable cause) {
    String why = rootMessage(cause);
    String host = listen.contains(":") ? "[" + listen + "]" : listen;
    String fix =
        why.toLowerCase(Locale.ROOT).contains("in use")
            ? "choose another port with " + option + " or " + key + " in the config file"
            : "check the address (--listen or listen in the config file) and the port ("
                + option
                + " or "
                + key
                + ")";
    return new BindFailure(
        "cannot listen for "
            + what
            + " on "
            + host
            + ":"
            + port
            + ": "
            + why
            + "; "
            + fix
            + " (0 picks a free one)",
        cause);
  }

  /** The message of the innermost cause: Netty and the JDK wrap the system's reason. */
  private static String rootMessage(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    String m = c.getMessage() == null ? c.toString() : c.getMessage();
    return NATIVE_PREFIX.matcher(m).replaceFirst("");
  }
}
