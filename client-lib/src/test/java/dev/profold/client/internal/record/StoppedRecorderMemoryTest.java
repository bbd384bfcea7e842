package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.profold.client.AsyncRegion;
import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.ContextView;
import dev.profold.proto.v1.SourceIdentity;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A recorder nothing refers to any more (its runtime stopped) is not kept in memory by the threads
 * that recorded with it and live on: their states are values of its thread-local, and a value that
 * reaches its thread-local's key keeps both for as long as the thread lives.
 */
class StoppedRecorderMemoryTest {
  @RegisterExtension final TestThreads threads = new TestThreads();

  /** A new encoder, referred to by nothing else. */
  private static DeltaEncoder encoder() {
    return new DeltaEncoder(
        SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  }

  /** References to what a recorder made, none to the recorder itself. */
  private record Made(WeakReference<Recorder> recorder, WeakReference<ContextView> contexts) {}

  private static Made recordOn(ExecutorService thread, ExecutorService other) throws Exception {
    Recorder r = new Recorder(encoder(), 1024, 100);
    thread
        .submit(
            () -> {
              try (Scope s = r.with("tenant", "a");
                  Scope n = r.with("n", 3L);
                  Scope d = r.with("d", 0.5);
                  Scope b = r.with("b", true);
                  Region a = r.region("a", Kind.IO)) {
                r.record(r.metric("bytes", "bytes"), 10);
              }
              Region x = r.region("x", Kind.WAIT);
              x.close();
              x.close(); // misuse: counted through the recorder
              for (int i = 0; i < 200; i++) { // beyond the context limit: the table's callback
                r.region("r" + i, Kind.COMPUTE).close();
              }
            })
        .get();
    Region elsewhere = thread.submit(() -> r.region("handed over", Kind.WAIT)).get();
    other.submit(elsewhere::close).get(); // closed on another thread
    thread.submit(() -> r.region("after", Kind.COMPUTE).close()).get();
    r.collect();
    r.stop();
    return new Made(new WeakReference<>(r), new WeakReference<>(r.contexts()));
  }

  private static void collectGarbageUntilCleared(WeakReference<?> ref) {
    for (int i = 0; i < 20 && ref.get() != null; i++) {
      System.gc();
    }
  }

  /** Sets enough new thread-locals on the calling thread for its map to grow, which expunges. */
  private static void useThreadLocals() {
    List<ThreadLocal<Object>> locals = new ArrayList<>();
    for (int i = 0; i < 256; i++) {
      ThreadLocal<Object> l = new ThreadLocal<>();
      l.set(i);
      locals.add(l);
    }
    locals.forEach(ThreadLocal::remove);
  }

  @Test
  void aRecorderNothingRefersToIsCollectedWhileItsThreadsLiveOn() throws Exception {
    ExecutorService thread = threads.newThread();
    Made made = recordOn(thread, threads.newThread());

    collectGarbageUntilCleared(made.recorder());

    // Before the fix, the thread's state reached the recorder, and the recorder its thread-local.
    assertThat(made.recorder().get()).as("the recorder").isNull();
    // The thread's state itself goes when the thread's map next drops entries of collected keys.
    thread.submit(StoppedRecorderMemoryTest::useThreadLocals).get();
    collectGarbageUntilCleared(made.contexts());
    assertThat(made.contexts().get()).as("its contexts, through the thread's state").isNull();
  }

  @Test
  void aHandleClosedOnceItsRecorderIsGoneThrowsNothing() throws Exception {
    ExecutorService thread = threads.newThread();
    Region[] open = new Region[1];
    WeakReference<Recorder> ref = openOn(thread, open, false);

    collectGarbageUntilCleared(ref);

    assertThat(ref.get()).isNull();
    thread
        .submit(
            () -> {
              assertThatCode(open[0]::close).doesNotThrowAnyException();
              assertThatCode(open[0]::close).doesNotThrowAnyException(); // closed twice
            })
        .get();
    assertThatCode(() -> threads.newThread().submit(open[0]::close).get())
        .doesNotThrowAnyException(); // and on another thread
  }

  /** A region left open in {@code open[0]} on {@code thread}, pooled or not, then a stop. */
  private static WeakReference<Recorder> openOn(
      ExecutorService thread, Region[] open, boolean pooled) throws Exception {
    Recorder r = new Recorder(encoder(), 1024, Integer.MAX_VALUE, t -> pooled);
    thread.submit(() -> open[0] = r.region("open", Kind.WAIT)).get();
    r.stop();
    return new WeakReference<>(r);
  }

  @Test
  void aPooledStateHandleClosedAfterTheRecorderIsGoneThrowsNothing() throws Exception {
    ExecutorService thread = threads.newThread();
    Region[] open = new Region[1];
    WeakReference<Recorder> ref = openOn(thread, open, true);

    collectGarbageUntilCleared(ref);

    // Pooled (as virtual threads' are): the close gives the state back only while the recorder
    // lives; after, it finds none to give it to.
    assertThat(ref.get()).isNull();
    thread.submit(() -> assertThatCode(open[0]::close).doesNotThrowAnyException()).get();
    thread.submit(() -> assertThatCode(open[0]::close).doesNotThrowAnyException()).get();
  }

  @Test
  void anAsynchronousRegionHandleKeepsItsRecorderAndEndsQuietlyAfterTheStop() throws Exception {
    Recorder r = new Recorder(encoder(), 1024);
    AsyncRegion async = r.asyncRegion("call", Kind.WAIT);
    r.stop();
    WeakReference<Recorder> ref = new WeakReference<>(r);
    r = null;

    collectGarbageUntilCleared(ref);

    assertThat(ref.get()).as("held by the handle, as client.md says").isNotNull();
    assertThatCode(() -> async.enter().close()).doesNotThrowAnyException();
    assertThatCode(async::end).doesNotThrowAnyException();
  }
}
