package dev.profold.client.internal.record;

/** Ways application code can misuse the API; each is counted and logged once. */
enum Misuse {
  CLOSED_TWICE,
  CLOSED_ON_OTHER_THREAD,
  UNBALANCED,
  ATTRIBUTE_TYPE_CHANGE,
  BAD_ARGUMENT,
  TABLE_FULL
}
