package dev.profold.collector.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DerivedValueSourcesTest {
  @Test
  void concatenatesInOrderIntoAnImmutableList() {
    DerivedValue a = DerivedValue.of("a", Map.of(), 1);
    DerivedValue b = DerivedValue.of("b", Map.of("s", "x"), 2);
    List<DerivedValue> second = new ArrayList<>(List.of(b));
    DerivedValues all =
        DerivedValueSources.concat(
            List.of(() -> List.of(a), DerivedValueSources.none(), () -> second));
    assertThat(all.current()).containsExactly(a, b);
    second.add(a); // sources are asked at every call
    assertThat(all.current()).containsExactly(a, b, a);
    assertThatThrownBy(() -> all.current().add(b))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(DerivedValueSources.none().current()).isEmpty();
  }
}
