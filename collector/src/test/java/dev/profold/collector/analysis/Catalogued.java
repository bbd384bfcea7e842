package dev.profold.collector.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

/**
 * Checks derived values against {@link DerivedValueNames}: each is listed there, with exactly the
 * labels listed. The producers' tests call it on what they derive, so that the list alert rules are
 * checked against cannot drift from what the producers make.
 */
final class Catalogued {
  private Catalogued() {}

  static List<DerivedValue> check(List<DerivedValue> values) {
    assertThat(values)
        .allSatisfy(
            v -> {
              assertThat(DerivedValueNames.names()).as("listed").contains(v.name());
              assertThat(v.labels().keySet())
                  .as("labels of %s", v.name())
                  .containsExactlyInAnyOrderElementsOf(DerivedValueNames.labelsOf(v.name()));
            });
    return values;
  }
}
