package dev.felix.offload.store;

import java.util.List;
import java.util.Optional;

/**
 * One page of a listing.
 *
 * @param entries the entries in ascending key order (UTF-8 byte order)
 * @param continuation the token that fetches the next page, empty on the last page
 */
public record ListPage(List<ObjectSummary> entries, Optional<String> continuation) {
    public ListPage {
        entries = List.copyOf(entries);
    }
}
