package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.SourceIdentity;
import java.lang.reflect.Field;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A thread's attention word holds both the count of frames closed elsewhere and the bit asking for
 * its ids back: the count must never go below zero, or the borrow reaches the bit.
 */
class AttentionWordTest {
  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  @RegisterExtension final TestThreads threads = new TestThreads();

  private static int attention(ThreadState s) throws Exception {
    Field f = ThreadState.class.getDeclaredField("attention");
    f.setAccessible(true);
    return f.getInt(s);
  }

  @AfterEach
  void noPause() {
    ThreadState.betweenCountAndFlag = null;
  }

  @Test
  void aCloserPausedInItsCloseNeverLetsTheOwnerTakeTheCountBelowZero() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    ThreadState s = r.stateOfCallingThread();
    Region a = r.region("a", Kind.WAIT);
    Region b = r.region("b", Kind.WAIT);
    threads.newThread().submit(b::close).get(); // counted and flagged
    CountDownLatch paused = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    ThreadState.betweenCountAndFlag =
        () -> {
          paused.countDown();
          try {
            resume.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    Future<?> closer = threads.newThread().submit(a::close); // a second closer, paused midway
    assertThat(paused.await(30, TimeUnit.SECONDS)).as("the closer reached the pause").isTrue();
    ThreadState.betweenCountAndFlag = null;

    r.region("x", Kind.COMPUTE).close(); // the owner takes what is flagged: b's close
    r.region("y", Kind.COMPUTE).close();
    assertThat(attention(s)).as("the paused close still counted, never less").isEqualTo(1);

    resume.countDown();
    closer.get(30, TimeUnit.SECONDS);
    for (int i = 0; i < 3; i++) {
      r.region("z", Kind.COMPUTE).close();
    }
    assertThat(Integer.toHexString(attention(s)))
        .as("nothing pending, nothing asked: the hot path's check must pass again")
        .isEqualTo("0");
  }

  @Test
  void releasesAskedWhileClosesElsewhereComeAndGoLeaveTheWordClear() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    ThreadState s = r.stateOfCallingThread();
    ExecutorService other = threads.newThread();
    for (int i = 0; i < 100; i++) {
      Region a = r.region("a", Kind.WAIT);
      Region b = r.region("b", Kind.WAIT);
      other.submit(b::close).get();
      other.submit(a::close).get();
      s.holder().request(); // the table asks for ids back meanwhile
      r.region("x", Kind.COMPUTE).close();
    }
    assertThat(Integer.toHexString(attention(s))).isEqualTo("0");
  }
}
