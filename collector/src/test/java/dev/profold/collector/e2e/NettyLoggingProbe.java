package dev.profold.collector.e2e;

/**
 * Prints the simple class name of the logger factory the agent's relocated Netty picks in this JVM
 * (the same class, in the same loader, as the agent's own), then waits to be killed.
 */
public final class NettyLoggingProbe {
  private NettyLoggingProbe() {}

  public static void main(String[] args) throws Exception {
    Class<?> factory =
        Class.forName(
            "dev.profold.shaded.io.grpc.netty.shaded.io.netty.util.internal.logging"
                + ".InternalLoggerFactory");
    Object chosen = factory.getMethod("getDefaultFactory").invoke(null);
    System.out.println(chosen.getClass().getSimpleName());
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
