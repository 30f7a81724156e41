package dev.felix.offload.manifest;

import java.util.Objects;

/**
 * What {@link Manifest#find(long)} answers for an offset.
 *
 * @param kind  which of the four cases it is
 * @param entry the entry holding the offset ({@link Kind#ENTRY}), the oldest entry ({@link Kind#BELOW}),
 *              the next entry above the offset ({@link Kind#GAP}), or null ({@link Kind#ABOVE})
 */
public record ManifestLookup(Kind kind, ManifestEntry entry) {

    /** The four answers. */
    public enum Kind {
        /** An entry holds the offset. */
        ENTRY,
        /** The offset is older than the oldest entry: remote retention removed it, or it was never copied. */
        BELOW,
        /**
         * The offset falls between two entries: a segment retention deleted while offload was off was
         * never copied. The entry is the next one above the gap.
         */
        GAP,
        /** No entry holds the offset or any later one: it is newer than the newest entry, or there are none. */
        ABOVE
    }

    public ManifestLookup {
        Objects.requireNonNull(kind, "kind");
        if ((kind == Kind.ABOVE) != (entry == null)) {
            throw new IllegalArgumentException(kind + (entry == null ? " needs an entry" : " has no entry"));
        }
    }

    static ManifestLookup holding(ManifestEntry entry) {
        return new ManifestLookup(Kind.ENTRY, entry);
    }

    static ManifestLookup below(ManifestEntry oldest) {
        return new ManifestLookup(Kind.BELOW, oldest);
    }

    static ManifestLookup gap(ManifestEntry next) {
        return new ManifestLookup(Kind.GAP, next);
    }

    static final ManifestLookup ABOVE = new ManifestLookup(Kind.ABOVE, null);
}
