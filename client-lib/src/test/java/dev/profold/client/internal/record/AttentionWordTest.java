package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.SourceIdentity;
import java.lang.reflect.Field;
import java.util.concurrent.ExecutorService;
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

  @Test
  void aCloserPreemptedAnywhereInItsCloseLeavesTheWordClear() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    ThreadState s = r.stateOfCallingThread();
    Field f = ThreadState.class.getDeclaredField("attention");
    f.setAccessible(true);
    Region a = r.region("a", Kind.WAIT);
    Region b = r.region("b", Kind.WAIT);
    threads.newThread().submit(b::close).get(); // counted and flagged
    // Another closer of a counts it and is preempted before it flags it (closeElsewhere).
    f.setInt(s, f.getInt(s) + 1); // (no other thread touches it now)

    r.region("x", Kind.COMPUTE).close(); // takes b's flag; a's is not there yet
    r.region("y", Kind.COMPUTE).close(); // an open or close in that window
    assertThat(f.getInt(s)).as("a's close still counted, never less").isEqualTo(1);

    assertThat(((Frame) a).flagClosedElsewhere(System.nanoTime())).isTrue(); // it resumes
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
