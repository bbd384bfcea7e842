package dev.profold.client.internal.record;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Threads of a test, each a single-thread executor (so a test decides which thread records what),
 * all stopped after each test. Register with {@code @RegisterExtension}.
 */
final class TestThreads implements AfterEachCallback {
  private final List<ExecutorService> executors = new ArrayList<>();

  /** A new thread, stopped after the test. */
  ExecutorService newThread() {
    ExecutorService e = Executors.newSingleThreadExecutor();
    executors.add(e);
    return e;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    executors.forEach(ExecutorService::shutdownNow);
    executors.clear();
  }
}
