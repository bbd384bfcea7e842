package dev.profold.collector.cli;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs an action on SIGHUP, through the JDK's {@code sun.misc.Signal} (module jdk.unsupported),
 * looked up reflectively so the build needs no internal API. Where the JVM offers no such signal
 * (Windows, or a JVM started with -Xrs), or where the process was started with SIGHUP ignored
 * ({@code nohup}), {@link #install} says so and returns false.
 */
final class HangupSignal {
  private static final Logger log = LoggerFactory.getLogger(HangupSignal.class);

  private HangupSignal() {}

  /** Installs {@code action} as the SIGHUP handler; false when that is not possible here. */
  static boolean install(Runnable action) {
    try {
      Class<?> signal = Class.forName("sun.misc.Signal");
      Class<?> handler = Class.forName("sun.misc.SignalHandler");
      Object hup = signal.getConstructor(String.class).newInstance("HUP");
      InvocationHandler h =
          (proxy, method, args) -> {
            if (method.getName().equals("handle")) {
              action.run();
              return null;
            }
            return switch (method.getName()) {
              case "hashCode" -> System.identityHashCode(proxy);
              case "equals" -> proxy == args[0];
              default -> "SIGHUP handler";
            };
          };
      Object proxy = Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler}, h);
      Object previous = signal.getMethod("handle", signal, handler).invoke(null, hup, proxy);
      if (previous == handler.getField("SIG_IGN").get(null)) {
        // The JVM leaves a signal ignored at its start ignored: the handler never runs.
        log.info(
            "SIGHUP is ignored by this process (started with nohup, or by a parent that ignores"
                + " it), so it does nothing here");
        return false;
      }
      return true;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      log.warn(
          "SIGHUP cannot be handled on this JVM ({}); the config file is still watched, so reload"
              + " by editing it: where the system has SIGHUP (a JVM started with -Xrs), a SIGHUP"
              + " sent to the collector ends it",
          e.toString());
      return false;
    }
  }
}
