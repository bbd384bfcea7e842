package dev.profold.client.internal.record;

/** Ways application code can misuse the API; each is counted and logged once. */
enum Misuse {
  CLOSED_TWICE,
  CLOSED_ON_OTHER_THREAD,
  UNBALANCED,
  ATTRIBUTE_TYPE_CHANGE,
  BAD_ARGUMENT,
  TABLE_FULL,
  /** The process-wide limit on contexts kept a region path or attribute value out. */
  CONTEXTS_FULL,
  /** The limit on distinct measurement names kept a measurement out; its values are dropped. */
  MEASUREMENTS_FULL,
  /**
   * The limit on distinct attribute keys kept a scoped attribute out; what it encloses records into
   * the enclosing context.
   */
  KEYS_FULL,
  /** A thread held the most open regions and scopes; further ones were not opened. */
  TOO_DEEP,
  /** A thread ended with regions open that no thread closed: their time is not recorded. */
  LEFT_OPEN
}
