package dev.profold.client.internal.activity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class EndRingTest {
  @Test
  void endsComeOutInOrderWithTheirFieldsAndAFullRingRefuses() {
    EndRing ring = new EndRing(4);
    for (int i = 0; i < 4; i++) {
      assertThat(ring.offer(i, "t-" + i, 10 * i, 100 * i, i % 2 == 1)).isTrue();
    }
    assertThat(ring.offer(9, "t-9", 0, 0, false)).as("full").isFalse();
    List<String> out = new ArrayList<>();
    ring.drain(
        (id, name, cpu, at, carrier) ->
            out.add(id + " " + name + " " + cpu + " " + at + " " + carrier));
    assertThat(out)
        .containsExactly(
            "0 t-0 0 0 false", "1 t-1 10 100 true", "2 t-2 20 200 false", "3 t-3 30 300 true");
    assertThat(ring.waiting()).isZero();
    assertThat(ring.offer(4, "t-4", 0, 0, false)).as("room again, past the wrap").isTrue();
    out.clear();
    ring.drain((id, name, cpu, at, carrier) -> out.add(name));
    assertThat(out).containsExactly("t-4");
    assertThatThrownBy(() -> new EndRing(6)).hasMessageContaining("power of two");
  }

  @Test
  void everyEndOfferedByManyThreadsWhileTheReaderDrainsIsTakenOnceOrRefused() throws Exception {
    EndRing ring = new EndRing(64);
    int writers = 4;
    int each = 50_000;
    Map<Long, Integer> taken = new HashMap<>();
    AtomicLong refused = new AtomicLong();
    AtomicBoolean done = new AtomicBoolean();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    List<Long> refusedIds = java.util.Collections.synchronizedList(new ArrayList<>());
    for (int w = 0; w < writers; w++) {
      long base = (long) w * each;
      Thread t =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (long i = base; i < base + each; i++) {
                  if (!ring.offer(i, "w", i * 3, i * 7, (i & 1) == 0)) {
                    refused.incrementAndGet();
                    refusedIds.add(i);
                  }
                }
              });
      t.start();
      threads.add(t);
    }
    AtomicLong torn = new AtomicLong(); // fields of another end, or not yet written
    EndRing.Reader reader =
        (id, name, cpu, at, carrier) -> {
          if (cpu != id * 3 || at != id * 7 || carrier != ((id & 1) == 0) || !"w".equals(name)) {
            torn.incrementAndGet();
          }
          taken.merge(id, 1, Integer::sum);
        };
    Thread drainer =
        new Thread(
            () -> {
              while (!done.get()) {
                ring.drain(reader);
              }
            });
    drainer.start();
    go.countDown();
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(60));
    }
    done.set(true);
    drainer.join(TimeUnit.SECONDS.toMillis(60));
    ring.drain(reader);

    assertThat(torn.get()).as("ends read with fields not their own").isZero();
    assertThat(taken.values()).as("none taken twice").allMatch(n -> n == 1);
    assertThat(taken.size() + refused.get()).as("none lost").isEqualTo((long) writers * each);
    assertThat(refusedIds).as("a refused end was never taken").noneMatch(taken::containsKey);
  }

  @Test
  void reportingAnEndAllocatesNothing() {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported());
    mx.setThreadAllocatedMemoryEnabled(true);
    ThreadActivity activity = new ThreadActivity(List::of);
    long self = Thread.currentThread().getId();
    String name = "churn-1";
    for (int i = 0; i < 1000; i++) { // warm up
      activity.ended(i, name, i, i, false);
    }
    activity.close(0, 0); // takes them
    long before = mx.getThreadAllocatedBytes(self);
    for (int i = 0; i < 2000; i++) {
      activity.ended(i, name, i, i, false);
    }
    long allocated = mx.getThreadAllocatedBytes(self) - before;
    // An ending thread's first allocation takes a whole allocation buffer, given back as it ends.
    assertThat(allocated).as("bytes allocated by 2,000 end reports").isLessThan(2000);
  }
}
