package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RecentEndsTest {
  @Test
  void anEndIsRememberedForItsLifetimeInIntervals() {
    RecentEnds ends = new RecentEnds(100, 3);
    ends.add(1, 10);
    ends.add(2, 11);
    ends.expire(12);
    assertThat(ends.contains(1)).isTrue();
    ends.expire(13);
    assertThat(ends.contains(1)).isFalse();
    assertThat(ends.contains(2)).isTrue();
    ends.expire(14);
    assertThat(ends.size()).isZero();
  }

  @Test
  void atMostMaxEndsAreRememberedAndTheOldestGoFirst() {
    RecentEnds ends = new RecentEnds(3, 100);
    for (long id = 1; id <= 5; id++) {
      ends.add(id, 0);
    }
    assertThat(ends.size()).isEqualTo(3);
    assertThat(ends.contains(2)).isFalse();
    assertThat(ends.contains(3)).isTrue();
    assertThat(ends.contains(5)).isTrue();
  }

  @Test
  void maxAndLifetimeMustBePositive() {
    assertThatThrownBy(() -> new RecentEnds(0, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new RecentEnds(1, 0)).isInstanceOf(IllegalArgumentException.class);
  }
}
