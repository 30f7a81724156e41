package dev.felix.offload.copy;

import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.LiveKeys;

import java.util.Objects;
import java.util.Optional;

/**
 * The one rule by which an object in the store may be deleted. Nothing deletes a segment object or
 * its index but through a {@link Permit}, and only this class makes permits.
 *
 * <p>An object may go only when it is the deleter's own ({@link KeyOwnership}: under the deleting
 * shard's prefix, named by no other live manifest, every live manifest readable) and one of these
 * holds:
 * <ul>
 *   <li>{@link Grounds#HELD_ELSEWHERE}: every offset it holds is held by the shard now, by local
 *       segments or by other objects its manifest names, checked against the shard's files
 *       ({@link HeldOffsets}), never assumed from the absence of a name;</li>
 *   <li>{@link Grounds#EXPIRED}: retention expired its entry by the shard's own limits, and the
 *       manifest saved without it says so;</li>
 *   <li>{@link Grounds#STREAM_DELETED}: the broker moved the shard under {@code .deleted/} (the stream
 *       was deleted by its owner);</li>
 *   <li>{@link Grounds#NAMED_BY_OPERATOR}: an operator named the shard in an explicit command
 *       ({@code forget-shard --yes}), or named keys without a node id, or their shard, saying no other
 *       replica needs them ({@code legacy-keys delete}, {@link #legacyKeyNamedByOperator}: the only
 *       grounds on which such a key goes);</li>
 *   <li>{@link Grounds#HOLDS_NO_RECORDS}: a segment's index (derived, rebuilt by readers from the
 *       segment), and only when its segment object is not being kept.</li>
 * </ul>
 * Anything else is kept ({@link Verdict.Kept}), and a segment object kept because nothing else
 * holds its offsets is {@link KeptReason#UNRECORDED_HISTORY}: reported, never deleted. Keeping costs
 * storage; deleting the only copy costs records.
 */
public final class ObjectRelease {

    /** Why an object may go. */
    public enum Grounds {
        HELD_ELSEWHERE("held-elsewhere"),
        EXPIRED("expired"),
        STREAM_DELETED("stream-deleted"),
        NAMED_BY_OPERATOR("named-by-operator"),
        HOLDS_NO_RECORDS("holds-no-records");

        private final String label;

