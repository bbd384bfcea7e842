package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Watches the records a query reads for the attributes it names ({@link Query#attributesRead}) that
 * none of them has: a misspelling, or an attribute the data does not carry. CalQL takes a missing
 * attribute as absent, so such a query runs and its columns come out empty; {@link #note} says why.
 * Not thread-safe.
 */
public final class MissingAttributes {
  /** Most attribute names a note lists. */
  private static final int NAMES_LISTED = 30;

  private final Set<String> missing;
  private final Set<String> seen = new TreeSet<>();
  private boolean anyRecord;

  public MissingAttributes(Query query) {
    this.missing = new LinkedHashSet<>(query.attributesRead());
  }

  /** One record the query read. */
  public void see(Map<String, ?> record) {
    anyRecord = true;
    if (!missing.isEmpty()) { // the names are listed only in a note, which needs a name missing
      missing.removeIf(record::containsKey);
      seen.addAll(record.keySet());
    }
  }

  /**
   * A note naming the attributes no record had, with those the records have, for records {@code
   * where} (such as {@code of scheme 'region'}) and with {@code hint} on what to check; empty when
   * there was no record or every attribute was there.
   */
  public String note(String where, String hint) {
    if (!anyRecord || missing.isEmpty()) {
      return "";
    }
    List<String> names = new ArrayList<>();
    for (String a : missing) {
      names.add("'" + a + "'");
    }
    List<String> have = new ArrayList<>(seen);
    String listed =
        have.size() <= NAMES_LISTED
            ? String.join(", ", have)
            : String.join(", ", have.subList(0, NAMES_LISTED))
                + ", and "
                + (have.size() - NAMES_LISTED)
                + " more";
    return "no record "
        + where
        + " has "
        + (names.size() == 1 ? "attribute " : "attributes ")
        + String.join(", ", names)
        + " (taken as absent: "
        + hint
        + "); "
        + "the records have: "
        + listed;
  }
}
