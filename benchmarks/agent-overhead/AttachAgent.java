import com.sun.tools.attach.VirtualMachine;

/**
 * Loads a Java agent into a running JVM through the attach API, for agent-overhead.sh's paired
 * mode: {@code java AttachAgent.java PID AGENT_JAR OPTIONS}. Exits with 1 and the reason when the
 * JVM refuses.
 */
public final class AttachAgent {
  private AttachAgent() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: java AttachAgent.java PID AGENT_JAR OPTIONS");
      System.exit(2);
    }
    VirtualMachine vm = VirtualMachine.attach(args[0]);
    try {
      vm.loadAgent(args[1], args[2]);
    } catch (Exception e) {
      System.err.println("could not load the agent into " + args[0] + ": " + e);
      System.exit(1);
    } finally {
      vm.detach();
    }
  }
}
