package dev.profold.collector.dictionary;

/** Type of an attribute's values, as the engine sees it. */
public enum AttributeType {
  STRING,
  INT,
  DOUBLE,
  BOOL,
  /** A node of a nested path; the value is a global path-node id. */
  PATH
}
