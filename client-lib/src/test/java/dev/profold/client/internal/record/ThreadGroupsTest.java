package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/** Thread names become groups the collector takes: digits collapsed, at most 128 characters. */
class ThreadGroupsTest {
  @Property
  void aGroupIsShortHasNoDigitsAndNormalisesToItself(@ForAll @StringLength(max = 400) String name) {
    String group = ThreadGroups.normalise(name);

    assertThat(group.length()).isBetween(1, ThreadGroups.MAX_GROUP_CHARS);
    assertThat(group.chars().noneMatch(c -> c >= '0' && c <= '9')).isTrue();
    assertThat(ThreadGroups.normalise(group)).isEqualTo(group);
  }

  @Test
  void aLongNameKeepsItsBeginningAndEndsInAStar() {
    // OkHttp names its dispatcher thread after the URL it calls: before, a group over 128
    // characters made the collector refuse the whole delta.
    String url = "OkHttp https://api.example.com/" + "v2/orders/".repeat(30);
    String group = ThreadGroups.normalise(url);

    assertThat(group)
        .hasSize(128)
        .startsWith("OkHttp https://api.example.com/v*/orders/")
        .endsWith("*");
    assertThat(ThreadGroups.normalise(url + "?page=2")).isEqualTo(group);
  }

  @Test
  void onceTheAgentNamedTheInitialThreadItIsKnownByItsIdWhateverItsName() {
    // Spring DevTools runs an application's main on "restartedMain", and a program may rename its
    // main thread: before, only a thread called main in group main was the initial one.
    Thread renamedMain = new Thread(() -> {}, "restartedMain");
    try {
      ThreadGroups.initialThreadIs(renamedMain.getId());
      assertThat(ThreadGroups.isInitial(renamedMain)).isTrue();
      assertThat(ThreadGroups.isInitial(renamedMain.getId() + 1000, "main", "main"))
          .as("another thread called main")
          .isFalse();
    } finally {
      ThreadGroups.initialThreadIs(-1);
    }
    assertThat(ThreadGroups.isInitial(5, "main", "main")).as("by name when not named").isTrue();
    assertThat(ThreadGroups.isInitial(5, "main", "other")).isFalse();
    assertThat(ThreadGroups.isInitial(renamedMain)).isFalse();
  }

  @Test
  void theCutNeverSplitsASurrogatePair() {
    String name = "a".repeat(126) + "\uD83D\uDE00" + "tail";
    String group = ThreadGroups.normalise(name);

    assertThat(group).isEqualTo("a".repeat(126) + "*");
    assertThat(Character.isHighSurrogate(group.charAt(group.length() - 2))).isFalse();
  }
}
