package dev.profold.collector.alert;

/** Where an alert stands. An inactive alert (condition false, never firing) has no state kept. */
public enum AlertState {
  /** The condition holds, but not yet for the rule's {@code for} evaluations. */
  PENDING,
  /** The condition held for {@code for} consecutive evaluations and still holds. */
  FIRING,
  /** It was firing and its condition stopped holding (or its series went): reported once. */
  RESOLVED;

  /** Lower-case name, as in metrics and JSON. */
  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
