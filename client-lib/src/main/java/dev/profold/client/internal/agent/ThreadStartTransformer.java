package dev.profold.client.internal.agent;

import dev.profold.client.internal.boot.ThreadHooks;
import java.lang.instrument.ClassFileTransformer;
import java.security.ProtectionDomain;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.commons.AdviceAdapter;
import org.objectweb.asm.commons.Method;

/**
 * Times {@code Thread.start()}: rewrites the method of {@code java.lang.Thread} so that it calls
 * {@link ThreadHooks#wallAtEntry} and {@link ThreadHooks#cpuAtEntry} on entry and {@link
 * ThreadHooks#exit} on a normal return (a start that throws, such as starting a thread twice, is
 * not timed); and {@code Thread.exit()} so that it calls {@link ThreadHooks#ending} first. Only the
 * bodies of those two methods change: no field, method or signature is added, as retransformation
 * requires.
 *
 * <p>No JFR event times a start, and most of it is spent off CPU (the JVM creates the native thread
 * and waits for it), where samples cannot see it. Thread-safe.
 */
final class ThreadStartTransformer implements ClassFileTransformer {
  static final String THREAD = "java/lang/Thread";

  private static final Type HOOK = Type.getType(ThreadHooks.class);
  private static final Method WALL = new Method("wallAtEntry", "()J");
  private static final Method CPU = new Method("cpuAtEntry", "()J");
  private static final Method EXIT = new Method("exit", "(Ljava/lang/Thread;JJ)V");
  private static final Method ENDING = new Method("ending", "()V");
  private static final String NO_ARGS = "()V";

  /**
   * {@code Thread.start(ThreadContainer)}, the JDK's own way to start a platform thread on Java 21
   * and later (thread-per-task executors, structured concurrency): it does not go through {@code
   * start()}, so it is timed too.
   */
  private static final String IN_CONTAINER = "(Ljdk/internal/vm/ThreadContainer;)V";

  private volatile Throwable failure;
  private volatile boolean applied;

  @Override
  public byte[] transform(
      Module module,
      ClassLoader loader,
      String className,
      Class<?> redefined,
      ProtectionDomain domain,
      byte[] bytes) {
    if (!THREAD.equals(className)) {
      return null;
    }
    try {
      if (timedAlready(new ClassReader(bytes))) { // by a transformer earlier in the chain
        applied = true;
        return null;
      }
      byte[] out = instrument(bytes);
      applied = out != null;
      return out;
    } catch (RuntimeException | LinkageError e) { // the class stays as it was
      failure = e;
      return null;
    }
  }

  /** True once {@code java.lang.Thread} was rewritten, here or earlier in the chain. */
  boolean applied() {
    return applied;
  }

  /** Why rewriting failed, or null. */
  Throwable failure() {
    return failure;
  }

  /**
   * The class {@code bytes} with its instance methods {@code start()V} and, on Java 21 and later,
   * {@code start(ThreadContainer)V} timed and its instance method {@code exit()V}, if any,
   * reporting the end first; or null when it has no such start or it is timed already (a second
   * transformer in the chain must not time starts twice). Any class with such methods (tests use
   * their own).
   */
  static byte[] instrument(byte[] bytes) {
    ClassReader reader = new ClassReader(bytes);
    if (timedAlready(reader)) {
      return null;
    }
    ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
    boolean[] found = new boolean[1];
    reader.accept(
        new ClassVisitor(Opcodes.ASM9, writer) {
          @Override
          public MethodVisitor visitMethod(
              int access, String name, String descriptor, String signature, String[] exceptions) {
            MethodVisitor mv = super.visitMethod(access, name, descriptor, signature, exceptions);
            if ("exit".equals(name)
                && "()V".equals(descriptor)
                && (access & (Opcodes.ACC_STATIC | Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE))
                    == 0) {
              return new Ending(mv, access, name, descriptor);
            }
            if (!"start".equals(name)
                || !(NO_ARGS.equals(descriptor) || IN_CONTAINER.equals(descriptor))
                || (access & (Opcodes.ACC_STATIC | Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE))
                    != 0) {
              return mv;
            }
            found[0] = true;
            return new Timed(mv, access, name, descriptor);
          }
        },
        ClassReader.EXPAND_FRAMES);
    return found[0] ? writer.toByteArray() : null;
  }

  /** True when {@code start()V} of the class already calls the hook. */
  private static boolean timedAlready(ClassReader reader) {
    boolean[] calls = new boolean[1];
    reader.accept(
        new ClassVisitor(Opcodes.ASM9) {
          @Override
          public MethodVisitor visitMethod(
              int access, String name, String descriptor, String signature, String[] exceptions) {
            if (!"start".equals(name) || !"()V".equals(descriptor)) {
              return null;
            }
            return new MethodVisitor(Opcodes.ASM9) {
              @Override
              public void visitMethodInsn(
                  int opcode, String owner, String method, String desc, boolean isInterface) {
                if (owner.equals(HOOK.getInternalName()) && method.equals(WALL.getName())) {
                  calls[0] = true;
                }
              }
            };
          }
        },
        ClassReader.SKIP_FRAMES);
    return calls[0];
  }

  /**
   * The advice at the entry of {@code exit()V}, which the JVM runs on a thread as it ends: the
   * thread's CPU time can still be read there.
   */
  private static final class Ending extends AdviceAdapter {
    Ending(MethodVisitor mv, int access, String name, String descriptor) {
      super(Opcodes.ASM9, mv, access, name, descriptor);
    }

    @Override
    protected void onMethodEnter() {
      invokeStatic(HOOK, ENDING);
    }
  }

  /** The advice around one {@code start()V}. */
  private static final class Timed extends AdviceAdapter {
    private int wall;
    private int cpu;

    Timed(MethodVisitor mv, int access, String name, String descriptor) {
      super(Opcodes.ASM9, mv, access, name, descriptor);
    }

    @Override
    protected void onMethodEnter() {
      invokeStatic(HOOK, WALL);
      wall = newLocal(Type.LONG_TYPE);
      storeLocal(wall);
      invokeStatic(HOOK, CPU);
      cpu = newLocal(Type.LONG_TYPE);
      storeLocal(cpu);
    }

    @Override
    protected void onMethodExit(int opcode) {
      if (opcode == Opcodes.ATHROW) {
        return;
      }
      loadThis();
      loadLocal(wall);
      loadLocal(cpu);
      invokeStatic(HOOK, EXIT);
    }
  }
}