        Grounds(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** Why an object stays. */
    public enum KeptReason {
        /** Its offsets are held nowhere else and nothing expired them: possibly the only copy of records. */
        UNRECORDED_HISTORY("unrecorded-history"),
        /** Not the deleter's key (see {@link KeyOwnership.Refusal}). */
        NOT_OWNED("not-owned"),
        /** What offsets it holds could not be learnt. */
        OFFSETS_UNKNOWN("offsets-unknown"),
        /** An index whose segment object is kept. */
        SEGMENT_KEPT("segment-kept");

        private final String label;

        KeptReason(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** Leave to delete one key, on stated grounds. Made only here. */
    public static final class Permit {
        private final String key;
        private final Grounds grounds;

        private Permit(String key, Grounds grounds) {
            this.key = Objects.requireNonNull(key, "key");
            this.grounds = Objects.requireNonNull(grounds, "grounds");
        }

        public String key() {
            return key;
        }

        public Grounds grounds() {
            return grounds;
        }

        @Override
        public String toString() {
            return key + " (" + grounds.label() + ")";
        }
    }

    /** What the rule says of one key. */
    public sealed interface Verdict {
        String key();

        /** The object may go. */
        record Deletable(Permit permit) implements Verdict {
            @Override
            public String key() {
                return permit.key();
            }
        }

        /**
         * The object stays.
         *
         * @param refusal the ownership refusal, for {@link KeptReason#NOT_OWNED}; null otherwise
         */
        record Kept(String key, KeptReason reason, KeyOwnership.Refusal refusal, String detail) implements Verdict {
            public Kept {
                Objects.requireNonNull(key, "key");
                Objects.requireNonNull(reason, "reason");
                Objects.requireNonNull(detail, "detail");
            }
        }
    }

    private final KeyOwnership ownership;
    private final LiveKeys live;

    /**
     * @param ownership which keys a shard may delete at all
     * @param live      what the root's live manifests name, read under the root's lock
     */
    public ObjectRelease(KeyOwnership ownership, LiveKeys live) {
        this.ownership = Objects.requireNonNull(ownership, "ownership");
        this.live = Objects.requireNonNull(live, "live");
    }

    /**
     * For a segment object of live shard {@code shard} holding {@code first..last}: deletable when
     * {@code held} (read from the shard's files now, without this object) holds every one of them.
     */
    public Verdict heldElsewhere(String shard, String key, long first, long last, HeldOffsets held) {
        Optional<KeyOwnership.Refusal> refusal = ownership.refusal(shard, key, live);
        if (refusal.isPresent()) {
            return notOwned(key, refusal.get());
        }
        Long missing = held.firstNotHeld(first, last);
        if (missing != null) {
            return new Verdict.Kept(key, KeptReason.UNRECORDED_HISTORY, null, "offsets " + range(first, last)
                    + " are held by no local segment and no other entry (first not held: "
                    + Long.toUnsignedString(missing) + ")");
        }
        return new Verdict.Deletable(new Permit(key, Grounds.HELD_ELSEWHERE));
    }

    /** A segment object whose offsets could not be learnt: kept. */
    public static Verdict offsetsUnknown(String key, String why) {
        return new Verdict.Kept(key, KeptReason.OFFSETS_UNKNOWN, null, why);
    }

    /**
     * For the objects of an entry that retention expired: deletable when {@code before} held
     * {@code entry}, {@code after} (the manifest saved) does not, and nothing at or below its offsets
     * stayed in {@code after} (retention expires from the oldest up).
     */
    public Verdict expired(String shard, String key, ManifestEntry entry, Manifest before, Manifest after) {
        if (!before.entries().contains(entry) || after.entries().contains(entry)
                || after.oldestEntry().map(o -> Long.compareUnsigned(o.baseOffset(), entry.lastOffset()) <= 0).orElse(false)) {
            throw new IllegalArgumentException(shard + ": " + entry + " was not expired by the manifest saved");
        }
        Optional<KeyOwnership.Refusal> refusal = ownership.refusal(shard, key, live);
        return refusal.isPresent() ? notOwned(key, refusal.get()) : new Verdict.Deletable(new Permit(key, Grounds.EXPIRED));
    }

    /**
     * For a key retention recorded as expired in an earlier pass (its journal) whose delete did not
     * happen: deletable while no live manifest names it, the expiring shard's included (an entry the
     * broker's manifest still holds was not expired after all).
     */
    public Verdict expiredEarlier(String shard, String key) {
        Optional<KeyOwnership.Refusal> refusal = ownership.refusalForDeletedShard(shard, key, live);
        return refusal.isPresent() ? notOwned(key, refusal.get()) : new Verdict.Deletable(new Permit(key, Grounds.EXPIRED));
    }

    /** For an object of a shard the broker moved under {@code .deleted/}. */
    public Verdict streamDeleted(String shard, String key) {
        Optional<KeyOwnership.Refusal> refusal = ownership.refusalForDeletedShard(shard, key, live);
        return refusal.isPresent() ? notOwned(key, refusal.get())
                : new Verdict.Deletable(new Permit(key, Grounds.STREAM_DELETED));
    }

    /**
     * For an object of {@code shard} that an operator asked to delete by naming the shard; no live
     * manifest may name it (forget-shard deletes what the manifests do not name).
     */
    public Verdict namedByOperator(String shard, String key) {
        Optional<KeyOwnership.Refusal> refusal = ownership.refusalForDeletedShard(shard, key, live);
        return refusal.isPresent() ? notOwned(key, refusal.get())
                : new Verdict.Deletable(new Permit(key, Grounds.NAMED_BY_OPERATOR));
    }

    /**
     * For a key of {@code shard} without a node id (0.6.0-preview.3) that an operator named for
     * deletion, by key or by its shard, saying that no other replica of the shard needs it
     * ({@code felix-offload legacy-keys delete --no-other-replica-needs-them}): the only way such a
     * key ever goes, since {@link KeyOwnership} refuses it to every other deleter
     * ({@link KeyOwnership.Refusal#LEGACY_KEY}). No live manifest of this root may name it, and every
     * one must be readable ({@link KeyOwnership#refusalOfNamedLegacyKey}). The caller makes no
     * permit's delete before the operator's confirmation.
     */
    public Verdict legacyKeyNamedByOperator(String shard, String key) {
        Optional<KeyOwnership.Refusal> refusal = ownership.refusalOfNamedLegacyKey(shard, key, live);
        return refusal.isPresent() ? notOwned(key, refusal.get())
                : new Verdict.Deletable(new Permit(key, Grounds.NAMED_BY_OPERATOR));
    }

    /** For a segment's index object, given what was decided of its segment object (null: none is listed). */
    public Verdict index(String shard, String indexKey, Verdict segment) {
        if (segment instanceof Verdict.Kept kept) {
            return new Verdict.Kept(indexKey, KeptReason.SEGMENT_KEPT, null, "its segment " + kept.key() + " is kept ("
                    + kept.reason().label() + ")");
        }
        Optional<KeyOwnership.Refusal> refusal = ownership.refusalForDeletedShard(shard, indexKey, live);
        return refusal.isPresent() ? notOwned(indexKey, refusal.get())
                : new Verdict.Deletable(new Permit(indexKey, Grounds.HOLDS_NO_RECORDS));
    }

    /**
     * For the object an upload of this process just put at its own key, whose verification failed,
     * while the local segment it was read from still holds its records: deleted before the upload is
     * made again. No other key is ever this.
     */
    public static Permit ownFailedUpload(String key, java.nio.file.Path localSegment) {
        if (!java.nio.file.Files.isRegularFile(localSegment)) {
            throw new IllegalStateException(key + ": the local segment " + localSegment + " is gone; its failed copy "
                    + "is kept");
        }
        return new Permit(key, Grounds.HELD_ELSEWHERE);
    }

    private static Verdict notOwned(String key, KeyOwnership.Refusal refusal) {
        return new Verdict.Kept(key, KeptReason.NOT_OWNED, refusal, "not the deleter's: " + refusal);
    }

    static String range(long first, long last) {
        return Long.toUnsignedString(first) + ".." + Long.toUnsignedString(last);
    }
}
