package dev.profold.sinks.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ScrapeSnapshotsTest {
  /** A source whose every read is a new snapshot, counted. */
  private final AtomicInteger reads = new AtomicInteger();

  private final SnapshotSource changing =
      () -> {
        reads.incrementAndGet();
        return new CollectorSnapshot(List.of(), List.of());
      };

  private final ScrapeSnapshots scrapes = new ScrapeSnapshots(changing);

  @Test
  void everyReadWithinAScrapeGetsTheSnapshotTheScrapeTook() {
    CollectorSnapshot first;
    try (ScrapeSnapshots.Scope scope = scrapes.scrape()) {
      first = scrapes.snapshot();
      assertThat(scrapes.snapshot()).isSameAs(first);
      try (ScrapeSnapshots.Scope nested = scrapes.scrape()) {
        assertThat(scrapes.snapshot()).as("a nested scrape keeps the outer one's").isSameAs(first);
      }
      assertThat(scrapes.snapshot()).isSameAs(first);
    }
    assertThat(reads).as("one read of the source for the whole scrape").hasValue(1);
    assertThat(scrapes.snapshot()).as("after the scrape, a fresh read").isNotSameAs(first);
    assertThat(reads).hasValue(2);
  }

  @Test
  void anotherThreadReadsTheSourceItself() throws Exception {
    try (ScrapeSnapshots.Scope scope = scrapes.scrape()) {
      CollectorSnapshot mine = scrapes.snapshot();
      CollectorSnapshot theirs = CompletableFuture.supplyAsync(scrapes::snapshot).get();
      assertThat(theirs).isNotSameAs(mine);
    }
  }
}
